import { z } from 'zod';
import { VERSION, REFERENCE_VERSION } from '../../version.js';
import { defineRoute } from '../route.js';
import { masterOf } from '../../distributed/attach.js';
import type { RegisterRoutes } from '../app.js';

/** Liveness, readiness (really checks the database), server info and the API health summary. */
export const registerHealthRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'GET', url: '/health', summary: 'Liveness', tags: ['health'], sideEffects: 'none',
    handler: () => ({ status: 'ok' }),
  });
  defineRoute(server, app, {
    method: 'GET', url: '/health/ready', summary: 'Readiness: the database answers', tags: ['health'], sideEffects: 'none',
    handler: async ({ reply }) => {
      try {
        await app.repos.maintenance.ping();
        return { status: 'ready', database: 'ok', engine: app.repos.engine };
      } catch (err) {
        return reply.status(503).send({ error: true, message: `Database not ready: ${(err as Error).message}` });
      }
    },
  });
  const info = () => ({
    message: 'osm is running',
    name: 'osm',
    version: VERSION,
    compatible_with: `osmedeus ${REFERENCE_VERSION}`,
    repo: 'https://github.com/osm/osm',
    license: String((app.settings().settings.server as { license?: string }).license ?? 'open-source'),
    uptime_seconds: Math.round((Date.now() - deps.startedAt) / 1000),
  });
  for (const url of ['/server-info', '/status', '/api/info']) {
    defineRoute(server, app, { method: 'GET', url, summary: 'Server information', tags: ['health'], sideEffects: 'none', handler: info });
  }
  defineRoute(server, app, {
    method: 'GET', url: '/osm/api/health', summary: 'API health with database state and workflow count', tags: ['health'], sideEffects: 'none',
    responses: {
      200: {
        description: 'Health; `database` is the reference\'s string, `database_engine` / `database_reachable` say which engine and whether it answers; `warnings` when distributed tasks wait and no worker is online, or none can take them',
        schema: z.object({ status: z.string(), version: z.string(), database: z.string(), database_engine: z.string(), database_reachable: z.boolean(), workflows_loaded: z.number(), warnings: z.array(z.string()).optional() }),
      },
    },
    handler: async () => {
      let database = 'connected';
      let workflows = 0;
      try {
        const c = await app.repos.workflows.countByKind();
        workflows = c.flows + c.modules;
      } catch {
        database = 'error';
      }
      const out = { status: database === 'connected' ? 'healthy' : 'degraded', version: VERSION, database, database_engine: app.repos.engine, database_reachable: database === 'connected', workflows_loaded: workflows };
      // A master warns when distributed tasks wait and no worker is online.
      const master = masterOf(app);
      const warnings = master ? await master.views.queueWarnings().catch(() => []) : [];
      return warnings.length > 0 ? { ...out, warnings } : out;
    },
  });
};
