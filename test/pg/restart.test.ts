/**
 * PostgreSQL restarted under osm (issue 14): the test's own cluster (test/helpers/pg-cluster.ts)
 * is stopped (fast, or immediate as in a crash) while a run executes and started again. The run's writes wait for the database
 * (src/store/patience.ts): the run ends completed with every step recorded once, no event twice;
 * while the server is down the daemon's API answers 503 in the error envelope, and it answers
 * again once the server is back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, killAllDaemons, startDaemon, stopDaemon, until } from '../helpers/daemon.js';
import { finalJson, runOsm } from '../helpers/cli.js';
import { pgBinDir, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { tempDir } from '../helpers/tmp.js';

const SLOW = `name: slow-steps
kind: module
steps:
${[1, 2, 3, 4, 5, 6].map((i) => `  - name: s${i}\n    type: bash\n    command: sleep 1 && echo step-${i}`).join('\n')}
`;

const bin = pgBinDir();
if (!bin) {
  if (process.env.CI === 'true') throw new Error('initdb/pg_ctl not found: required on CI for the PostgreSQL restart test');
  console.warn('[pg restart] initdb/pg_ctl not found: skipping');
}

describe.skipIf(!bin)('PostgreSQL restarted during a run', () => {
  let cluster: PgCluster;
  let base: { dir: string; cleanup: () => void };
  let flows: string;
  beforeAll(async () => {
    cluster = await startPgCluster();
    base = tempDir('osm-pgr-');
    flows = join(base.dir, 'flows');
    mkdirSync(flows);
    writeFileSync(join(flows, 'slow-steps.yaml'), SLOW);
  }, 120_000);
  afterAll(async () => {
    await killAllDaemons();
    cluster?.remove();
    base?.cleanup();
  });

  const rowsOf = async (uuid: string) => {
    const { openPgStore } = await import('../../src/store/pg/store.js');
    const store = await openPgStore(cluster.url, { migrate: false });
    try {
      const run = (await store.runs.getByUuid(uuid))!;
      const steps = (await store.steps.list({ run_id: run.id }, { offset: 0, limit: 100 })).data;
      const events = (await store.events.list({}, { offset: 0, limit: 1000 })).data.filter((e) => e.run_id === uuid);
      return { run, steps, events };
    } finally {
      await store.close();
    }
  };

  it.each(['fast', 'immediate'] as const)('osm run: the database stops (%s) for 3 s mid-run; the run completes with every step once', async (mode) => {
    let stopped = false;
    let restartError: unknown;
    const result = runOsm(['-b', base.dir, '-F', flows, 'run', '-m', 'slow-steps', '-t', `restart-${mode}.example.com`, '--json'], {
      env: { OSM_DATABASE_URL: cluster.url },
      timeoutMs: 180_000,
      onSpawn: (child) => {
        let out = '';
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (!stopped && out.includes('step-2')) {
            stopped = true;
            cluster.stop(mode);
            setTimeout(() => {
              try {
                cluster.start();
              } catch (err) {
                restartError = err;
              }
            }, 3000);
          }
        });
      },
    });
    const r = await result;
    expect(stopped).toBe(true);
    expect(restartError, 'the cluster did not start again').toBeUndefined();
    expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
    const record = finalJson(r.stdout);
    expect(record.status).toBe('completed');
    const { run, steps, events } = await rowsOf(record.run_uuid);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => s.step_name).sort()).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
    expect(steps.every((s) => s.status === 'completed')).toBe(true);
    expect(events.filter((e) => e.topic === 'run.completed')).toHaveLength(1);
    expect(events.filter((e) => e.topic === 'step.completed')).toHaveLength(6);
  }, 240_000);

  it('osm serve: 503 in the envelope while the database is down, the queued run completes once it is back', async () => {
    const d = await startDaemon(base.dir, { workflows: flows, env: { OSM_DATABASE_URL: cluster.url } });
    try {
      const created = await api(d, 'POST', '/osm/api/runs', { module: 'slow-steps', target: 'daemon.example.com' });
      expect(created.status, created.text).toBeLessThan(300);
      const uuid = created.json.run_uuid as string;
      await until(async () => (await api(d, 'GET', `/osm/api/runs/${uuid}`)).json?.data?.completed_steps >= 1, 'a step done');
      cluster.stop();
      try {
        const down = await api(d, 'GET', '/osm/api/runs');
        expect(down.status).toBe(503);
        expect(down.json).toMatchObject({ error: true });
        expect(down.json.message).toMatch(/PostgreSQL at 127\.0\.0\.1:\d+ is unavailable/);
        const ready = await api(d, 'GET', '/health/ready');
        expect(ready.status).toBe(503);
      } finally {
        cluster.start();
      }
      const done = await until(async () => {
        const r = await api(d, 'GET', `/osm/api/runs/${uuid}`);
        return r.status === 200 && ['completed', 'failed', 'cancelled'].includes(r.json?.data?.status) ? r.json.data : undefined;
      }, 'the run to end', 120_000);
      expect(done.status).toBe('completed');
      const { steps, events } = await rowsOf(uuid);
      expect(steps).toHaveLength(6);
      expect(steps.every((s) => s.status === 'completed')).toBe(true);
      expect(events.filter((e) => e.topic === 'run.completed')).toHaveLength(1);
    } finally {
      await stopDaemon(d);
    }
  }, 240_000);
});
