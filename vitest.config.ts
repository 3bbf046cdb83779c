import pg from 'pg';
import { defineConfig } from 'vitest/config';

// Options every project shares (the fork limits are global: vitest 3 takes them at the root only).
const shared = {
  globalSetup: ['test/global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

// Route suites that cannot run on PostgreSQL, with the reason (keep this list short; empty today).
const NOT_ON_PG: string[] = [];

// The server the api-pg project creates its databases on (as test/helpers/pg.ts).
const PG_ADMIN_URL = process.env.OSM_TEST_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** True when PostgreSQL answers; never throws. */
async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

// Locally without PostgreSQL the api-pg project is left out with a visible message; on CI
// (CI=true) it always runs, so an unreachable server fails the tests.
const withPg = process.env.CI === 'true' || (await pgReachable());
if (!withPg) console.warn(`[api-pg] PostgreSQL at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')} is not reachable: skipping the route suites on PostgreSQL`);

export default defineConfig({
  test: {
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      // Everything, on the default engine (SQLite).
      { test: { name: 'main', include: ['test/**/*.test.ts'], ...shared } },
      // The API/route suites again on PostgreSQL: makeTestServer opens each server on a fresh
      // migrated database (test/helpers/server.ts, test/helpers/pg.ts).
      ...(withPg
        ? [{ test: { name: 'api-pg', include: ['test/server/**/*.test.ts'], exclude: NOT_ON_PG, env: { OSM_TEST_ENGINE: 'postgresql' }, ...shared } }]
        : []),
    ],
  },
});
