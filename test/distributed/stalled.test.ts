/**
 * BullMQ's stalled-job pattern (field-notes §4.1) with real processes: a worker started with
 * `osm worker join` is SIGKILLed in the middle of a task; once its lock expires another worker's
 * stalled check moves the task back to wait and that worker completes it. The master records one
 * completed run with each step once. With `maxStalledCount: 0` the task fails instead.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { openStore } from '../../src/store/index.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import { resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { dropPrefix, REDIS_URL, redisAvailable, stopInProcess, testPrefix, until, writeWorkflows } from './helpers.js';

const hasRedis = await redisAvailable();

/** Kills what a SIGKILLed worker left behind: the process group of the step it was running. */
function killOrphans(baseFolder: string): void {
  const db = path.join(baseFolder, 'database-osm.sqlite');
  if (!fs.existsSync(db)) return;
  const store = openStore(db);
  try {
    for (const run of store.runs.list({}, { offset: 0, limit: 100 }).data) {
      if (run.current_pid > 1) {
        try {
          process.kill(-run.current_pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  } finally {
    store.close();
  }
}

describe.skipIf(!hasRedis)('a worker killed mid-task (BullMQ stalled jobs)', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const inProcess: { worker: DistributedWorker; app: AppContext }[] = [];
  let wfDir: string;
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let config: DistributedConfig;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(d);
    return d;
  };
  const api = (method: 'GET' | 'POST', url: string, payload?: object) => t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });

  /** `osm worker join` in its own process with a short lock (2.5 s: long enough to be renewed on a loaded machine), resolved once it has joined. */
  async function spawnWorker(name: string, base: string): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [BIN, '-b', base, '-F', wfDir, 'worker', 'join', '--redis-url', REDIS_URL, '--redis-prefix', prefix, '--name', name, '--lock-duration', '2500', '--stalled-interval', '500'],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await until(() => out.includes(`worker ${name} joined`) || child.exitCode !== null, `worker ${name} to join`);
    if (child.exitCode !== null) throw new Error(`worker ${name} exited: ${out}`);
    return child;
  }

  async function startInProcess(name: string, maxStalledCount: number): Promise<DistributedWorker> {
    const app = createAppContext({ baseFolder: tmp(), workflowFolder: wfDir });
    const worker = new DistributedWorker(app, { config, name, lockDurationMs: 2500, stalledIntervalMs: 500, maxStalledCount });
    inProcess.push({ worker, app });
    await worker.start();
    return worker;
  }

  /** Submits a slow task, waits until worker `name` is in its long step, SIGKILLs that worker. */
  async function submitAndKill(name: string): Promise<{ uuid: string; base: string }> {
    const base = tmp();
    const child = await spawnWorker(name, base);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: `${name}.example.com`, params: { nap: '3' } });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    await until(async () => {
      const task = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
      return task.worker_id === name && task.progress?.current_step === 'nap';
    }, `worker ${name} to be in the long step`);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    killOrphans(base);
    return { uuid, base };
  }

  beforeAll(async () => {
    wfDir = tmp();
    writeWorkflows(wfDir, ['slow']);
    t = await makeSqliteTestServer({ workflowFolder: wfDir });
    config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 500 });
    await master.start();
    attachMaster(t.app, master);
  });

  afterEach(async () => {
    await stopInProcess(inProcess);
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    detachMaster(t.app);
    await master?.stop();
    await t?.close();
    await dropPrefix(prefix);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('another worker re-runs the task after the lock expires; the master records it once', async () => {
    const { uuid } = await submitAndKill('w-killed');
    // The dead worker's connections are gone: it is offline at once.
    await until(async () => (await api('GET', '/osm/api/workers/w-killed')).json().status === 'offline', 'the killed worker to be offline');

    await startInProcess('w-rescuer', 1);
    const run = await until(() => {
      const r = t.app.store.runs.getByUuid(uuid);
      return r?.status === 'completed' ? r : undefined;
    }, 'the task to be completed by the second worker');
    const steps = t.app.store.steps.listByRun(run.id).map((s) => [s.step_name, s.status]);
    expect(steps).toEqual([['first', 'completed'], ['nap', 'completed'], ['last', 'completed']]);
    expect(run.completed_steps).toBe(3);
    expect(t.app.store.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 }).total).toBe(1);

    const task = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
    expect(task).toMatchObject({ status: 'completed', worker_id: 'w-rescuer', stalled: 1, run_status: 'completed' });
    const workers = (await api('GET', '/osm/api/workers')).json().data as { id: string; status: string }[];
    expect(Object.fromEntries(workers.map((w) => [w.id, w.status]))).toMatchObject({ 'w-killed': 'offline', 'w-rescuer': 'idle' });
  });

  it('with maxStalledCount 0 the stalled task fails and the master records why', async () => {
    const { uuid } = await submitAndKill('w-killed-2');
    await startInProcess('w-strict', 0);
    const run = await until(() => {
      const r = t.app.store.runs.getByUuid(uuid);
      return r?.status === 'failed' ? r : undefined;
    }, 'the stalled task to fail');
    expect(run.error_message).toContain('stalled more than allowable limit');
    const task = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
    expect(task).toMatchObject({ status: 'failed' });
    expect(t.app.store.steps.listByRun(run.id)).toEqual([]);
  });

  it('a graceful stop aborts the run in hand and hands its task back at once (no lock expiry, no attempt used)', async () => {
    const leaving = await startInProcess('w-leaving', 1);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'leave.example.com', params: { nap: '30' } });
    const uuid = res.json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().progress?.current_step === 'nap', 'the task to be in its long step');
    await leaving.stop();
    const back = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
    expect(back).toMatchObject({ status: 'waiting', attempts: 0, stalled: 0 });
    expect((await api('GET', '/osm/api/workers/w-leaving')).json().status).toBe('offline');

    await startInProcess('w-taking-over', 1);
    const task = await until(async () => {
      const v = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
      return v.status === 'running' && v.worker_id === 'w-taking-over' ? v : undefined;
    }, 'another worker to take the task');
    expect(task.attempts).toBe(0);
    // Cancel it rather than wait for the long step.
    expect((await api('POST', `/osm/api/runs/${uuid}/cancel`)).statusCode).toBe(200);
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().run_status === 'cancelled', 'the cancelled task to end');
  });
});
