/**
 * Master and worker in this process on a real Redis (unique prefix): tasks submitted through the
 * API are executed by the worker and recorded in the master's database; workers and tasks are
 * listed; a missing workflow fails cleanly; cancel removes a waiting task and aborts a running one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import { connectionOptions, resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { applyTaskResult } from '../../src/distributed/persist.js';
import { taskResultSchema } from '../../src/distributed/protocol.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { readRecords } from '../../src/distributed/records.js';
import { dropPrefix, expectCompletedOnce, REDIS_URL, redisAvailable, testPrefix, until, writeWorkflows } from './helpers.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('distributed master and worker (BullMQ on Redis)', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let worker: DistributedWorker;
  let wapp: AppContext;
  let config: DistributedConfig;
  let queue: Queue;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(d);
    return d;
  };
  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => t.server.inject({ method, url, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const runOf = (uuid: string) => t.app.store.runs.getByUuid(uuid);
  /** The records of a run still in the stream (not yet applied and deleted by the master). */
  const recordsOf = async (uuid: string) => (await readRecords(await queue.client, prefix, 10_000)).flatMap((e) => (e.record?.run_uuid === uuid ? [e.record] : []));

  beforeAll(async () => {
    const masterWf = tmp();
    writeWorkflows(masterWf, ['quick', 'slow', 'broken', 'marker']);
    const workerWf = tmp();
    // The worker lacks `marker`: tasks of it must fail cleanly.
    writeWorkflows(workerWf, ['quick', 'slow', 'broken']);
    t = await makeSqliteTestServer({ workflowFolder: masterWf });
    config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(t.app, { config, attempts: 2, backoffMs: 50, sweepMs: 300 });
    await master.start();
    attachMaster(t.app, master);
    wapp = createAppContext({ baseFolder: tmp(), workflowFolder: workerWf });
    worker = new DistributedWorker(wapp, { config, name: 'w-test-1', concurrency: 1 });
    await worker.start();
    queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix });
  });

  afterAll(async () => {
    await worker?.stop();
    detachMaster(t.app);
    await master?.stop();
    await queue?.close();
    wapp?.close();
    await t?.close();
    await dropPrefix(prefix);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('POST /runs with run_mode distributed: the worker executes it and the master records run, steps and events', async () => {
    const res = await api('POST', '/osm/api/runs', { module: 'quick', target: 'example.com', run_mode: 'distributed' });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ message: 'Run queued', workflow: 'quick', kind: 'module', target: 'example.com', status: 'queued', run_mode: 'distributed' });
    const uuid = body.run_uuid as string;
    expect(runOf(uuid)).toMatchObject({ run_mode: 'distributed', trigger_type: 'api' });

    const done = await until(() => (runOf(uuid)?.status === 'completed' ? runOf(uuid) : undefined), 'the run to complete on the master');
    expect(done).toMatchObject({ status: 'completed', completed_steps: 2, total_steps: 2, error_message: '' });
    expect(done.started_at).toBeTruthy();
    expect(done.completed_at).toBeTruthy();

    const steps = (await api('GET', `/osm/api/runs/${uuid}/steps`)).json().data as { step_name: string; status: string; output: string }[];
    expect(steps.map((s) => [s.step_name, s.status])).toEqual([['hello', 'completed'], ['bye', 'completed']]);
    expect(steps[0]!.output).toContain('hello example.com');
    const topics = t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).data.map((e) => e.topic);
    expect(topics).toEqual(expect.arrayContaining(['run.started', 'step.completed', 'run.completed']));

    // The worker kept its own record of the run.
    expect(wapp.store.runs.getByUuid(uuid)).toMatchObject({ trigger_type: 'distributed', run_mode: 'distributed', trigger_name: 'w-test-1', status: 'completed' });
    // The master's local queue never executed it.
    expect(t.app.store.runs.listQueued(10, [])).toEqual([]);

    // A result delivered twice does not duplicate anything.
    // (The master records the worker's durable end record, written just before the job completes.)
    const job = await until(async () => ((await queue.getJobState(uuid)) === 'completed' ? Job.fromId(queue, uuid) : undefined), 'the job to complete');
    const result = taskResultSchema.parse(job.returnvalue);
    const eventsBefore = t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).total;
    const again = await applyTaskResult(t.app, runOf(uuid)!, result);
    expect(again.transitioned).toBe(false);
    expect(again.steps).toEqual({ inserted: 0, updated: 2 });
    expect(again.events).toBe(0);
    expect(t.app.store.steps.listByRun(done.id)).toHaveLength(2);
    expect(t.app.store.events.list({ run_id: uuid }, { offset: 0, limit: 100 }).total).toBe(eventsBefore);
  });

  it('/workers shows the worker busy then idle; /tasks shows the task running then completed', async () => {
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'slow.example.com', params: { nap: '2' } });
    expect(res.statusCode, res.body).toBe(202);
    const { task_id, run_uuid, message } = res.json();
    expect(message).toBe('Task submitted');
    expect(task_id).toBe(run_uuid);

    const busy = await until(async () => {
      const w = (await api('GET', '/osm/api/workers')).json();
      return w.data.find((x: { id: string; status: string }) => x.id === 'w-test-1' && x.status === 'busy') ? w : undefined;
    }, 'the worker to be busy');
    expect(busy.count).toBe(busy.data.length);
    const one = (await api('GET', '/osm/api/workers/w-test-1')).json();
    expect(one).toMatchObject({ id: 'w-test-1', hostname: os.hostname(), status: 'busy', current_task: task_id });
    expect(Object.keys(one)).toEqual(expect.arrayContaining(['id', 'hostname', 'status', 'current_task', 'joined_at', 'last_heartbeat', 'tasks_complete', 'tasks_failed']));

    const running = await until(async () => {
      const lists = (await api('GET', '/osm/api/tasks')).json();
      return lists.running.find((x: { id: string }) => x.id === task_id);
    }, 'the task to be listed as running');
    expect(running).toMatchObject({ run_uuid, workflow_name: 'slow', target: 'slow.example.com', status: 'running', worker_id: 'w-test-1', attempts: 0 });
    expect((await api('GET', `/osm/api/tasks/${task_id}`)).json()).toMatchObject({ id: task_id, status: 'running', run: { run_uuid } });
    await until(() => runOf(run_uuid)?.status === 'running', 'the master to mark the run running');

    await until(() => runOf(run_uuid)?.status === 'completed', 'the slow run to complete');
    const idle = await until(async () => {
      const w = (await api('GET', '/osm/api/workers/w-test-1')).json();
      return w.status === 'idle' ? w : undefined;
    }, 'the worker to be idle again');
    expect(idle.current_task).toBeNull();
    expect(idle.tasks_complete).toBeGreaterThanOrEqual(2);
    const lists = (await api('GET', '/osm/api/tasks')).json();
    expect(Object.keys(lists).sort()).toEqual(['completed', 'failed', 'running', 'waiting']);
    expect(lists.completed.find((x: { id: string }) => x.id === task_id)).toMatchObject({ status: 'completed', run_status: 'completed', worker_id: 'w-test-1' });
    expect(t.app.store.steps.listByRun(runOf(run_uuid)!.id).map((s) => s.step_name)).toEqual(['first', 'nap', 'last']);
  });

  it('a workflow the worker does not have: the task waits (no attempt used) and says why; cancel removes it', async () => {
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'marker', target: 'm.example.com' });
    expect(res.statusCode, res.body).toBe(202);
    const uuid = res.json().run_uuid as string;
    // The worker fetches it, cannot take it and gives it back (routing, docs/distributed.md).
    await until(async () => (await api('GET', '/osm/api/workers/w-test-1')).json().refused?.some((r: { run_uuid: string }) => r.run_uuid === uuid), 'the worker to give the task back');
    const run = await until(async () => {
      const r = (await api('GET', `/osm/api/runs/${uuid}`)).json().data;
      return r.status === 'queued' && r.waiting_reason ? r : undefined;
    }, 'the waiting reason');
    expect(run.waiting_reason).toBe('no online worker has workflow marker');
    expect(run.attempts).toEqual([]);
    const task = await until(async () => {
      const x = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
      return x.status === 'waiting' ? x : undefined;
    }, 'the task to wait');
    expect(task).toMatchObject({ attempts: 0, waiting_reason: 'no online worker has workflow marker' });
    expect((await api('POST', `/osm/api/runs/${uuid}/cancel`)).statusCode).toBe(200);
    await until(async () => (await api('GET', `/osm/api/tasks/${uuid}`)).statusCode === 404, 'the waiting task to be removed');
    expect(runOf(uuid)?.status).toBe('cancelled');
  });

  it('a workflow that fails is a failed run in a completed task (no retry)', async () => {
    const res = await api('POST', '/osm/api/runs', { module: 'broken', target: 'b.example.com', run_mode: 'distributed' });
    const uuid = res.json().run_uuid as string;
    const run = await until(() => (runOf(uuid)?.status === 'failed' ? runOf(uuid) : undefined), 'the broken run to fail');
    expect(run.error_message).not.toBe('');
    const steps = t.app.store.steps.listByRun(run.id).map((s) => [s.step_name, s.status]);
    expect(steps).toEqual([['ok', 'completed'], ['boom', 'failed']]);
    const task = await until(async () => {
      const v = (await api('GET', `/osm/api/tasks/${uuid}`)).json();
      return v.status === 'completed' ? v : undefined;
    }, 'the job to complete');
    expect(task).toMatchObject({ status: 'completed', run_status: 'failed', attempts: 1 });
  });

  it('cancel: a waiting task is removed from the queue, a running one is aborted on its worker', async () => {
    const a = (await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'a.example.com', params: { nap: '40' } })).json().run_uuid as string;
    await until(async () => (await api('GET', `/osm/api/tasks/${a}`)).json().status === 'running', 'task A to run');
    const b = (await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: 'b.example.com' })).json().run_uuid as string;
    expect((await api('GET', `/osm/api/tasks/${b}`)).json().status).toBe('waiting');
    expect((await api('GET', '/osm/api/tasks')).json().waiting.map((x: { id: string }) => x.id)).toContain(b);

    const cancelB = await api('DELETE', `/osm/api/runs/${b}`);
    expect(cancelB.statusCode, cancelB.body).toBe(200);
    await until(async () => (await api('GET', `/osm/api/tasks/${b}`)).statusCode === 404, 'the waiting task to be removed');
    expect((await api('GET', `/osm/api/tasks/${b}`)).json()).toEqual({ error: true, message: `task not found: ${b}` });
    expect(runOf(b)?.status).toBe('cancelled');

    await until(async () => (await api('GET', `/osm/api/tasks/${a}`)).json().progress?.current_step === 'nap', 'task A to report its long step');
    const cancelA = await api('POST', `/osm/api/runs/${a}/cancel`);
    expect(cancelA.statusCode, cancelA.body).toBe(200);
    const task = await until(async () => {
      const v = (await api('GET', `/osm/api/tasks/${a}`)).json();
      return v.status === 'completed' ? v : undefined;
    }, 'the running task to end');
    expect(task.run_status).toBe('cancelled');
    const run = runOf(a)!;
    expect(run.status).toBe('cancelled');
    // The worker's steps travelled back: the long step did not finish.
    const nap = t.app.store.steps.listByRun(run.id).find((s) => s.step_name === 'nap');
    expect(nap?.status).not.toBe('completed');
    expect(t.app.store.steps.listByRun(run.id).map((s) => s.step_name)).not.toContain('last');
    await until(async () => (await api('GET', '/osm/api/workers/w-test-1')).json().status === 'idle', 'the worker to be idle');
  });

  it('a forged task (written straight into Redis) fails cleanly on the worker and executes nothing', async () => {
    const good = { v: 1, workflow_name: 'quick', workflow_kind: 'module', target: 'ok.example.com', params: {}, submitted_at: new Date().toISOString() };
    const cases: [string, Record<string, unknown>, string][] = [
      ['c0ffee00-0000-4000-8000-000000000001', { ...good, workflow_name: '../../../etc/passwd' }, 'invalid workflow name in task'],
      ['c0ffee00-0000-4000-8000-000000000002', { ...good, target: 'a.com;id' }, 'contains forbidden character ";"'],
      ['c0ffee00-0000-4000-8000-000000000003', { ...good, params: { x: '$(id)' } }, 'contains forbidden character'],
      ['c0ffee00-0000-4000-8000-000000000004', { ...good, options: { space: '../../outside' } }, 'is not a valid workspace name'],
      ['c0ffee00-0000-4000-8000-000000000005', { hello: 'world' }, 'invalid task data'],
    ];
    for (const [id, data] of cases) await queue.add('run', { ...data, ...(data.hello ? {} : { run_uuid: id }) }, { jobId: id, attempts: 1 });
    for (const [id, , message] of cases) {
      await until(async () => (await queue.getJobState(id)) === 'failed', `forged task ${id} to fail`);
      const job = (await Job.fromId(queue, id))!;
      expect(job.failedReason).toContain(message);
      expect(wapp.store.runs.getByUuid(id)).toBeUndefined();
      // Not a run of the master: nothing recorded there either.
      expect(runOf(id)).toBeUndefined();
    }
  });

  it('a result that arrives while the master is down is recorded when it comes back', async () => {
    const res = await api('POST', '/osm/api/tasks', { workflow_name: 'slow', target: 'restart.example.com', params: { nap: '1' } });
    const uuid = res.json().run_uuid as string;
    await until(() => runOf(uuid)?.status === 'running', 'the run to start');
    detachMaster(t.app);
    await master.stop();
    await until(async () => (await queue.getJobState(uuid)) === 'completed', 'the worker to finish while the master is down');
    expect(runOf(uuid)?.status).toBe('running');

    master = new DistributedMaster(t.app, { config, attempts: 2, backoffMs: 50, sweepMs: 300 });
    await master.start();
    attachMaster(t.app, master);
    const run = await until(() => (runOf(uuid)?.status === 'completed' ? runOf(uuid) : undefined), 'the new master to record the run');
    expect(t.app.store.steps.listByRun(run.id).map((s) => s.step_name)).toEqual(['first', 'nap', 'last']);
  });

  it('a result whose transaction fails stays in the record stream and is recorded once when the database accepts it', async () => {
    const real = t.app.repos;
    let refused = 0;
    // The master's writes of a result fail (a database refusing them) until restored.
    t.app.repos = {
      ...real,
      steps: {
        ...real.steps,
        importForRun: async () => {
          refused++;
          throw new Error('database refused the write');
        },
      },
    };
    let uuid = '';
    try {
      const res = await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: 'refused.example.com' });
      uuid = res.json().run_uuid as string;
      await until(() => refused >= 2, 'the master to try to record the result');
      // Nothing of the result was written (one transaction), and its end record was not deleted.
      expect(runOf(uuid)?.status).toBe('running');
      expect(t.app.store.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 }).total).toBe(0);
      expect((await recordsOf(uuid)).map((r) => r.kind)).toContain('end');
    } finally {
      t.app.repos = real;
    }
    await until(() => (runOf(uuid)?.status === 'completed' ? runOf(uuid) : undefined), 'the result to be recorded once the database accepts it');
    expectCompletedOnce(t.app, [uuid], ['hello', 'bye']);
    await until(async () => (await recordsOf(uuid)).length === 0, 'its records to leave the stream');
  });
});
