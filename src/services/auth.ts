/**
 * Logins and sessions: database users (scrypt hashes) and the settings' own logins
 * (`server.simple_user_map_key`, kept for existing clients and the reference web UI), session JWTs
 * carrying the user's current token version, and logout revoking that user's sessions.
 */
import { errors } from '../errors.js';
import { dummyHash, verifyPassword } from '../auth/passwords.js';
import { principalOfJwt } from '../auth/principal.js';
import { safeEqual, signToken } from '../server/plugins/jwt.js';
import type { AppContext } from './context.js';

/** True when `password` is right for `username` (a database user first, then a settings login). */
export async function checkLogin(app: AppContext, username: string, password: string): Promise<boolean> {
  const user = await app.repos.access.getUser(username);
  if (user) return verifyPassword(password, user.password_hash);
  const users = (app.settings().settings.server.simple_user_map_key ?? {}) as Record<string, unknown>;
  const expected = Object.prototype.hasOwnProperty.call(users, username) ? String(users[username] ?? '') : undefined;
  if (expected !== undefined && expected !== '') return safeEqual(password, expected);
  // Unknown user: spend the time a database user's check would, so timing does not tell names apart.
  await verifyPassword(password, await dummyHash());
  return false;
}

/** A session JWT for `username` (lifetime `server.jwt.expiration_minutes`) and its lifetime in seconds. */
export async function issueSession(app: AppContext, username: string): Promise<{ token: string; maxAgeSec: number }> {
  const srv = app.settings().settings.server;
  const minutes = Number(srv.jwt?.expiration_minutes ?? 1440) || 1440;
  const tv = await app.repos.access.tokenVersion(username);
  const token = await signToken(username, String(srv.jwt?.secret_signing_key ?? ''), minutes, Date.now(), { tv }).catch(() => {
    throw errors.tokenGeneration();
  });
  return { token, maxAgeSec: minutes * 60 };
}

/**
 * Logout: when the request carries a valid session JWT, every JWT issued to that user so far stops
 * working (its token version is bumped). Returns the user name, or undefined when no valid session
 * was presented (the cookie is cleared either way).
 */
export async function endSession(app: AppContext, jwt: string | undefined): Promise<string | undefined> {
  if (!jwt) return undefined;
  const p = await principalOfJwt(app, jwt);
  if (!p) return undefined;
  await app.repos.access.bumpTokenVersion(p.name);
  return p.name;
}
