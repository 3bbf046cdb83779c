/**
 * `database.db_engine: postgresql` while the runtime store is SQLite-only: osm serve and osm run
 * refuse to start (naming host:port, reachability and the cause) instead of silently using
 * SQLite; osm db status and osm health report the engine and whether it answers.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { latestVersion } from '../../src/store/migrate.js';
import { tempDir } from '../helpers/tmp.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../helpers/pg.js';

const DEAD = 'postgresql://osm:hunter22pw@127.0.0.1:1/osm';

describe('db_engine postgresql', () => {
  let base: { dir: string; cleanup: () => void };
  beforeAll(() => {
    base = tempDir('osm-engine-');
  });
  afterAll(() => base.cleanup());
  const osm = (args: string[], env: Record<string, string>) => runOsm(['-b', base.dir, ...args], { env });

  it('osm serve and osm run refuse to start, name host:port and the cause, and never create the SQLite base', async () => {
    for (const args of [['serve', '--port', '0'], ['run', '-m', 'anything', '-t', 'example.com']]) {
      const r = await osm(args, { OSM_DATABASE_URL: DEAD });
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toContain('127.0.0.1:1');
      expect(r.stderr).toMatch(/not reachable: connection refused/);
      expect(r.stderr).toContain('runtime store on PostgreSQL is not available yet');
      expect(r.stderr).toContain('osm db copy');
      expect(r.stderr + r.stdout).not.toContain('hunter22pw');
    }
    expect(existsSync(join(base.dir, 'database-osm.sqlite'))).toBe(false);
  }, 300_000);

  it('osm db status: unreachable → exit 1 naming host:port and the cause; --json says reachable false', async () => {
    const r = await osm(['db', 'status'], { OSM_DATABASE_URL: DEAD });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PostgreSQL at 127\.0\.0\.1:1 .* is not reachable: connection refused/);
    const j = await osm(['db', 'status', '--json'], { OSM_DATABASE_URL: DEAD });
    expect(j.code).toBe(1);
    const body = JSON.parse(j.stdout);
    expect(body).toMatchObject({ engine: 'postgresql', reachable: false, postgresql: { address: '127.0.0.1:1', reachable: false } });
    expect(j.stdout).not.toContain('hunter22pw');
    const sqlite = JSON.parse((await osm(['db', 'status', '--json'], {})).stdout);
    expect(sqlite).toMatchObject({ engine: 'sqlite', reachable: true });
  }, 300_000);

  it('osm health reports the engine and PostgreSQL reachability', async () => {
    const r = await osm(['health', '--json'], { OSM_DATABASE_URL: DEAD });
    const checks = JSON.parse(r.stdout).checks as { section: string; name: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.name === 'engine')).toMatchObject({ section: 'Database', ok: false });
    expect(checks.find((c) => c.name === 'postgresql')?.detail).toMatch(/127\.0\.0\.1:1.*not reachable/);
    expect(r.code).toBe(1);
  }, 300_000);
});

const available = await pgAvailable('db engine tests');
describe.skipIf(!available)('db_engine postgresql, server reachable', () => {
  let base: { dir: string; cleanup: () => void };
  let pg: PgDatabase;
  beforeAll(async () => {
    base = tempDir('osm-engine-pg-');
    pg = await createPgDatabase('osm_engine');
  });
  afterAll(async () => {
    base.cleanup();
    await pg?.drop();
  });

  it('db migrate applies every migration, db status shows the version; serve still refuses (reachable)', async () => {
    const env = { OSM_DATABASE_URL: pg.url };
    const m = await runOsm(['-b', base.dir, 'db', 'migrate', '--json'], { env });
    expect(m.code, m.stderr).toBe(0);
    expect(JSON.parse(m.stdout)).toMatchObject({ engine: 'postgresql', schema_version: latestVersion() });
    const s = JSON.parse((await runOsm(['-b', base.dir, 'db', 'status', '--json'], { env })).stdout);
    expect(s).toMatchObject({ engine: 'postgresql', reachable: true, postgresql: { reachable: true, schema_version: latestVersion(), pending: [] } });
    const serve = await runOsm(['-b', base.dir, 'serve', '--port', '0'], { env });
    expect(serve.code).not.toBe(0);
    expect(serve.stderr).toMatch(/reachable \(server /);
    expect(serve.stderr).toContain('not available yet');
  }, 300_000);
});
