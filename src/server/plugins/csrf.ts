/**
 * Cross-site request forgery guard. The session cookie is SameSite=Lax, but "site" ignores ports:
 * a page on another port of the same host (or a sibling subdomain) is same-site, so its form posts
 * carry the cookie. A browser only lets a page add a custom header to a request of its own origin
 * (or of an origin CORS allows), so a state-changing request authenticated by the cookie alone must
 * carry `x-osm-csrf`; the dashboard sends it on every such request. Header credentials
 * (`authorization`, `x-osm-api-key`) cannot be forged by a form and need nothing more. Under
 * `--no-auth` there is no credential at all: there, browsers' own cross-site markers are refused.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';

export const CSRF_HEADER = 'x-osm-csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function present(v: string | string[] | undefined): boolean {
  return Array.isArray(v) ? v.some((x) => x !== '') : v !== undefined && v !== '';
}

/** True when a browser says the request comes from another site or origin. */
export function looksCrossSite(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = req.headers.origin;
  if (!origin) return false;
  const host = req.headers.host;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/**
 * An onRequest hook, registered after the auth hook (which sets `req.principal` on every
 * non-public route): refuses a state-changing request whose only credential is the session
 * cookie unless it carries `x-osm-csrf`, and under `--no-auth` a cross-site one without it.
 */
export function registerCsrf(server: FastifyInstance, opts: { noAuth: boolean }): void {
  server.addHook('onRequest', async (req) => {
    if (SAFE_METHODS.has(req.method)) return;
    if (!req.principal) return; // public route (login, logout, keyed webhook trigger)
    if (present(req.headers[CSRF_HEADER])) return;
    if (present(req.headers.authorization) || present(req.headers['x-osm-api-key'])) return;
    if (opts.noAuth) {
      if (looksCrossSite(req)) throw errors.crossSiteRequest();
      return;
    }
    throw errors.csrfHeaderMissing();
  });
}
