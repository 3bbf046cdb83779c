/**
 * A fleet whose master stores on PostgreSQL (issue 15 with issue 14): `osm serve --master` on
 * PostgreSQL and `osm worker join` as a process, in both store modes:
 * - shipped: the worker's settings name no PostgreSQL database; it records the run in its own
 *   SQLite file and ships the results, which the master writes to PostgreSQL;
 * - direct: the worker's settings name the master's database (same store_id); it writes the run,
 *   its steps and assets straight into it, fenced by the attempt number, and keeps no copy.
 * Either way the run, its steps and the assets its step imported end up in PostgreSQL, visible
 * through the master's API, and the master's run row is the API's one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until } from '../distributed/helpers.js';
import { createMigratedPgDatabase, pgAvailable } from '../helpers/pg.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-pgfleet-'));
  dirs.push(d);
  return d;
};
const children: ChildProcess[] = [];
function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exit = new Promise<{ code: number | null }>((r) => child.once('exit', (code) => r({ code })));
  return { child, out: () => text, exit };
}

const ready = (await redisAvailable()) && (await pgAvailable('fleet on PostgreSQL'));

describe.skipIf(!ready)('fleet with the master on PostgreSQL', () => {
  const prefix = testPrefix();
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await dropPrefix(prefix);
  });

  it.each(['shipped', 'direct'] as const)('%s: a distributed run is executed by the worker and recorded in PostgreSQL with its steps and assets', async (mode) => {
    const pg = await createMigratedPgDatabase('osm_fleet');
    try {
      const wf = tmp();
      fs.mkdirSync(path.join(wf, 'modules'));
      fs.writeFileSync(
        path.join(wf, 'modules', 'hosts.yaml'),
        `kind: module\nname: hosts\nsteps:\n  - name: write\n    type: bash\n    command: printf '{"host":"a.{{Target}}","url":"https://a.{{Target}}","status_code":200}\\n{"host":"b.{{Target}}","url":"https://b.{{Target}}","status_code":404}\\n' > {{Output}}/httpx.jsonl\n  - name: import\n    type: function\n    function: db_import_asset_from_file("{{Workspace}}", "{{Output}}/httpx.jsonl")\n`,
      );
      const env = { OSM_DATABASE_URL: pg.url, OSM_REDIS_PREFIX: prefix };
      const serve = start(['-b', tmp(), '-F', wf, 'serve', '--master', '--redis-url', REDIS_URL, '--port', '0', '--host', '127.0.0.1', '-A', '--no-schedule', '--no-hot-reload'], env);
      const url = await until(() => /listening on .*\((http:\/\/[^)]+)\)/.exec(serve.out())?.[1] ?? (serve.child.exitCode !== null ? 'exited' : undefined), 'the daemon to listen');
      expect(url, serve.out()).not.toBe('exited');
      expect(serve.out()).toContain('Database:      PostgreSQL');
      const workerBase = tmp();
      const name = `pg-${mode}-${prefix}`;
      const worker = start(['-b', workerBase, '-F', wf, 'worker', 'join', '--redis-url', REDIS_URL, '--redis-prefix', prefix, '--name', name], mode === 'direct' ? env : { OSM_REDIS_PREFIX: prefix });
      await until(() => worker.out().includes(`worker ${name} joined`) || worker.child.exitCode !== null, 'the worker to join');
      expect(worker.child.exitCode, worker.out()).toBeNull();
      if (mode === 'direct') expect(worker.out()).toContain('runs of a master on this database are written straight into it');
      else expect(worker.out()).not.toContain('Shared:');

      const res = await fetch(`${url}/osm/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ module: 'hosts', target: 'fleet.example.com', run_mode: 'distributed' }) });
      expect(res.status).toBe(202);
      const { run_uuid } = (await res.json()) as { run_uuid: string };
      const run = await until(async () => {
        const r = (await (await fetch(`${url}/osm/api/runs/${run_uuid}?include_steps=true`)).json()) as { data: { status: string; steps: { step_name: string; status: string }[] } };
        return ['completed', 'failed'].includes(r.data.status) ? r.data : undefined;
      }, 'the run to end', 90_000);
      expect(run.status, serve.out() + worker.out()).toBe('completed');
      expect(run.steps.map((s) => [s.step_name, s.status])).toEqual([['write', 'completed'], ['import', 'completed']]);
      const assets = (await (await fetch(`${url}/osm/api/assets?workspace=example.com`)).json()) as { data: { asset_value: string }[] };
      // The target's workspace is its registrable domain (the engine's heuristics).
      expect(assets.data.map((a) => a.asset_value).sort()).toEqual(['a.fleet.example.com', 'b.fleet.example.com']);

      // The rows are PostgreSQL's: read there directly, the master's run row is the API's one.
      const { openPgStore } = await import('../../src/store/pg/store.js');
      const store = await openPgStore(pg.url, { migrate: false });
      try {
        const row = (await store.runs.getByUuid(run_uuid))!;
        expect(row).toMatchObject({ status: 'completed', trigger_type: 'api' });
        expect((await store.assets.list({ workspace: 'example.com' }, { offset: 0, limit: 10 })).total).toBe(2);
      } finally {
        await store.close();
      }
      // Direct: the run row is completed by the worker itself, just before its end record.
      const finished = await until(() => worker.out().split('\n').find((l) => l.includes('"task finished"') && l.includes(run_uuid)), 'the worker to finish the task');
      // Shipped: the worker's scratch copy is in its own SQLite file. Direct: no copy, no rows shipped.
      const { openStore } = await import('../../src/store/db.js');
      const own = openStore(path.join(workerBase, 'database-osm.sqlite'));
      try {
        expect(Boolean(own.runs.getByUuid(run_uuid))).toBe(mode === 'shipped');
      } finally {
        own.close();
      }
      if (mode === 'direct') {
        expect(JSON.parse(finished!)).toMatchObject({ direct: true, status: 'completed', attempt: 1 });
        expect(worker.out()).not.toContain('rows shipped to the master');
      } else {
        expect(worker.out()).toContain('rows shipped to the master');
      }

      worker.child.kill('SIGTERM');
      expect((await worker.exit).code).toBe(0);
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await pg.drop();
    }
  }, 180_000);
});
