/**
 * The master's routes: 400 without --master (no rows created), 401 without credentials, every
 * validation message of POST /tasks and of POST /runs in distributed mode, 404s, the `limit`
 * bounds of GET /tasks, and that the daemon's local queue never executes a distributed run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { connectionOptions, resolveDistributedConfig } from '../../src/distributed/redis-config.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { createRuns } from '../../src/services/runs.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until, writeWorkflows } from './helpers.js';

const NO_MASTER = 'Distributed mode requires the server to be started with --master flag';

const ROUTES: { method: 'GET' | 'POST'; url: string; payload?: object }[] = [
  { method: 'GET', url: '/osm/api/workers' },
  { method: 'GET', url: '/osm/api/workers/w1' },
  { method: 'GET', url: '/osm/api/tasks' },
  { method: 'GET', url: '/osm/api/tasks/abc' },
  { method: 'POST', url: '/osm/api/tasks', payload: { workflow_name: 'quick', target: 'example.com' } },
  { method: 'POST', url: '/osm/api/runs', payload: { module: 'quick', target: 'example.com', run_mode: 'distributed' } },
];

let wfDir: string;
beforeAll(() => {
  wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  writeWorkflows(wfDir, ['quick']);
});
afterAll(() => fs.rmSync(wfDir, { recursive: true, force: true }));

describe('distributed routes without --master', () => {
  let t: SqliteTestServer;
  beforeAll(async () => {
    t = await makeSqliteTestServer({ workflowFolder: wfDir });
  });
  afterAll(async () => t.close());

  it.each(ROUTES)('$method $url → 400 without a master, and nothing is created', async ({ method, url, payload }) => {
    const res = await t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: NO_MASTER });
    expect(t.app.store.runs.list({}, { offset: 0, limit: 10 }).total).toBe(0);
  });

  it.each(ROUTES)('$method $url → 401 without credentials', async ({ method, url, payload }) => {
    const res = await t.server.inject({ method, url, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe(true);
  });

  it('POST /runs in distributed mode validates before saying a master is needed', async () => {
    const bad = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', targets: 'x', params: { a: 1 }, run_mode: 'distributed' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/targets: .*; params\.a: /);
    const missing = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'nope', target: 'example.com', run_mode: 'distributed' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('Workflow not found');
    const hostile = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', target: 'a.com;id', run_mode: 'distributed' } });
    expect(hostile.statusCode).toBe(400);
    expect(hostile.json().message).toContain('contains forbidden character ";"');
  });

  it('a local POST /runs still goes to the local queue', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', target: 'local.example.com' } });
    expect(res.statusCode, res.body).toBe(202);
    expect(t.app.store.runs.getByUuid(res.json().run_uuid)).toMatchObject({ run_mode: 'local', status: 'queued' });
  });
});

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('distributed routes with a master (no worker)', () => {
  const prefix = testPrefix();
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let queue: Queue;
  const post = (payload: object) => t.server.inject({ method: 'POST', url: '/osm/api/tasks', headers: t.auth, payload });

  beforeAll(async () => {
    // withQueue: the local run queue is running, and must leave distributed runs alone.
    t = await makeSqliteTestServer({ workflowFolder: wfDir, withQueue: true });
    const config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(t.app, { config, sweepMs: 60_000 });
    await master.start();
    attachMaster(t.app, master);
    queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix });
  });
  afterAll(async () => {
    detachMaster(t.app);
    await master?.stop();
    await queue?.close();
    await t?.close();
    await dropPrefix(prefix);
  });

  it.each([
    [{}, 400, 'workflow_name is required'],
    [{ workflow_name: '  ' }, 400, 'workflow_name is required'],
    [{ workflow_name: 'quick' }, 400, 'target is required'],
    [{ workflow_name: 'quick', target: 'a.com;id' }, 400, 'target "a.com;id" contains forbidden character ";"'],
    [{ workflow_name: 'quick', target: '-oProxyCommand=x' }, 400, 'must not start with "-"'],
    [{ workflow_name: 'quick', target: 'a.com', params: { x: '$(id)' } }, 400, 'params["x"] contains forbidden character'],
    [{ workflow_name: 'nope', target: 'a.com' }, 404, 'Workflow not found'],
    [{ workflow_name: '../../etc/passwd', target: 'a.com' }, 400, 'Invalid workflow name'],
    [{ workflow_name: 'quick', workflow_kind: 'flow', target: 'a.com' }, 400, "'quick' is a module, not a flow"],
    [{ workflow_name: 'quick', target: 'a.com', priority: 'urgent' }, 400, 'Invalid priority'],
  ])('POST /tasks %j → %i %s', async (payload, status, message) => {
    const res = await post(payload);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().error).toBe(true);
    expect(res.json().message).toContain(message);
  });

  it('POST /tasks reports every schema issue at once', async () => {
    const res = await post({ workflow_name: 5, target: ['x'], params: { a: 1 }, workflow_kind: 'job' });
    expect(res.statusCode).toBe(400);
    const msg = res.json().message as string;
    for (const field of ['workflow_name', 'target', 'params.a', 'workflow_kind']) expect(msg).toContain(`${field}: `);
  });

  it('rejected requests leave no run and no task behind', async () => {
    expect(t.app.store.runs.list({}, { offset: 0, limit: 10 }).total).toBe(0);
    const counts = await queue.getJobCounts();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('POST /tasks queues a task that the local run queue never claims', async () => {
    const res = await post({ workflow: 'quick', target: 'example.com', params: { greeting: 'hi' }, priority: 'high' });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ message: 'Task submitted', workflow: 'quick', kind: 'module', target: 'example.com', status: 'queued', priority: 'high' });
    expect(body.task_id).toBe(body.run_uuid);
    t.queue!.kick();
    expect(t.queue!.active()).toEqual([]);
    const run = t.app.store.runs.getByUuid(body.run_uuid)!;
    expect(run).toMatchObject({ status: 'queued', run_mode: 'distributed', priority: 'high' });
    const task = (await t.server.inject({ method: 'GET', url: `/osm/api/tasks/${body.task_id}`, headers: t.auth })).json();
    expect(task).toMatchObject({ id: body.task_id, run_uuid: body.run_uuid, status: 'waiting', workflow_name: 'quick', target: 'example.com', priority: 'high', worker_id: null, run: { run_uuid: body.run_uuid, status: 'queued' } });
    // Adding the same run twice is a no-op (job id = run_uuid).
    await master.submit([run]);
    expect((await queue.getJobCounts()).prioritized).toBe(1);
  });

  it('POST /runs distributed with several targets: one run and one task per target', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', targets: ['one.example.com', 'two.example.com', 'one.example.com'], run_mode: 'distributed', priority: 'low' } });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ target_count: 2, targets: ['one.example.com', 'two.example.com'], run_mode: 'distributed', status: 'queued' });
    const runs = t.app.store.runs.byGroup(body.job_id);
    expect(runs.map((r) => [r.target, r.run_mode, r.status])).toEqual([
      ['one.example.com', 'distributed', 'queued'],
      ['two.example.com', 'distributed', 'queued'],
    ]);
    const lists = (await t.server.inject({ method: 'GET', url: '/osm/api/tasks', headers: t.auth })).json();
    expect(lists.running).toEqual([]);
    expect(lists.waiting.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining(runs.map((r) => r.run_uuid)));
    // High priority first.
    expect(lists.waiting[0].priority).toBe('high');
  });

  it('GET /tasks limit bounds', async () => {
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const res = await t.server.inject({ method: 'GET', url: `/osm/api/tasks?limit=${bad}`, headers: t.auth });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().message).toContain('limit');
    }
    const one = (await t.server.inject({ method: 'GET', url: '/osm/api/tasks?limit=1', headers: t.auth })).json();
    expect(one.waiting).toHaveLength(1);
    const capped = await t.server.inject({ method: 'GET', url: '/osm/api/tasks?limit=999999', headers: t.auth });
    expect(capped.statusCode).toBe(200);
  });

  it('404s name what was not found', async () => {
    const w = await t.server.inject({ method: 'GET', url: '/osm/api/workers/nobody', headers: t.auth });
    expect(w.statusCode).toBe(404);
    expect(w.json()).toEqual({ error: true, message: 'Worker not found' });
    const task = await t.server.inject({ method: 'GET', url: '/osm/api/tasks/no-such-task', headers: t.auth });
    expect(task.statusCode).toBe(404);
    expect(task.json()).toEqual({ error: true, message: 'task not found: no-such-task' });
    const workers = (await t.server.inject({ method: 'GET', url: '/osm/api/workers', headers: t.auth })).json();
    expect(workers).toEqual({ data: [], count: 0 });
  });

  it('the sweep gives a task to a queued distributed run that has none (created while Redis was away, or started later)', async () => {
    const created = await createRuns(t.app, { workflow: 'quick', targets: ['late.example.com'], status: 'queued', runMode: 'distributed' });
    const uuid = created.runs[0]!.run_uuid;
    expect(await queue.getJobState(uuid)).toBe('unknown');
    await master.sweep();
    expect(await queue.getJobState(uuid)).toBe('prioritized');
  });

  it('cancelling a waiting distributed run removes its task', async () => {
    const res = await post({ workflow_name: 'quick', target: 'cancel.example.com' });
    const uuid = res.json().run_uuid as string;
    expect(await queue.getJobState(uuid)).toBe('prioritized');
    const del = await t.server.inject({ method: 'DELETE', url: `/osm/api/runs/${uuid}`, headers: t.auth });
    expect(del.statusCode, del.body).toBe(200);
    await until(async () => (await queue.getJobState(uuid)) === 'unknown', 'the task to be removed');
    expect(t.app.store.runs.getByUuid(uuid)?.status).toBe('cancelled');
  });

  it('a run cancelled while the master was down has its waiting task removed when the master starts', async () => {
    const uuid = (await post({ workflow_name: 'quick', target: 'down.example.com' })).json().run_uuid as string;
    detachMaster(t.app);
    await master.stop();
    const del = await t.server.inject({ method: 'DELETE', url: `/osm/api/runs/${uuid}`, headers: t.auth });
    expect(del.statusCode, del.body).toBe(200);
    expect(await queue.getJobState(uuid)).toBe('prioritized');
    master = new DistributedMaster(t.app, { config: resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix }), sweepMs: 60_000 });
    await master.start();
    attachMaster(t.app, master);
    expect(await queue.getJobState(uuid)).toBe('unknown');
  });
});
