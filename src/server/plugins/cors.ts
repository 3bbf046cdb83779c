import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../services/context.js';

const ALLOWED_HEADERS = 'Origin, Content-Type, Accept, Authorization, x-osm-api-key';
const METHODS = 'GET, POST, PUT, DELETE, OPTIONS, HEAD';

/** True when `origin` may call the API under `server.cors_allowed_origins` (reflect-origin, *, or a comma list). */
export function originAllowed(origin: string, setting: unknown): boolean {
  const s = String(setting ?? 'reflect-origin').trim();
  if (s === '' || s === 'reflect-origin' || s === '*') return true;
  return s.split(',').map((x) => x.trim()).filter(Boolean).includes(origin);
}

/**
 * CORS honouring `server.cors_allowed_origins` (the reference ignores it) and allowing the
 * `x-osm-api-key` header in preflights (the reference forgets it).
 */
export function registerCors(server: FastifyInstance, app: AppContext): void {
  server.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (!origin) return;
    const allowed = originAllowed(origin, (app.settings().settings.server as { cors_allowed_origins?: unknown }).cors_allowed_origins);
    if (allowed) {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
      reply.header('vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      if (allowed) {
        reply.header('access-control-allow-methods', METHODS);
        reply.header('access-control-allow-headers', ALLOWED_HEADERS);
        reply.header('access-control-max-age', '600');
      }
      return reply.status(allowed ? 204 : 403).send();
    }
  });
}
