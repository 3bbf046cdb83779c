/**
 * Two daemons on one PostgreSQL database (issue 14): both take runs from the one queue (the claim
 * is a conditional transition under FOR UPDATE SKIP LOCKED), and no run executes twice — each run
 * appends its uuid to a shared file exactly once and has one run.started event. Then 100 clients
 * hammer both daemons' API for 30 s (reads and run creation): every answer is a success.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, killAllDaemons, startDaemon, stopDaemon, until, type Daemon } from '../helpers/daemon.js';
import { createMigratedPgDatabase, pgAvailable, type PgDatabase } from '../helpers/pg.js';
import { tempDir } from '../helpers/tmp.js';

const available = await pgAvailable('two daemons on PostgreSQL');
const LOAD_SECONDS = Number(process.env.OSM_PG_LOAD_SECONDS ?? 30);

describe.skipIf(!available)('two daemons sharing one PostgreSQL database', () => {
  let pg: PgDatabase;
  let dirs: { dir: string; cleanup: () => void }[] = [];
  let shared: string;
  let flows: string;
  let a: Daemon;
  let b: Daemon;

  beforeAll(async () => {
    pg = await createMigratedPgDatabase('osm_two');
    const work = tempDir('osm-two-');
    dirs.push(work);
    shared = join(work.dir, 'claims.txt');
    writeFileSync(shared, '');
    flows = join(work.dir, 'flows');
    mkdirSync(flows);
    writeFileSync(
      join(flows, 'claim-once.yaml'),
      `name: claim-once\nkind: module\nsteps:\n  - name: mark\n    type: bash\n    command: echo {{RunUUID}} >> ${shared}\n  - name: pause\n    type: bash\n    command: sleep 0.2\n`,
    );
    const baseA = tempDir('osm-two-a-');
    const baseB = tempDir('osm-two-b-');
    dirs.push(baseA, baseB);
    const env = { OSM_DATABASE_URL: pg.url };
    a = await startDaemon(baseA.dir, { workflows: flows, env });
    b = await startDaemon(baseB.dir, { workflows: flows, env });
  }, 120_000);

  afterAll(async () => {
    await stopDaemon(a);
    await stopDaemon(b);
    await killAllDaemons();
    for (const d of dirs) d.cleanup();
    await pg?.drop();
  });

  it('60 runs submitted to both: each executes exactly once, both daemons take some', async () => {
    const uuids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const d = i % 2 === 0 ? a : b;
      const r = await api(d, 'POST', '/osm/api/runs', { module: 'claim-once', target: `t${i}.example.com` });
      expect(r.status, r.text).toBeLessThan(300);
      uuids.push(r.json.run_uuid);
    }
    await until(async () => {
      const r = await api(a, 'GET', '/osm/api/runs?limit=100&workflow=claim-once');
      return r.json?.data?.filter((x: { status: string }) => x.status === 'completed').length === 60;
    }, '60 completed runs', 180_000);
    const lines = readFileSync(shared, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(60);
    expect(new Set(lines)).toEqual(new Set(uuids));
    const { openPgStore } = await import('../../src/store/pg/store.js');
    const store = await openPgStore(pg.url, { migrate: false });
    try {
      const started = (await store.events.list({ topic: 'run.started' }, { offset: 0, limit: 1000 })).data;
      expect(started).toHaveLength(60);
      const owners = new Set<number>();
      for (const uuid of uuids) {
        const run = (await store.runs.getByUuid(uuid))!;
        expect(run.status).toBe('completed');
        owners.add(run.owner_pid);
        expect((await store.steps.list({ run_id: run.id }, { offset: 0, limit: 10 })).total).toBe(2);
      }
      expect(owners).toEqual(new Set([a.pid, b.pid]));
    } finally {
      await store.close();
    }
  }, 240_000);

  it(`100 concurrent clients for ${LOAD_SECONDS} s on both daemons: 0 errors`, async () => {
    const routes = ['/osm/api/runs?limit=20', '/osm/api/stats', '/osm/api/workspaces', '/osm/api/assets?limit=50', '/osm/api/vulnerabilities?limit=50', '/osm/api/workflows', '/health/ready', '/osm/api/event-logs?limit=20'];
    const deadline = Date.now() + LOAD_SECONDS * 1000;
    let ok = 0;
    const failures: string[] = [];
    const client = async (n: number) => {
      const d = n % 2 === 0 ? a : b;
      for (let i = 0; Date.now() < deadline; i++) {
        // One request in 50 creates a run, so writers and the queue take part in the load.
        const write = (n + i) % 50 === 0;
        const r = write
          ? await api(d, 'POST', '/osm/api/runs', { module: 'claim-once', target: `load${n}-${i}.example.com` })
          : await api(d, 'GET', routes[(n + i) % routes.length]!);
        if (r.status >= 200 && r.status < 300) ok++;
        else failures.push(`${r.status} ${r.text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 100 }, (_, n) => client(n)));
    console.info(`[two daemons] ${ok} requests answered 2xx by 100 clients in ${LOAD_SECONDS} s, ${failures.length} failures`);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(ok).toBeGreaterThan(100);
  }, (LOAD_SECONDS + 120) * 1000);
});
