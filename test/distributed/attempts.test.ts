/**
 * Issue 15, "work is done once, visibly": attempts recorded durably with their worker and cause,
 * fencing of a worker paused past its lease (its step is stopped on waking, its late result
 * refused), and completion records that survive master downtime while BullMQ trims finished jobs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { openStore } from '../../src/store/index.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import type { LeaseWatch } from '../../src/distributed/lease-watch.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { recordsKey } from '../../src/distributed/records.js';
import { connectionOptions, resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { childrenOf, dropPrefix, expectCompletedOnce, groupAlive, pendingJobs, REDIS_URL, redisAvailable, stopInProcess, testPrefix, until, writeWorkflows } from './helpers.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('attempts, fencing and durable completion records', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const inProcess: { worker: DistributedWorker; app: AppContext }[] = [];
  let wfDir: string;
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let config: DistributedConfig;
  let redis: Redis;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(d);
    return d;
  };
  const api = (method: 'GET' | 'POST', url: string, payload?: object) => t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });

  async function spawnWorker(name: string, base: string): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      [BIN, '-b', base, '-F', wfDir, 'worker', 'join', '--redis-url', REDIS_URL, '--redis-prefix', prefix, '--name', name, '--lock-duration', '3000', '--stalled-interval', '500'],
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

  async function startInProcess(name: string, concurrency = 1, lockDurationMs = 3000): Promise<DistributedWorker> {
    const app = createAppContext({ baseFolder: tmp(), workflowFolder: wfDir });
    const worker = new DistributedWorker(app, { config, name, concurrency, lockDurationMs, stalledIntervalMs: 500, maxStalledCount: 1 });
    inProcess.push({ worker, app });
    await worker.start();
    return worker;
  }

  beforeAll(async () => {
    wfDir = tmp();
    writeWorkflows(wfDir, ['slow', 'quick']);
    const fx = (name: string) => path.join(ROOT, 'test', 'fixtures', 'data', name);
    fs.writeFileSync(
      path.join(wfDir, 'modules', 'importer.yaml'),
      [
        'kind: module', 'name: importer', 'description: imports assets and findings', 'steps:',
        '  - name: assets', '    type: function', `    function: db_import_asset_from_file("{{Workspace}}", "${fx('httpx-run1.jsonl')}")`,
        '  - name: vulns', '    type: function', `    function: db_import_vuln_from_file("{{Workspace}}", "${fx('nuclei.jsonl')}")`, '',
      ].join('\n'),
    );
    t = await makeSqliteTestServer({ workflowFolder: wfDir });
    config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 500, recordsMs: 200, keepCompleted: 5 });
    await master.start();
    attachMaster(t.app, master);
    redis = new Redis(REDIS_URL);
  });

  afterEach(async () => {
    await stopInProcess(inProcess);
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    detachMaster(t.app);
    await master?.stop();
    await t?.close();
    redis?.disconnect();
    await dropPrefix(prefix);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a worker SIGKILLed mid-step: the run is queued again, re-executed elsewhere, and both attempts are recorded', async () => {
    const base = tmp();
    const child = await spawnWorker('w-doomed', base);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'doomed.example.com', params: { nap: '3' } });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().progress?.current_step === 'nap', 'the long step');
    const first = (await api('GET', `/osm/api/runs/${uuid}`)).json().data;
    expect(first).toMatchObject({ status: 'running', worker: 'w-doomed', attempts: [{ attempt: 1, worker_id: 'w-doomed', outcome: 'running', cause: 'first', ended_at: null }] });

    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // No worker online: the stalled check of the next worker is what moves it; the run waits.
    await startInProcess('w-heir');
    const run = await until(() => (t.app.store.runs.getByUuid(uuid)?.status === 'completed' ? t.app.store.runs.getByUuid(uuid) : undefined), 'the run to complete on the heir');
    const view = (await api('GET', `/osm/api/runs/${uuid}`)).json().data;
    expect(view.worker).toBe('w-heir');
    expect(view.attempts).toMatchObject([
      { attempt: 1, worker_id: 'w-doomed', outcome: 'worker lost', cause: 'first' },
      { attempt: 2, worker_id: 'w-heir', outcome: 'completed', cause: 'worker lost' },
    ]);
    expect(view.attempts[0].ended_at).toBeTruthy();
    expect(t.app.store.steps.listByRun(run.id).map((s) => [s.step_name, s.status])).toEqual([['first', 'completed'], ['nap', 'completed'], ['last', 'completed']]);
    const events = t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).data;
    expect(events.filter((e) => e.topic === 'run.completed')).toHaveLength(1);
    const re = events.filter((e) => e.topic === 'run.reattempt');
    expect(re).toHaveLength(1);
    expect(JSON.parse(re[0]!.data as unknown as string)).toMatchObject({ attempt: 2, cause: 'worker lost', worker_id: 'w-heir', previous_worker: 'w-doomed' });
    // The killed worker's step group (it cannot clean up after SIGKILL yet): end it for the test.
    const store = openStore(path.join(base, 'database-osm.sqlite'));
    for (const r of store.runs.list({}, { offset: 0, limit: 10 }).data) if (r.current_pid > 1) try { process.kill(-r.current_pid, 'SIGKILL'); } catch { /* gone */ }
    store.close();
  });

  it('a worker paused past its lease: on waking it stops its step at once and its late result is refused', async () => {
    const base = tmp();
    const child = await spawnWorker('w-sleepy', base);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'sleepy.example.com', params: { nap: '6' } });
    const uuid = res.json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().progress?.current_step === 'nap', 'the long step on w-sleepy');
    child.kill('SIGSTOP');
    await startInProcess('w-awake');
    // The lease expired, the task was re-queued and w-awake started attempt 2.
    await until(() => t.app.store.attempts.get(uuid, 2)?.worker_id === 'w-awake', 'attempt 2 on w-awake');
    expect(t.app.store.attempts.get(uuid, 1)).toMatchObject({ outcome: 'stalled', worker_id: 'w-sleepy' });
    child.kill('SIGCONT');
    // On waking, w-sleepy's watchdog stops its copy: its own record of the run ends unfinished.
    const wstore = openStore(path.join(base, 'database-osm.sqlite'));
    try {
      const local = await until(() => {
        const r = wstore.runs.getByUuid(uuid);
        return r && r.status !== 'running' && r.status !== 'queued' ? r : undefined;
      }, "w-sleepy's copy to stop");
      expect(local.status).not.toBe('completed');
      const nap = wstore.steps.listByRun(local.id).find((s) => s.step_name === 'nap');
      expect(nap?.status).not.toBe('completed');
      expect(wstore.steps.listByRun(local.id).find((s) => s.step_name === 'last')).toBeUndefined();
    } finally {
      wstore.close();
    }
    const run = await until(() => (t.app.store.runs.getByUuid(uuid)?.status === 'completed' ? t.app.store.runs.getByUuid(uuid) : undefined), 'the run to complete on w-awake');
    expect(t.app.store.steps.listByRun(run.id).map((s) => [s.step_name, s.status])).toEqual([['first', 'completed'], ['nap', 'completed'], ['last', 'completed']]);
    const attempts = t.app.store.attempts.listByRun(uuid);
    expect(attempts.map((a) => [a.attempt, a.worker_id, a.outcome, a.cause])).toEqual([
      [1, 'w-sleepy', 'stalled', 'first'],
      [2, 'w-awake', 'completed', 'stalled'],
    ]);
    expect(t.app.store.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 }).total).toBe(1);
    child.kill('SIGTERM');
  });

  it('a lease confirmed too late while the lock is still held: the task goes back to the queue (attempt stalled), not failed, and runs again', async () => {
    const worker = await startInProcess('w-late');
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'late.example.com', params: { nap: '2' } });
    const uuid = res.json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().progress?.current_step === 'nap', 'the long step on w-late');
    // The watchdog's last confirmation of the lock is made to look too old, as after a busy or
    // paused event loop: it stops the attempt although BullMQ still holds the lock for it.
    (worker as unknown as { leases: LeaseWatch }).leases.held.get(uuid)!.expiresAt = Date.now();
    const run = await until(() => {
      const r = t.app.store.runs.getByUuid(uuid);
      return r && r.status !== 'running' && r.status !== 'queued' ? r : undefined;
    }, 'the run to end');
    expect(run.status).toBe('completed');
    expect(t.app.store.attempts.listByRun(uuid).map((a) => [a.attempt, a.worker_id, a.outcome, a.cause])).toEqual([
      [1, 'w-late', 'stalled', 'first'],
      [2, 'w-late', 'completed', 'stalled'],
    ]);
    expect(t.app.store.steps.listByRun(run.id).map((s) => [s.step_name, s.status])).toEqual([['first', 'completed'], ['nap', 'completed'], ['last', 'completed']]);
    const events = t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).data;
    expect(events.filter((e) => e.topic === 'run.completed')).toHaveLength(1);
    expect(events.filter((e) => e.topic === 'run.reattempt').map((e) => JSON.parse(e.data as unknown as string).cause)).toEqual(['stalled']);
  });

  it('a worker killed with SIGKILL together with its spawner: its step group is killed at its next start; the run completes once', async () => {
    const base = tmp();
    const child = await spawnWorker('w-crash', base);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'crash.example.com', params: { nap: '120' } });
    const uuid = res.json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).json().progress?.current_step === 'nap', 'the long step on w-crash');
    const wstore = openStore(path.join(base, 'database-osm.sqlite'));
    const stepPid = await until(() => wstore.runs.getByUuid(uuid)?.current_pid, 'the step pid recorded');
    wstore.close();
    expect(groupAlive(stepPid)).toBe(true);
    // The worker and its spawner processes die at once (the step group is not their child any more).
    const spawners = childrenOf(child.pid!).filter((p) => p !== stepPid);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    for (const p of spawners) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    await exited;
    await new Promise((r) => setTimeout(r, 300));
    expect(groupAlive(stepPid)).toBe(true); // orphaned, still running

    // The same worker comes back on the same base folder: it kills the orphan and fails its stale copy.
    const again = await spawnWorker('w-crash', base);
    await until(() => !groupAlive(stepPid), 'the orphaned step group to be killed');
    const check = openStore(path.join(base, 'database-osm.sqlite'));
    try {
      // Its first copy was replaced by the re-run of the task, or is failed: never left running.
      await until(() => {
        const r = check.runs.getByUuid(uuid);
        return r && (r.status === 'failed' || r.current_pid !== stepPid);
      }, 'the stale copy to be settled');
    } finally {
      check.close();
    }
    // The task stalled and runs again (on the restarted worker); cancel the long re-run.
    await until(() => t.app.store.attempts.latest(uuid) >= 2, 'attempt 2');
    // (The worker is back under the same name by then, so the master may see it as a stall.)
    expect(['worker lost', 'stalled']).toContain(t.app.store.attempts.get(uuid, 1)?.outcome);
    expect((await api('POST', `/osm/api/runs/${uuid}/cancel`)).statusCode).toBe(200);
    await until(() => t.app.store.attempts.get(uuid, 2)?.outcome === 'cancelled', 'attempt 2 to end cancelled');
    again.kill('SIGTERM');
  });

  it("assets and findings a worker imports reach the master's database, also when the master was down", async () => {
    const w = await startInProcess('w-importer');
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'importer', target: 'shop.example.com' });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    const run = await until(() => (t.app.store.runs.getByUuid(uuid)?.status === 'completed' ? t.app.store.runs.getByUuid(uuid) : undefined), 'the import run');
    const wapp = inProcess.find((p) => p.worker === w)!.app;
    const onWorker = {
      assets: wapp.store.assets.list({ workspace: run.workspace }, { offset: 0, limit: 100 }).data.map((a) => a.url).sort(),
      vulns: wapp.store.vulns.list({ workspace: run.workspace }, { offset: 0, limit: 100 }).data.map((v) => `${v.template_id}|${v.asset_value}`).sort(),
    };
    expect(onWorker.assets.length).toBeGreaterThan(0);
    expect(onWorker.vulns.length).toBeGreaterThan(0);
    const onMaster = () => ({
      assets: t.app.store.assets.list({ workspace: run.workspace }, { offset: 0, limit: 100 }).data.map((a) => a.url).sort(),
      vulns: t.app.store.vulns.list({ workspace: run.workspace }, { offset: 0, limit: 100 }).data.map((v) => `${v.template_id}|${v.asset_value}`).sort(),
    });
    expect(onMaster()).toEqual(onWorker);
    const apiAssets = (await api('GET', `/osm/api/assets?workspace=${encodeURIComponent(run.workspace)}`)).json();
    expect(apiAssets.pagination?.total ?? apiAssets.data.length).toBe(onWorker.assets.length);
    // The run's diff snapshots are the master's, from its rows (recorded once the end committed);
    // the worker records none of its own.
    const snapshots = async (kind: 'assets' | 'vulnerabilities', runId: number) =>
      ((await api('GET', `/osm/api/${kind}/diffs?workspace=${encodeURIComponent(run.workspace)}`)).json().data as { run_id: number; total_added: number; diff_data: string }[]).filter((d) => d.run_id === runId);
    const assetDiffsOf = (runId: number) =>
      until(async () => {
        const d = await snapshots('assets', runId);
        return d.length > 0 ? d : undefined;
      }, `the asset diff snapshot of run ${runId} on the master`);
    const assetDiffs = await assetDiffsOf(run.id);
    expect(assetDiffs).toHaveLength(1);
    expect(assetDiffs[0]!.total_added).toBe(onWorker.assets.length);
    expect((JSON.parse(assetDiffs[0]!.diff_data) as { added: { url: string }[] }).added.map((a) => a.url).sort()).toEqual(onWorker.assets);
    const vulnDiffs = await snapshots('vulnerabilities', run.id);
    expect(vulnDiffs).toHaveLength(1);
    expect(vulnDiffs[0]!.total_added).toBe(onWorker.vulns.length);
    expect(wapp.store.assetDiffs.list({}, { offset: 0, limit: 10 }).total).toBe(0);

    // With the master stopped, another target: rows wait in Redis and arrive once it is back.
    detachMaster(t.app);
    await master.stop();
    const { submitted } = await (async () => {
      const m2 = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 60_000, recordsMs: 60_000, keepCompleted: 5 });
      // Submitting needs a producer: a master instance that is started, then stopped at once after submit.
      await m2.start();
      const r = t.app.store.runs.create({ workflow_name: 'importer', workflow_kind: 'module', target: 'shop2.example.com', status: 'queued', workspace: run.workspace, trigger_type: 'api', run_mode: 'distributed', priority: 'normal', params: {} });
      await m2.submit([r]);
      await m2.stop();
      return { submitted: r };
    })();
    await until(async () => (await redis.xrange(recordsKey(prefix), '-', '+')).some(([, f]) => f.join().includes('"kind":"end"') && f.join().includes(submitted.run_uuid)), 'the end record of the second run');
    // (Same workspace as the first run by the target heuristics: empty it on the master to see the rows arrive.)
    const ws = t.app.store.runs.getByUuid(submitted.run_uuid)!.workspace;
    t.app.store.db.prepare('DELETE FROM assets WHERE workspace = ?').run(ws);
    t.app.store.db.prepare('DELETE FROM vulnerabilities WHERE workspace = ?').run(ws);
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 500, recordsMs: 200, keepCompleted: 5 });
    await master.start();
    attachMaster(t.app, master);
    expect(t.app.store.runs.getByUuid(submitted.run_uuid)?.status).toBe('completed');
    expect(t.app.store.assets.list({ workspace: ws }, { offset: 0, limit: 100 }).total).toBe(onWorker.assets.length);
    expect(t.app.store.vulns.list({ workspace: ws }, { offset: 0, limit: 100 }).total).toBe(onWorker.vulns.length);
    const second = t.app.store.runs.getByUuid(submitted.run_uuid)!;
    const secondDiffs = await assetDiffsOf(second.id);
    expect(secondDiffs).toHaveLength(1);
    expect(secondDiffs[0]!.total_added).toBe(onWorker.assets.length);
  });

  it('tasks finishing while the master is stopped, with BullMQ trimming finished jobs: every run completed exactly once', async () => {
    const N = 60;
    const uuids: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: `t${i}.example.com` });
      expect(r.statusCode, r.body).toBe(202);
      uuids.push(r.json().run_uuid);
    }
    detachMaster(t.app);
    await master.stop();
    // A longer lease here: 8 runs at once on a loaded machine must not stall (that would be a legitimate re-run).
    await startInProcess('w-busy-1', 4, 10_000);
    await startInProcess('w-busy-2', 4, 10_000);
    // Every attempt started and ended (2 records per run) while no master listens.
    await until(async () => (await redis.xlen(recordsKey(prefix))) >= 2 * N, 'the records of every run', 120_000);
    const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix });
    try {
      // (An end record is written just before its job completes: wait for the queue to drain too.)
      const counts = await until(async () => {
        const c = await queue.getJobCounts('completed', 'active', 'wait', 'prioritized');
        return c.active + c.wait + c.prioritized === 0 ? c : undefined;
      }, 'the queue to drain');
      expect(counts.completed).toBeLessThanOrEqual(5); // trimmed: most finished jobs are gone from Redis
      expect(counts.active + counts.wait + counts.prioritized).toBe(0);
    } finally {
      await queue.close();
    }
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 500, recordsMs: 200, keepCompleted: 5 });
    await master.start();
    attachMaster(t.app, master);
    expectCompletedOnce(t.app, uuids, ['hello', 'bye']);
    expect(await redis.xlen(recordsKey(prefix))).toBe(0);
    // The sweep after start re-submitted nothing.
    await master.sweep();
    expect(await pendingJobs(config)).toBe(0);
  }, 240_000);

  it('operations: worker totals from attempts, distributed metrics, a warning when tasks wait and no worker is online', async () => {
    await until(async () => ((await api('GET', '/osm/api/workers')).json().data as { status: string }[]).every((w) => w.status === 'offline'), 'every worker offline');
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: 'lonely.example.com' });
    const uuid = res.json().run_uuid as string;
    const list = (await api('GET', '/osm/api/runs')).json();
    expect(list.warnings?.[0]).toMatch(/waiting and no worker online/);
    expect((await api('GET', '/osm/api/health')).json().warnings?.[0]).toMatch(/no worker online/);

    const busy = (await api('GET', '/osm/api/workers/w-busy-1')).json();
    expect(busy.totals.completed).toBeGreaterThan(0);
    const metrics = await api('GET', '/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/osm_distributed_queue_jobs\{state="(waiting|prioritized)"\} 1/);
    expect(metrics.body).toMatch(/osm_distributed_attempts\{cause="(worker lost|stalled)"\} [1-9]/);
    expect(metrics.body).toMatch(/osm_distributed_worker_attempts\{worker="w-busy-1",outcome="completed"\} [1-9]/);

    await startInProcess('w-late');
    await until(() => t.app.store.runs.getByUuid(uuid)?.status === 'completed', 'the waiting task to run');
    expect((await api('GET', '/osm/api/runs')).json().warnings).toBeUndefined();
    expect((await api('GET', '/metrics')).body).toMatch(/osm_distributed_worker_busy\{worker="w-late"\} 0/);
  });

  it('a drained worker finishes nothing new: the next task goes to another worker', async () => {
    await startInProcess('w-drained');
    const drained = await api('POST', '/osm/api/workers/w-drained/drain');
    expect(drained.statusCode, drained.body).toBe(200);
    await until(async () => (await api('GET', '/osm/api/workers/w-drained')).json().draining === true, 'the worker to report draining');
    expect((await api('POST', '/osm/api/workers/nobody/drain')).statusCode).toBe(404);
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: 'drain.example.com' });
    const uuid = res.json().run_uuid as string;
    await startInProcess('w-open');
    await until(() => t.app.store.runs.getByUuid(uuid)?.status === 'completed', 'the task on the open worker');
    expect(t.app.store.attempts.listByRun(uuid).map((a) => a.worker_id)).toEqual(['w-open']);
  });
});
