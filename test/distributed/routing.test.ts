/**
 * Issue 15, "routing and operations": workers advertise their workflows, tools and labels; a task
 * goes only to a worker that has its workflow, its declared tools and its requested labels (a
 * worker that fetches one it cannot take gives it back without using an attempt); a task no
 * online worker can take says why, then runs when a capable worker joins. CLI: the totals column
 * of `osm worker status` and the queue warnings of `osm health`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { attachMaster, detachMaster } from '../../src/distributed/attach.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import { resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until, writeWorkflows } from './helpers.js';

const hasRedis = await redisAvailable();

/** A tool no machine has: only a worker whose binaries folder holds it can take `needy` tasks. */
const TOOL = 'osm-routing-test-tool';

interface Attempt {
  attempt: number;
  worker_id: string;
  outcome: string;
}
interface RunData {
  status: string;
  worker: string;
  attempts: Attempt[];
  waiting_reason?: string;
}

describe.skipIf(!hasRedis)('routing of distributed tasks by workflow, tools and labels', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  const inProcess: { worker: DistributedWorker; app: AppContext }[] = [];
  let masterWf: string;
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let config: DistributedConfig;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(d);
    return d;
  };
  const api = (method: 'GET' | 'POST', url: string, payload?: object) => t.server.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });

  /** A workflows folder with these test modules (plus `needy`, which declares TOOL, when asked). */
  function workflowsWith(names: ('quick' | 'slow')[], needy = false): string {
    const dir = tmp();
    writeWorkflows(dir, names);
    if (needy) {
      fs.writeFileSync(
        path.join(dir, 'modules', 'needy.yaml'),
        ['kind: module', 'name: needy', 'description: needs a tool', 'dependencies:', '  commands:', `    - ${TOOL}`, 'steps:', '  - name: use', '    type: bash', `    command: ${TOOL} {{Target}}`, ''].join('\n'),
      );
    }
    return dir;
  }

  async function startWorker(name: string, workflowFolder: string, opts: { labels?: string[]; withTool?: boolean; concurrency?: number } = {}): Promise<DistributedWorker> {
    const app = createAppContext({ baseFolder: tmp(), workflowFolder });
    if (opts.withTool) {
      const bin = app.settings().paths.binaries;
      fs.mkdirSync(bin, { recursive: true });
      fs.writeFileSync(path.join(bin, TOOL), '#!/bin/sh\necho "tool ran on $1"\n', { mode: 0o755 });
    }
    const worker = new DistributedWorker(app, { config, name, concurrency: opts.concurrency ?? 1, labels: opts.labels, lockDurationMs: 3000, stalledIntervalMs: 500 });
    inProcess.push({ worker, app });
    await worker.start();
    return worker;
  }

  async function submit(workflow: string, target: string, labels?: string[]): Promise<string> {
    const r = await api('POST', '/osm/api/tasks', { workflow_name: workflow, target, ...(labels ? { labels } : {}) });
    expect(r.statusCode, r.body).toBe(202);
    return (r.json() as { run_uuid: string }).run_uuid;
  }

  const runOf = async (uuid: string) => (await api('GET', `/osm/api/runs/${uuid}`)).json().data as RunData;
  const completed = (uuids: string[]) =>
    until(async () => {
      const runs = await Promise.all(uuids.map(runOf));
      return runs.every((r) => r.status === 'completed') ? runs : undefined;
    }, 'every run to complete', 150_000);

  beforeAll(async () => {
    masterWf = workflowsWith(['quick', 'slow'], true);
    t = await makeSqliteTestServer({ workflowFolder: masterWf });
    config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(t.app, { config, attempts: 3, backoffMs: 200, sweepMs: 500, recordsMs: 200 });
    await master.start();
    attachMaster(t.app, master);
  });

  afterEach(async () => {
    for (const { worker, app } of inProcess.splice(0)) {
      await worker.stop();
      app.close();
    }
  });

  afterAll(async () => {
    detachMaster(t.app);
    await master?.stop();
    await t?.close();
    await dropPrefix(prefix);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('workers advertise workflows, tools and labels; only the one with the workflow runs its tasks, no attempt is used up', async () => {
    await startWorker('has-quick', workflowsWith(['quick']));
    const other = await startWorker('no-quick', workflowsWith(['slow']), { labels: ['gpu', 'region=eu'], concurrency: 2 });
    const workers = (await api('GET', '/osm/api/workers')).json() as { data: { id: string; workflows: string[]; tools: string[]; labels: string[] }[] };
    expect(workers.data.find((w) => w.id === 'has-quick')).toMatchObject({ workflows: ['quick'], tools: [], labels: [] });
    expect(workers.data.find((w) => w.id === 'no-quick')).toMatchObject({ workflows: ['slow'], labels: ['gpu', 'region=eu'] });

    const uuids: string[] = [];
    for (let i = 0; i < 6; i++) uuids.push(await submit('quick', `q${i}.example.com`));
    const runs = await completed(uuids);
    for (const r of runs) {
      expect(r.worker).toBe('has-quick');
      expect(r.attempts.map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([[1, 'has-quick', 'completed']]);
    }
    const one = (await api('GET', `/osm/api/workers/${other.id}`)).json() as { totals: Record<string, number>; refused: { reason: string }[] };
    expect(one.totals).toEqual({});
    for (const r of one.refused) expect(r.reason).toBe('no workflow quick');
  }, 180_000);

  it('a task asking for a label goes only to a worker that has it', async () => {
    const wf = workflowsWith(['quick']);
    await startWorker('plain', wf, { concurrency: 2 });
    await startWorker('gpu-box', wf, { labels: ['gpu=a100'] });
    const uuids: string[] = [];
    for (let i = 0; i < 4; i++) uuids.push(await submit('quick', `l${i}.example.com`, ['gpu']));
    const task = (await api('GET', `/osm/api/tasks/${uuids[0]}`)).json() as { requires: { labels: string[] } };
    expect(task.requires.labels).toEqual(['gpu']);
    const runs = await completed(uuids);
    for (const r of runs) expect(r.attempts.map((a) => [a.worker_id, a.outcome])).toEqual([['gpu-box', 'completed']]);
    // A bad label is refused before anything is created.
    const bad = await api('POST', '/osm/api/tasks', { workflow_name: 'quick', target: 'x.example.com', labels: ['no spaces'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: true });
    expect(bad.json().message).toContain('labels.0');
  }, 180_000);

  it('a task no online worker can take says why (API, health, osm health), then runs when a capable worker joins', async () => {
    // The master's base folder, with Redis configured, is where `osm health` and `osm worker status` run.
    const redisUrl = new URL(REDIS_URL);
    const env = { OSM_REDIS_PREFIX: prefix };
    const set = await runOsm(['-b', t.base, 'config', 'set', 'redis.host', redisUrl.hostname], { env });
    expect(set.code, set.stderr).toBe(0);
    await runOsm(['-b', t.base, 'config', 'set', 'redis.port', redisUrl.port || '6379'], { env });

    // No worker online at all.
    const early = await submit('needy', 'n0.example.com');
    await until(async () => ((await runOf(early)).waiting_reason === 'no worker online' ? true : undefined), 'the no-worker reason');
    const h0 = await runOsm(['-b', t.base, 'health'], { env });
    expect(h0.stdout).toMatch(/▶ Distributed\n {2}⚠ \d+ distributed task\(s\) waiting and no worker online/);

    // A worker with the workflow but without its tool: it gives the task back, no attempt.
    const lacking = await startWorker('no-tool', workflowsWith(['quick'], true));
    const uuid = await submit('needy', 'n1.example.com');
    const reason = await until(async () => (await runOf(uuid)).waiting_reason, 'a waiting reason');
    expect(reason).toBe(`needs tools: ${TOOL}`);
    await until(async () => ((await api('GET', `/osm/api/workers/${lacking.id}`)).json() as { refused: { run_uuid: string; reason: string }[] }).refused.find((r) => r.run_uuid === uuid), 'the worker to give the task back');
    // Given back, not started: queued, no attempt (the fetch may flip it to running for a moment).
    const r1 = await until(async () => {
      const r = await runOf(uuid);
      return r.status === 'queued' ? r : undefined;
    }, 'the run to be queued');
    expect(r1.attempts).toEqual([]);
    const expected = `2 distributed task(s) waiting that no online worker can take: needs tools: ${TOOL}`;
    const list = await until(async () => {
      const l = (await api('GET', '/osm/api/runs')).json() as { warnings?: string[] };
      return l.warnings?.includes(expected) ? l : undefined;
    }, 'the run list warning');
    await until(async () => ((await api('GET', '/osm/api/health')).json() as { warnings?: string[] }).warnings?.includes(expected), 'the health warning');
    const tasks = (await api('GET', '/osm/api/tasks')).json() as { waiting: { id: string; waiting_reason?: string }[] };
    expect(tasks.waiting.find((x) => x.id === uuid)?.waiting_reason).toBe(`needs tools: ${TOOL}`);
    const cli = await until(async () => {
      const r = await runOsm(['-b', t.base, 'health'], { env });
      return r.stdout.includes(expected) ? r : undefined;
    }, 'osm health to print the warning');
    expect(cli.stdout).toContain(`▶ Distributed\n  ⚠ ${expected}`);
    const cliJson = await runOsm(['-b', t.base, 'health', '--json'], { env });
    expect((JSON.parse(cliJson.stdout) as { warnings: string[] }).warnings).toEqual([expected]);

    // A capable worker joins: both tasks run there, each in one attempt.
    await startWorker('has-tool', workflowsWith([], true), { withTool: true });
    const runs = await completed([early, uuid]);
    for (const r of runs) {
      expect(r.waiting_reason).toBeUndefined();
      expect(r.attempts.map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([[1, 'has-tool', 'completed']]);
    }
    expect((await api('GET', '/osm/api/health')).json().warnings).toBeUndefined();

    // `osm worker status` on the master's machine: a totals column from its run_attempts, labels.
    const status = await runOsm(['-b', t.base, 'worker', 'status', '--redis-url', REDIS_URL, '--redis-prefix', prefix], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('Totals');
    expect(status.stdout).toMatch(/has-quick.*6 completed/);
    expect(status.stdout).toMatch(/gpu-box.*4 completed/);
    expect(status.stdout).toMatch(/has-tool.*2 completed/);
    const json = await runOsm(['-b', t.base, 'worker', 'status', '--json', '--redis-url', REDIS_URL, '--redis-prefix', prefix], { env });
    const listed = JSON.parse(json.stdout) as { data: { id: string; totals: Record<string, number>; tools: string[]; labels: string[] }[] };
    expect(listed.data.find((w) => w.id === 'has-tool')).toMatchObject({ totals: { completed: 2 }, tools: [TOOL] });
    expect(listed.data.find((w) => w.id === 'gpu-box')).toMatchObject({ totals: { completed: 4 }, labels: ['gpu=a100'] });
  }, 180_000);
});
