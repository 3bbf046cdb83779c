import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import type { AppContext } from '../../services/context.js';
import { safeEqual, verifyToken, type OsmClaims } from './jwt.js';

export const SESSION_COOKIE = 'osmedeus_session';
const PLACEHOLDERS = new Set(['null', 'undefined', 'nil']);

/** True for API key values that are never accepted: empty, whitespace, null/undefined/nil. */
export function unusableKey(value: string | undefined): boolean {
  if (value === undefined) return true;
  const t = value.trim();
  return t === '' || PLACEHOLDERS.has(t.toLowerCase());
}

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
function cookieToken(req: FastifyRequest): string | undefined {
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
    user?: OsmClaims | { username: string; via: 'api-key' | 'no-auth' };
  }
}

/** Route config read by the auth hook (set by `defineRoute` and the few plain fastify routes). */
export interface RouteAuthConfig {
  /** Public routes need no credentials (the spec's list: health, server info, login, logout …). */
  public?: boolean;
  /** Public only while this returns true (read per request, e.g. `server.metrics_public`). */
  publicWhen?: () => boolean;
}

/**
 * True when the route fastify matched is declared public. The decision is made on the matched
 * route's own config, never on the URL text: `/%6fsm/api/runs`, `//osm/api/runs` or
 * `/osm/api/runs;x` reach a protected route (or no route) and are treated as such. Requests that
 * match no route (404) are protected too, so an unknown path answers 401 without credentials.
 */
export function isPublicRoute(req: FastifyRequest): boolean {
  const cfg = req.routeOptions?.config as RouteAuthConfig | undefined;
  if (!cfg) return false;
  if (cfg.public === true) return true;
  return typeof cfg.publicWhen === 'function' && cfg.publicWhen() === true;
}

/**
 * Authentication (spec "Authentication"), deny by default: every route needs credentials unless
 * its definition says it is public. API key header first when `server.enabled_auth_api`, then a
 * Bearer JWT or the session cookie. Every check reads the live settings, so a hot reload of keys,
 * secrets and lifetimes applies to the next request. `--no-auth` opens everything.
 */
export function registerAuth(server: FastifyInstance, app: AppContext, opts: { noAuth: boolean }): void {
  server.addHook('onRequest', async (req) => {
    if (isPublicRoute(req)) return;
    if (opts.noAuth) {
      req.user = { username: 'anonymous', via: 'no-auth' };
      return;
    }
    const server_ = app.settings().settings.server;
    const keyHeader = req.headers['x-osm-api-key'];
    const key = Array.isArray(keyHeader) ? keyHeader[0] : keyHeader;
    if (server_.enabled_auth_api) {
      const configured = String(server_.auth_api_key ?? '');
      if (!unusableKey(key) && !unusableKey(configured) && safeEqual(key!, configured)) {
        req.user = { username: 'api-key', via: 'api-key' };
        return;
      }
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
      if (server_.enabled_auth_api && key !== undefined) throw errors.invalidApiKey();
      throw errors.missingAuthHeader();
    }
    const claims = await verifyToken(token, String(server_.jwt?.secret_signing_key ?? ''));
    if (!claims) throw errors.invalidToken();
    req.user = claims;
  });
}
