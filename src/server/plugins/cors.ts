import type { FastifyInstance } from 'fastify';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { AppContext } from '../../services/context.js';

const ALLOWED_HEADERS = ['Origin', 'Content-Type', 'Accept', 'Authorization', 'x-osm-api-key', 'Last-Event-ID', 'x-osm-csrf'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'];

/** What `server.cors_allowed_origins` allows: nobody, any origin without credentials, or a list of exact origins. */
export type CorsPolicy = { kind: 'none' } | { kind: 'any' } | { kind: 'list'; origins: Set<string> };

/**
 * Reads `server.cors_allowed_origins` (comma-separated text; the schema turns a YAML list into that).
 * Empty and the old default `reflect-origin` mean no cross-origin access: reflecting whatever Origin
 * a browser sends, with credentials, lets any web page drive the API with the user's cookie.
 * `*` allows every origin but never with credentials. `null` is never an allowed origin (sandboxed
 * iframes and file:// pages send it, so allowing it allows everyone).
 */
export function corsPolicy(setting: unknown): CorsPolicy {
  const entries = String(setting ?? '')
    .split(',')
    .map((x) => x.trim().replace(/\/+$/, ''))
    .filter((x) => x !== '' && x.toLowerCase() !== 'reflect-origin' && x.toLowerCase() !== 'null');
  if (entries.length === 0) return { kind: 'none' };
  if (entries.includes('*')) return { kind: 'any' };
  return { kind: 'list', origins: new Set(entries.map((o) => o.toLowerCase())) };
}

/** The per-request options of @fastify/cors for `origin` under `policy`. */
export function corsOptionsFor(origin: string | undefined, policy: CorsPolicy): FastifyCorsOptions {
  const common = { methods: METHODS, allowedHeaders: ALLOWED_HEADERS, maxAge: 600, strictPreflight: false };
  if (!origin || policy.kind === 'none') return { origin: false };
  if (policy.kind === 'any') return { ...common, origin: '*', credentials: false };
  if (!policy.origins.has(origin.toLowerCase())) return { origin: false };
  // The origin is echoed only because it is listed exactly; credentials only for listed origins.
  return { ...common, origin, credentials: true };
}

/**
 * CORS through @fastify/cors, decided per request from the live settings (a hot reload applies to
 * the next request). Preflights of allowed origins are answered in the hook, before authentication
 * (browsers never send credentials on a preflight); every other OPTIONS request is an ordinary
 * protected request.
 */
export async function registerCors(server: FastifyInstance, app: AppContext): Promise<void> {
  await server.register(cors, {
    hideOptionsRoute: true,
    delegator: (req, cb) => {
      const setting = (app.settings().settings.server as { cors_allowed_origins?: unknown }).cors_allowed_origins;
      cb(null, corsOptionsFor(req.headers.origin, corsPolicy(setting)));
    },
  });
}
