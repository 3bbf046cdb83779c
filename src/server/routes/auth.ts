import { z } from 'zod';
import { errors } from '../../errors.js';
import { defineRoute } from '../route.js';
import { signToken, safeEqual } from '../plugins/jwt.js';
import { SESSION_COOKIE } from '../plugins/auth.js';
import type { RegisterRoutes } from '../app.js';

const loginBody = z.object({ username: z.string(), password: z.string() });

/** Cookie attributes of the session: HttpOnly, SameSite=Lax, Path=/, expiry = token lifetime. */
function sessionCookie(token: string, maxAgeSec: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}`;
}

/** POST /osm/api/login and /osm/api/logout (public). */
export const registerAuthRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/login', summary: 'Log in; returns a JWT and sets the session cookie', tags: ['auth'], public: true, sideEffects: 'writes',
    body: loginBody, bodyError: 'Invalid request body',
    responses: { 200: { description: 'Token', schema: z.object({ token: z.string() }) }, 401: { description: 'Invalid credentials' }, 429: { description: 'Too many failed login attempts (Retry-After header)' } },
    handler: async ({ body, reply, req }) => {
      const srv = app.settings().settings.server;
      const minutes = Number(srv.jwt?.expiration_minutes ?? 1440) || 1440;
      let username = body.username;
      if (!deps.noAuth) {
        await deps.loginThrottle.check(req, username);
        const users = (srv.simple_user_map_key ?? {}) as Record<string, unknown>;
        const expected = Object.prototype.hasOwnProperty.call(users, username) ? String(users[username] ?? '') : undefined;
        // Compare even for unknown users so timing does not reveal which names exist.
        const ok = safeEqual(body.password, expected ?? '\u0000unknown-user') && expected !== undefined && expected !== '';
        if (!ok) {
          await deps.loginThrottle.failed(req, username);
          throw errors.invalidCredentials();
        }
      } else if (!username) {
        username = 'anonymous';
      }
      const token = await signToken(username, String(srv.jwt?.secret_signing_key ?? ''), minutes).catch(() => {
        throw errors.tokenGeneration();
      });
      reply.header('set-cookie', sessionCookie(token, minutes * 60));
      return { token };
    },
  });
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/logout', summary: 'Log out: clears the session cookie', tags: ['auth'], public: true, sideEffects: 'writes',
    handler: ({ reply }) => {
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`);
      return { message: 'Logged out' };
    },
  });
};
