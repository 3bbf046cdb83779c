/**
 * The web dashboard at `/`: the built app from dist/web, or a `server.ui_path` folder holding an
 * `index.html` (another build of a web UI on the same origin). Static files are served through
 * @fastify/static (range, ETag, pre-compressed `.br`/`.gz` twins); unknown page-like paths fall back
 * to the app's index so client-side routes survive a reload. API paths never reach the fallback:
 * `/osm/api/*` has a protected catch-all answering the usual 401/404 envelope.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import { errors } from '../../errors.js';
import type { AppContext } from '../../services/context.js';
import { hasIndex, resolveUiFile } from './ui-files.js';
import { MAX_PARAM_LENGTH } from './errors.js';

/** Where `npm run build` puts the dashboard (same place from src/ under vitest and from dist/). */
export const BUILT_UI_DIR = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

/**
 * The dashboard's policy: scripts, styles and data from this origin only, no inline script, no
 * framing. Style attributes set from script (CSSOM) are not inline markup and stay allowed.
 */
export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * A `server.ui_path` build is someone else's code: static exports (Next.js among them) carry inline
 * bootstrap scripts, so inline code is allowed there, but still nothing from another origin and
 * no framing.
 */
export const CUSTOM_UI_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

const YEAR = 365 * 24 * 3600;

export interface UiOptions {
  /** The built dashboard folder (tests point it at a fixture). */
  builtDir?: string;
}

function setSecurityHeaders(reply: FastifyReply, custom: boolean): void {
  reply
    .header('content-security-policy', custom ? CUSTOM_UI_CSP : UI_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
}

/** Hashed build outputs never change under their name; everything else is revalidated. */
function cacheControlOf(rel: string): string {
  return /^(static|_next\/static)\//.test(rel) ? `public, max-age=${YEAR}, immutable` : 'no-cache';
}

/**
 * The dashboard's client-side routes (web/src/routes.ts): `/<page>` and `/<page>/*` answer the
 * app's index. Listed rather than a catch-all so an unknown path stays what it always was: 401
 * without credentials, then 404 (deny by default).
 */
export const DASHBOARD_PAGES = ['login', 'overview', 'runs', 'workflows', 'workspaces', 'assets', 'vulnerabilities', 'schedules', 'events', 'workers', 'settings'] as const;

/** How a UI route answers a path that is no file: the index (a page), or 404. */
type Fallback = 'page' | 'file-only' | 'custom-only';

/**
 * Registers the static file sender and the dashboard's public routes (`/`, `/static/*`, the pages),
 * a catch-all `/*` that is public only (route config `publicWhen`, see auth.ts) while `server.ui_path` holds another UI (whose routes we
 * cannot know), and the protected `/osm/api/*` catch-all.
 */
export async function registerUi(server: FastifyInstance, app: AppContext, opts: UiOptions = {}): Promise<void> {
  const builtDir = opts.builtDir ?? BUILT_UI_DIR;
  // Only the reply decorator: routes are ours, so the fallback and the checks stay in one place.
  await server.register(fastifyStatic, { root: builtDir, serve: false, preCompressed: true, dotfiles: 'deny', index: false, cacheControl: false, etag: true, lastModified: true });

  const customDir = (): string | undefined => {
    const dir = (app.settings().settings.server as { ui_path?: string }).ui_path;
    return hasIndex(dir) ? dir : undefined;
  };

  const handler = (fallback: Fallback) => async (req: FastifyRequest, reply: FastifyReply) => {
    const custom = customDir();
    const dir = custom ?? builtDir;
    const path = req.url.split('?')[0]!;
    if (!custom && fallback === 'page' && !hasIndex(dir)) throw errors.dashboardNotBuilt();
    const found = resolveUiFile(dir, req.url);
    const pageOk = fallback === 'page' || (fallback === 'custom-only' && custom !== undefined && !/^\/+(osm|api)([/;.]|$)/i.test(path));
    // A page route answers its index even for a name with a dot (`/workspaces/example.com`).
    const rel = found.kind === 'file' ? found.rel : found.kind === 'fallback' && pageOk ? found.rel : found.kind === 'missing' && fallback === 'page' ? found.fallback : undefined;
    if (rel) {
      setSecurityHeaders(reply, custom !== undefined);
      reply.header('cache-control', cacheControlOf(rel)).header('vary', 'accept-encoding');
      return reply.sendFile(rel, dir);
    }
    throw errors.notFound(`Route ${req.method} ${path} not found`);
  };
  server.get('/', handler('page'));
  server.get('/static/*', handler('file-only'));
  for (const page of DASHBOARD_PAGES) {
    server.get(`/${page}`, handler('page'));
    server.get(`/${page}/*`, handler('page'));
  }
  // Another UI's own paths (clean URLs, its dynamic routes): public only while it is configured.
  const customOnly = handler('custom-only');
  server.get('/*', { config: { publicWhen: () => customDir() !== undefined } }, async (req, reply) => customOnly(req, reply));

  // Unknown API paths keep the API's answers (401 without credentials, then 404), never an index.
  server.get('/osm/api/*', async (req) => {
    const path = req.url.split('?')[0]!;
    // A wildcard takes any length: a segment the router refused as a parameter stays a 414.
    if (path.split('/').some((seg) => seg.length > MAX_PARAM_LENGTH)) throw errors.paramTooLong(MAX_PARAM_LENGTH);
    throw errors.notFound(`Route ${req.method} ${path} not found`);
  });
}
