/**
 * Who is calling: the credential of a request resolved to a principal with a role and the orgs it
 * is bound to. Built-in administrators (the settings' `auth_api_key` and `simple_user_map_key`
 * logins, and `--no-auth`) are unbound admins, so existing clients behave exactly as before.
 */
import { errors } from '../errors.js';
import type { AppContext } from '../services/context.js';
import type { TokenRecord, UserRecord } from '../store/access.js';
import { hashApiToken, looksLikeApiToken } from './api-tokens.js';
import type { Role } from './roles.js';
import { safeEqual, verifyToken } from '../server/plugins/jwt.js';

export type PrincipalKind = 'api-key' | 'settings-user' | 'user' | 'token' | 'no-auth';

export interface Principal {
  kind: PrincipalKind;
  /** User name, token name, or `api-key` / `anonymous`. */
  name: string;
  role: Role;
  /** Org uuids the credential is bound to; empty = every org. */
  orgs: string[];
  tokenId?: number;
}

const PLACEHOLDERS = new Set(['null', 'undefined', 'nil']);

/** True for API key values that are never accepted: empty, whitespace, null/undefined/nil. */
export function unusableKey(value: string | undefined): boolean {
  if (value === undefined) return true;
  const t = value.trim();
  return t === '' || PLACEHOLDERS.has(t.toLowerCase());
}

/** The built-in admin of `--no-auth`. */
export const NO_AUTH_PRINCIPAL: Principal = Object.freeze({ kind: 'no-auth', name: 'anonymous', role: 'admin', orgs: [] }) as Principal;

/** True when `username` is a login of the settings file (`server.simple_user_map_key`). */
export function isSettingsUser(app: AppContext, username: string): boolean {
  const users = (app.settings().settings.server.simple_user_map_key ?? {}) as Record<string, unknown>;
  return Object.prototype.hasOwnProperty.call(users, username) && String(users[username] ?? '') !== '';
}

export function principalOfUser(user: UserRecord): Principal {
  return { kind: 'user', name: user.username, role: user.role, orgs: user.orgs };
}

/** A personal API token → principal; expired or revoked → 401 with a clear message; unknown → undefined. */
export async function principalOfToken(app: AppContext, secret: string, now = Date.now()): Promise<Principal | undefined> {
  if (!looksLikeApiToken(secret)) return undefined;
  const token: TokenRecord | undefined = await app.repos.access.tokenByHash(hashApiToken(secret));
  if (!token) return undefined;
  if (token.revoked_at) throw errors.tokenRevoked(token.name);
  if (token.expires_at && Date.parse(token.expires_at) <= now) throw errors.tokenExpired(token.name, token.expires_at);
  await app.repos.access.touchToken(token.id, new Date(now).toISOString());
  return { kind: 'token', name: token.name, role: token.role, orgs: token.orgs, tokenId: token.id };
}

/** True when `key` is the settings' API key (and API key authentication is enabled). */
export function isSettingsApiKey(app: AppContext, key: string | undefined): boolean {
  const srv = app.settings().settings.server;
  if (!srv.enabled_auth_api) return false;
  const configured = String(srv.auth_api_key ?? '');
  return !unusableKey(key) && !unusableKey(configured) && safeEqual(key!, configured);
}

/**
 * A session JWT → principal. The username must still exist (a database user or a settings login),
 * the token's version must be current (logout and password changes bump it), and a database
 * user's role and orgs are read now, so a role change applies to the next request.
 */
export async function principalOfJwt(app: AppContext, jwt: string): Promise<Principal | undefined> {
  const claims = await verifyToken(jwt, String(app.settings().settings.server.jwt?.secret_signing_key ?? ''));
  if (!claims) return undefined;
  const version = typeof claims.tv === 'number' ? claims.tv : 1;
  if (version !== (await app.repos.access.tokenVersion(claims.username))) return undefined;
  const user = await app.repos.access.getUser(claims.username);
  if (user) return principalOfUser(user);
  if (isSettingsUser(app, claims.username)) return { kind: 'settings-user', name: claims.username, role: 'admin', orgs: [] };
  return undefined;
}
