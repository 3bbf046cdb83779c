/**
 * A daemon on PostgreSQL whose connections are cut again and again (issue 14: "no run is marked
 * failed only because the database blinked"): a loopback proxy between the daemon and the server
 * destroys every open connection every 150 ms while 12 runs of 4 steps execute, so statements are
 * cut before they reach the server, while it executes them, and after it answered. Every run
 * must end completed with each step and each run/step event exactly once, and none may be left
 * running (a claim applied but unanswered is launched on the next pass).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, killAllDaemons, startDaemon, stopDaemon, type Daemon } from '../helpers/daemon.js';
import { createMigratedPgDatabase, pgAvailable, type PgDatabase } from '../helpers/pg.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { tempDir } from '../helpers/tmp.js';

const available = await pgAvailable('connection cuts under a daemon');
const RUNS = 12;
const STEPS = 4;

describe.skipIf(!available)('PostgreSQL connections cut every 150 ms under a running daemon', () => {
  let database: PgDatabase;
  let proxy: TcpProxy;
  let daemon: Daemon;
  const work = tempDir('osm-cuts-');

  beforeAll(async () => {
    database = await createMigratedPgDatabase('osm_cuts');
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    const flows = join(work.dir, 'flows');
    mkdirSync(flows);
    const steps = Array.from({ length: STEPS }, (_, i) => `  - name: s${i}\n    type: bash\n    command: sleep 0.3 && echo s${i}\n`).join('');
    writeFileSync(join(flows, 'cut-steps.yaml'), `name: cut-steps\nkind: module\nsteps:\n${steps}`);
    daemon = await startDaemon(join(work.dir, 'base'), { workflows: flows, env: { OSM_DATABASE_URL: url.toString() } });
  }, 120_000);

  afterAll(async () => {
    await stopDaemon(daemon);
    await killAllDaemons();
    await proxy?.close();
    await database?.drop();
    work.cleanup();
  });

  /** The API answers 503 while the connection it needed was just cut: asked again. */
  const ask = async (method: string, path: string, body?: unknown) => {
    for (let i = 0; ; i++) {
      const r = await api(daemon, method, path, body);
      if (r.status !== 503 || i > 200) return r;
      await new Promise((res) => setTimeout(res, 100));
    }
  };

  it(`${RUNS} runs × ${STEPS} steps end completed, each step and event once, none left running`, async () => {
    const created = await ask('POST', '/osm/api/runs', { module: 'cut-steps', targets: Array.from({ length: RUNS }, (_, i) => `c${i}.example.com`), concurrency: RUNS });
    expect(created.status, created.text).toBeLessThan(300);
    const cutter = setInterval(() => {
      proxy.cut();
      proxy.restore();
    }, 150);
    try {
      const end = Date.now() + 150_000;
      for (;;) {
        const done = await ask('GET', '/osm/api/runs?workflow_name=cut-steps&status=completed&limit=1');
        const failed = await ask('GET', '/osm/api/runs?workflow_name=cut-steps&status=failed&limit=1');
        if (done.json?.pagination?.total + failed.json?.pagination?.total >= RUNS || Date.now() > end) break;
        await new Promise((res) => setTimeout(res, 300));
      }
    } finally {
      clearInterval(cutter);
    }
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const runs = (await c.query('SELECT run_uuid, status, error_message, completed_steps FROM runs')).rows;
      expect(runs).toHaveLength(RUNS);
      expect(runs.filter((r) => r.status !== 'completed'), JSON.stringify(runs)).toEqual([]);
      expect(runs.every((r) => Number(r.completed_steps) === STEPS)).toBe(true);
      const steps = (await c.query("SELECT run_uuid, count(*)::int AS n, count(DISTINCT step_name)::int AS d FROM step_results WHERE status = 'completed' GROUP BY run_uuid")).rows;
      expect(steps).toHaveLength(RUNS);
      expect(steps.every((s) => s.n === STEPS && s.d === STEPS)).toBe(true);
      const events = (await c.query("SELECT topic, count(*)::int AS n FROM event_logs WHERE topic IN ('run.started', 'run.completed', 'step.completed') GROUP BY topic ORDER BY topic")).rows;
      expect(events).toEqual([
        { topic: 'run.completed', n: RUNS },
        { topic: 'run.started', n: RUNS },
        { topic: 'step.completed', n: RUNS * STEPS },
      ]);
    } finally {
      await c.end();
    }
  }, 200_000);
});
