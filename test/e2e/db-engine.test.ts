/**
 * `database.db_engine: postgresql`: osm serve and osm run run on PostgreSQL; an unreachable server
 * stops them at start with an error naming host:port and the cause (never a silent fall back to
 * SQLite); osm db status and osm health report the engine and whether it answers.
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

  it('osm serve and osm run on an unreachable server stop at start, name host:port and the cause, and never create the SQLite base', async () => {
    for (const args of [['serve', '--port', '0'], ['run', '-m', 'sample-recon', '-t', 'example.com']]) {
      const r = await osm(args, { OSM_DATABASE_URL: DEAD });
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(/PostgreSQL at 127\.0\.0\.1:1 is unavailable: connection refused/);
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
    expect(checks.find((c) => c.name === 'engine')).toMatchObject({ section: 'Database', ok: true, detail: 'postgresql' });
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

  it('db migrate applies every migration, db status shows the version', async () => {
    const env = { OSM_DATABASE_URL: pg.url };
    const m = await runOsm(['-b', base.dir, 'db', 'migrate', '--json'], { env });
    expect(m.code, m.stderr).toBe(0);
    expect(JSON.parse(m.stdout)).toMatchObject({ engine: 'postgresql', schema_version: latestVersion() });
    const s = JSON.parse((await runOsm(['-b', base.dir, 'db', 'status', '--json'], { env })).stdout);
    expect(s).toMatchObject({ engine: 'postgresql', reachable: true, postgresql: { reachable: true, schema_version: latestVersion(), pending: [] } });
  }, 300_000);

  it('osm db list / index read and write PostgreSQL; osm db clean refuses (it recreates a SQLite file)', async () => {
    const env = { OSM_DATABASE_URL: pg.url };
    const idx = await runOsm(['-b', base.dir, 'db', 'index', 'workflow', '--json'], { env });
    expect(idx.code, idx.stderr).toBe(0);
    const list = await runOsm(['-b', base.dir, 'db', 'list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    const counts = JSON.parse(list.stdout) as Record<string, number>;
    expect(counts.workflows).toBeGreaterThan(0);
    expect(counts).toHaveProperty('leases');
    const rows = await runOsm(['-b', base.dir, 'db', 'list', '-t', 'workflows', '--columns', 'name,kind', '--search', 'sample', '--json'], { env });
    expect(rows.code, rows.stderr).toBe(0);
    expect((JSON.parse(rows.stdout) as { name: string }[]).every((r) => r.name.includes('sample'))).toBe(true);
    const hostile = await runOsm(['-b', base.dir, 'db', 'list', '-t', 'workflows', '--where', "1=1; DELETE FROM workflows", '--json'], { env });
    expect(hostile.code).not.toBe(0);
    expect(JSON.parse((await runOsm(['-b', base.dir, 'db', 'list', '--json'], { env })).stdout).workflows).toBe(counts.workflows);
    const clean = await runOsm(['-b', base.dir, 'db', 'clean', '--force'], { env });
    expect(clean.code).not.toBe(0);
    expect(clean.stderr).toContain('configured store is PostgreSQL');
    expect(existsSync(join(base.dir, 'database-osm.sqlite'))).toBe(false);
  }, 300_000);

  it('osm run executes on PostgreSQL: run, steps and events are rows there, no SQLite base is created', async () => {
    const env = { OSM_DATABASE_URL: pg.url };
    const r = await runOsm(['-b', base.dir, 'run', '-m', 'sample-recon', '-t', 'pg.example.com', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(base.dir, 'database-osm.sqlite'))).toBe(false);
    const { openPgStore } = await import('../../src/store/pg/store.js');
    const store = await openPgStore(pg.url, { migrate: false });
    try {
      const runs = await store.runs.list({ target: 'pg.example.com' }, { offset: 0, limit: 10 });
      expect(runs.data).toHaveLength(1);
      expect(runs.data[0]).toMatchObject({ status: 'completed', workflow_name: 'sample-recon' });
      const steps = await store.steps.list({ run_id: runs.data[0]!.id }, { offset: 0, limit: 50 });
      expect(steps.data.length).toBeGreaterThan(0);
      expect(steps.data.every((st) => st.status === 'completed' || st.status === 'skipped')).toBe(true);
      expect((await store.events.list({ topic: 'run.completed' }, { offset: 0, limit: 10 })).data.length).toBe(1);
    } finally {
      await store.close();
    }
  }, 300_000);
});
