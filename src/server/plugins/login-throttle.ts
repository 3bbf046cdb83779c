import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import { errors } from '../../errors.js';

/** Failed logins allowed per (username, client address) in one window before 429. */
export const USER_ADDRESS_FAILURES = 5;
export const USER_ADDRESS_WINDOW_MS = 60_000;
/** Failed logins allowed per client address (any username) in one window before 429. */
export const ADDRESS_FAILURES = 30;
export const ADDRESS_WINDOW_MS = 15 * 60_000;

const LOGIN_USER = Symbol('osm.loginUser');
type WithUser = FastifyRequest & { [LOGIN_USER]?: string };

/** Throttles failed logins; `check` before verifying a password, `failed` after a wrong one. */
export interface LoginThrottle {
  check(req: FastifyRequest, username: string): Promise<void>;
  failed(req: FastifyRequest, username: string): Promise<void>;
}

/**
 * Login throttling on @fastify/rate-limit's limiters, counting failures only (a user who types the
 * right password is never slowed down by their own successes):
 * - per (username, client address): 5 failures a minute, then 429 with `Retry-After`; every attempt
 *   while limited doubles the advertised wait (exponential backoff) and restarts the window;
 * - per client address, whatever the username: 30 failures in 15 minutes (password spraying).
 * Both keys include the client address, so another address can never lock the real user out.
 * A distributed guess of one username from many addresses is slowed by the password hash, not
 * locked (docs/security.md).
 */
export async function registerLoginThrottle(server: FastifyInstance): Promise<LoginThrottle> {
  await server.register(rateLimit, { global: false });
  const address = (req: FastifyRequest) => normalizeIP(req.ip);
  const perUserAddress = server.createRateLimit({
    max: USER_ADDRESS_FAILURES,
    timeWindow: USER_ADDRESS_WINDOW_MS,
    keyGenerator: (req) => `login:user:${(req as WithUser)[LOGIN_USER] ?? ''}|${address(req)}`,
    // Not in the option type of createRateLimit, but read by its store (LocalStore.child).
    ...({ exponentialBackoff: true } as object),
  });
  const perAddress = server.createRateLimit({
    max: ADDRESS_FAILURES,
    timeWindow: ADDRESS_WINDOW_MS,
    keyGenerator: (req) => `login:addr:${address(req)}`,
  });
  const limiters = [perUserAddress, perAddress];
  return {
    async check(req, username) {
      (req as WithUser)[LOGIN_USER] = username.toLowerCase();
      let wait = 0;
      for (const limiter of limiters) {
        const peek = await limiter(req, { increment: false });
        // Only failures are counted, so the limit is reached when no failure is left.
        if (peek.isAllowed || peek.remaining > 0) continue;
        // Trying again while limited extends the wait (backoff); the answer names the wait.
        const now = await limiter(req);
        wait = Math.max(wait, now.isAllowed ? 0 : now.ttlInSeconds);
      }
      if (wait > 0) throw errors.tooManyLogins(wait);
    },
    async failed(req, username) {
      (req as WithUser)[LOGIN_USER] = username.toLowerCase();
      for (const limiter of limiters) await limiter(req);
    },
  };
}
