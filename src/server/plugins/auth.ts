import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import type { AppContext } from '../../services/context.js';
import { accessOf, serverWide } from '../access.js';
import { roleAtLeast } from '../../auth/roles.js';
import { isSettingsApiKey, NO_AUTH_PRINCIPAL, principalOfJwt, principalOfToken, type Principal } from '../../auth/principal.js';
import { looksLikeApiToken } from '../../auth/api-tokens.js';

export { unusableKey } from '../../auth/principal.js';

export const SESSION_COOKIE = 'osmedeus_session';

/** Cookie header → map (tiny parser: name=value pairs, URL-decoded values). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

/** The token in the session cookie: a raw JWT or the UI's `{"token": "..."}` JSON form. */
export function cookieToken(req: FastifyRequest): string | undefined {
  const raw = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (!raw) return undefined;
  if (raw.startsWith('{')) {
    try {
      const j = JSON.parse(raw) as { token?: unknown };
      if (typeof j.token === 'string' && j.token) return j.token;
    } catch {
      /* fall through */
    }
  }
  return raw;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling (set by the auth hook on every non-public route). */
    principal?: Principal;
  }
}

/** Route config read by the auth hook (set on the few plain fastify routes that need it). */
export interface RouteAuthConfig {
  /** Public only while this returns true (read per request, e.g. `server.metrics_public`). */
  publicWhen?: () => boolean;
}

/** The access rule of the route fastify matched (src/server/access.ts); never derived from the URL text. */
export function routeAccess(req: FastifyRequest) {
  const cfg = req.routeOptions?.config as RouteAuthConfig | undefined;
  const access = accessOf(req.method, req.routeOptions?.url);
  if (access !== 'public' && typeof cfg?.publicWhen === 'function' && cfg.publicWhen() === true) return 'public' as const;
  return access;
}

/** True when the route fastify matched is public (unmatched requests are protected). */
export function isPublicRoute(req: FastifyRequest): boolean {
  return routeAccess(req) === 'public';
}

/**
 * The principal of a request's credentials, or a 401. Order: the `x-osm-api-key` header (the
 * settings' key when `server.enabled_auth_api`, or a personal API token), then
 * `Authorization: Bearer` (a personal API token or a session JWT), then the session cookie.
 */
export async function authenticate(app: AppContext, req: FastifyRequest): Promise<Principal> {
  const keyHeader = req.headers['x-osm-api-key'];
  const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
  if (isSettingsApiKey(app, key)) return { kind: 'api-key', name: 'api-key', role: 'admin', orgs: [] };
  if (looksLikeApiToken(key)) {
    const p = await principalOfToken(app, key);
    if (p) return p;
  }
  const authHeader = req.headers.authorization;
  let token: string | undefined;
  if (authHeader !== undefined && authHeader !== '') {
    const parts = authHeader.split(' ');
    if (parts.length !== 2 || parts[0] !== 'Bearer' || !parts[1]) throw errors.invalidAuthFormat();
    token = parts[1];
  } else {
    token = cookieToken(req);
  }
  if (!token) {
    // An API key was sent but is wrong: say so rather than asking for a header the client did not mean to use.
    if (key !== undefined) throw errors.invalidApiKey();
    throw errors.missingAuthHeader();
  }
  if (looksLikeApiToken(token)) {
    const p = await principalOfToken(app, token);
    if (p) return p;
    throw errors.invalidApiKey();
  }
  const p = await principalOfJwt(app, token);
  if (!p) throw errors.invalidToken();
  return p;
}

/**
 * Authentication and authorisation, deny by default: every route needs credentials unless the
 * access table says it is public, and the caller's role must reach the route's role (403 naming
 * the missing role otherwise). Decided on the matched route, never on the URL text. Every check
 * reads the live settings and users, so a hot reload, a revoked token or a role change applies to
 * the next request. `--no-auth` makes every caller an unbound admin.
 */
export function registerAuth(server: FastifyInstance, app: AppContext, opts: { noAuth: boolean }): void {
  server.addHook('onRequest', async (req) => {
    const access = routeAccess(req);
    if (access === 'public') return;
    if (opts.noAuth) {
      req.principal = NO_AUTH_PRINCIPAL;
      return;
    }
    const principal = await authenticate(app, req);
    req.principal = principal;
    if (!roleAtLeast(principal.role, access)) throw errors.forbidden(access, principal.role);
    if (principal.orgs.length > 0 && serverWide(req.method, req.routeOptions?.url)) throw errors.boundForbidden();
  });
}
