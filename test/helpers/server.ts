import type { FastifyInstance } from 'fastify';
import { createAppContext, openAppContext, type AppContext, type SqliteAppContext } from '../../src/services/context.js';
import { createMigratedPgDatabase, TEST_ENGINE } from './pg.js';
import { buildServer } from '../../src/server/app.js';
import { RunQueue } from '../../src/engine/queue.js';
import { tempDir } from './tmp.js';

export interface TestServer {
  server: FastifyInstance;
  app: AppContext;
  base: string;
  apiKey: string;
  /** Headers authenticating with the API key. */
  auth: Record<string, string>;
  queue?: RunQueue;
  /** The PostgreSQL database's URL when the server runs on PostgreSQL (OSM_TEST_ENGINE=postgresql). */
  databaseUrl?: string;
  close: () => Promise<void>;
}

export interface TestServerOptions {
  noAuth?: boolean;
  withQueue?: boolean;
  workflowFolder?: string;
  limit?: number;
}

/**
 * A server on a temporary base folder (settings created with random secrets, sample workflows
 * copied, empty database), for `server.inject()` tests. `withQueue` also starts the run queue.
 * On the engine OSM_TEST_ENGINE selects (SQLite by default; `databaseUrl` is set on PostgreSQL).
 */
export async function makeTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  return openTestServer(opts, TEST_ENGINE);
}

/** A test server on the SQLite engine whatever OSM_TEST_ENGINE says, for suites that read the synchronous store. */
export interface SqliteTestServer extends TestServer {
  app: SqliteAppContext;
}

export async function makeSqliteTestServer(opts: TestServerOptions = {}): Promise<SqliteTestServer> {
  return (await openTestServer(opts, 'sqlite')) as SqliteTestServer;
}

async function openTestServer(opts: TestServerOptions, engine: 'sqlite' | 'postgresql'): Promise<TestServer> {
  const { dir, cleanup } = tempDir('osm-srv-');
  // OSM_TEST_ENGINE=postgresql: the same server on a fresh PostgreSQL database (dropped at close).
  const pgDb = engine === 'postgresql' ? await createMigratedPgDatabase('osm_api') : undefined;
  const app = (pgDb
    ? await openAppContext({ baseFolder: dir, workflowFolder: opts.workflowFolder, databaseUrl: pgDb.url })
    : createAppContext({ baseFolder: dir, workflowFolder: opts.workflowFolder }));
  const queue = opts.withQueue ? new RunQueue(app, { limit: () => opts.limit ?? 2, pollMs: 200 }) : undefined;
  const server = await buildServer(app, { noAuth: opts.noAuth, queue });
  await server.ready();
  queue?.start();
  const apiKey = String(app.settings().settings.server.auth_api_key);
  return {
    server,
    app,
    base: dir,
    apiKey,
    auth: { 'x-osm-api-key': apiKey },
    queue,
    databaseUrl: pgDb?.url,
    close: async () => {
      await queue?.stop(5000);
      await server.close();
      await app.close();
      await pgDb?.drop();
      cleanup();
    },
  };
}
