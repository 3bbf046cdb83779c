/**
 * The real CLI: `osm serve --master` and `osm worker join` as processes. A distributed run goes
 * through both; SIGTERM stops each cleanly (exit 0, no handle left open); `osm worker status`
 * lists the worker; missing or unreachable Redis fails with one clear line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, finalJson, ROOT, runOsm } from '../helpers/cli.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until, writeWorkflows } from './helpers.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  dirs.push(d);
  return d;
};
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Starts a long-running osm command; `out()` is what it printed so far, `exit` resolves with its code. */
function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { child, out: () => text, exit };
}

describe('CLI without Redis', () => {
  it('osm serve --master without a redis section or --redis-url says how to configure it', async () => {
    const r = await runOsm(['-b', tmp(), 'serve', '--master', '--port', '0', '--no-schedule', '--no-hot-reload']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error: redis not configured. Add redis section to osm-settings.yaml or use --redis-url');
  });

  it('osm worker join with an unreachable Redis fails fast with the address (never a password)', async () => {
    const r = await runOsm(['-b', tmp(), 'worker', 'join', '--redis-url', 'redis://u:topsecret@127.0.0.1:1/0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach Redis at redis://127.0.0.1:1/0');
    expect(r.stderr + r.stdout).not.toContain('topsecret');
  });

  it('osm run -D refuses flags it cannot honour; --redis-url needs -D', async () => {
    const a = await runOsm(['-b', tmp(), 'run', '-D', '--queue', '-m', 'x', '-t', 'a.com']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('-D/--distributed-run submits runs to the master');
    const b = await runOsm(['-b', tmp(), 'run', '--redis-url', REDIS_URL, '-m', 'x', '-t', 'a.com']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--redis-url goes with -D/--distributed-run');
  });

  it('osm worker join rejects a bad name and a bad concurrency', async () => {
    const base = tmp();
    const a = await runOsm(['-b', base, 'worker', 'join', '--redis-url', REDIS_URL, '--name', 'bad name!']);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain('invalid worker name');
    const b = await runOsm(['-b', base, 'worker', 'join', '--redis-url', REDIS_URL, '--concurrency', '0']);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain('--concurrency must be an integer ≥ 1');
    const c = await runOsm(['-b', base, 'worker', 'join', '--redis-url', REDIS_URL, '--label', 'gpu', '--label', 'no spaces']);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain('invalid --label "no spaces"');
  });
});

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('osm serve --master and osm worker join as processes', () => {
  const prefix = testPrefix();
  afterAll(async () => dropPrefix(prefix));

  it('a distributed run goes through master and worker; both stop cleanly on SIGTERM', async () => {
    const wf = tmp();
    writeWorkflows(wf, ['quick']);
    const env = ['--redis-url', REDIS_URL];
    // `osm serve` takes its key prefix from OSM_REDIS_PREFIX (or redis.prefix in the settings).
    const serve = start(['-b', tmp(), '-F', wf, 'serve', '--master', ...env, '--port', '0', '--host', '127.0.0.1', '-A', '--no-schedule', '--no-hot-reload'], { OSM_REDIS_PREFIX: prefix });
    const url = await until(() => /listening on .*\((http:\/\/[^)]+)\)/.exec(serve.out())?.[1] ?? (serve.child.exitCode !== null ? 'exited' : undefined), 'the daemon to listen');
    expect(url, serve.out()).not.toBe('exited');
    expect(serve.out()).toContain('Distributed:   master on redis://127.0.0.1:6379/0');

    const worker = start(['-b', tmp(), '-F', wf, 'worker', 'join', ...env, '--redis-prefix', prefix, '--name', `cli-${prefix}`]);
    await until(() => worker.out().includes(`worker cli-${prefix} joined`) || worker.child.exitCode !== null, 'the worker to join');
    expect(worker.child.exitCode, worker.out()).toBeNull();

    const res = await fetch(`${url}/osm/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ module: 'quick', target: 'cli.example.com', run_mode: 'distributed' }) });
    expect(res.status).toBe(202);
    const { run_uuid } = (await res.json()) as { run_uuid: string };
    const run = await until(async () => {
      const r = (await (await fetch(`${url}/osm/api/runs/${run_uuid}?include_steps=true`)).json()) as { data: { status: string; steps: { step_name: string }[] } };
      return r.data.status === 'completed' ? r.data : undefined;
    }, 'the run to complete');
    expect(run.steps.map((s) => s.step_name)).toEqual(['hello', 'bye']);

    // The reference's `osm run -D`: submitted to the master, run by the worker, summarised here.
    const d = await runOsm(['-b', tmp(), 'run', '-D', '--server-url', url, '--redis-url', REDIS_URL, '-m', 'quick', '-t', 'd.example.com', '--json']);
    expect(d.code, d.stderr).toBe(0);
    const rec = finalJson(d.stdout) as { status: string; target: string };
    expect(rec).toMatchObject({ status: 'completed', target: 'd.example.com' });
    const workers = (await (await fetch(`${url}/osm/api/workers`)).json()) as { data: { id: string; status: string }[] };
    expect(workers.data.find((w) => w.id === `cli-${prefix}`)?.status).toBe('idle');

    worker.child.kill('SIGTERM');
    expect(await worker.exit).toEqual({ code: 0, signal: null });
    serve.child.kill('SIGTERM');
    expect(await serve.exit).toEqual({ code: 0, signal: null });

    const status = await runOsm(['-b', tmp(), 'worker', 'status', '--json', ...env, '--redis-prefix', prefix]);
    expect(status.code, status.stderr).toBe(0);
    const listed = JSON.parse(status.stdout) as { data: { id: string; status: string; tasks_complete: number }[] };
    expect(listed.data.find((w) => w.id === `cli-${prefix}`)).toMatchObject({ status: 'offline', tasks_complete: 2 }); // the API's run and the -D run
  });
});
