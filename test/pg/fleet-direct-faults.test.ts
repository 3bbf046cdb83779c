/**
 * Workers writing straight into the master's PostgreSQL database (issue 15, shared-database
 * mode) under faults: a worker paused past its lease, a worker stopped gracefully mid-step, and a
 * worker killed together with its spawners. Every run completes exactly once, with one set of
 * steps, every attempt recorded, and the stale worker's writes refused by the database fence.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseDocument } from 'yaml';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { createMigratedPgDatabase, pgAvailable, type PgDatabase } from '../helpers/pg.js';
import { childrenOf, dropPrefix, groupAlive, REDIS_URL, redisAvailable, testPrefix, until, writeWorkflows } from '../distributed/helpers.js';
import { createAppContext, openAppContext, type AppContext, type SqliteAppContext } from '../../src/services/context.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { DistributedWorker } from '../../src/distributed/worker.js';
import type { LeaseWatch } from '../../src/distributed/lease-watch.js';
import { resolveDistributedConfig, type DistributedConfig } from '../../src/distributed/redis-config.js';
import { openPgStore } from '../../src/store/pg/store.js';
import type { AsyncStore } from '../../src/store/async.js';

const ready = (await redisAvailable()) && (await pgAvailable('fleet writing straight into PostgreSQL'));

describe.skipIf(!ready)('workers writing straight into the shared PostgreSQL database, under faults', () => {
  const prefix = testPrefix();
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const heirs: { worker: DistributedWorker; app: SqliteAppContext; shared: AsyncStore }[] = [];
  let pg: PgDatabase;
  let wfDir: string;
  let app: AppContext;
  let master: DistributedMaster;
  let config: DistributedConfig;

  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-pgdirect-'));
    dirs.push(d);
    return d;
  };

  async function spawnWorker(name: string, base: string): Promise<{ child: ChildProcess; out: () => string }> {
    const child = spawn(
      process.execPath,
      [BIN, '-b', base, '-F', wfDir, 'worker', 'join', '--redis-url', REDIS_URL, '--redis-prefix', prefix, '--name', name, '--lock-duration', '3000', '--stalled-interval', '500'],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', OSM_DATABASE_URL: pg.url }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    await until(() => out.includes(`worker ${name} joined`) || child.exitCode !== null, `worker ${name} to join`);
    if (child.exitCode !== null) throw new Error(`worker ${name} exited: ${out}`);
    expect(out).toContain('written straight into it');
    return { child, out: () => out };
  }

  /** An in-process worker on the shared database (its own SQLite file stays empty). */
  async function startHeir(name: string): Promise<DistributedWorker> {
    const wapp = createAppContext({ baseFolder: tmp(), workflowFolder: wfDir });
    const shared = await openPgStore(pg.url, { migrate: false, max: 2 });
    const worker = new DistributedWorker(wapp, { log: (m: string, f?: Record<string, unknown>) => void heirLog.push(`${m} ${JSON.stringify(f ?? {})}`), config, name, lockDurationMs: 3000, stalledIntervalMs: 500, maxStalledCount: 1, shared: { repos: shared, url: pg.url, storeId: await shared.maintenance.storeId() } });
    heirs.push({ worker, app: wapp, shared });
    await worker.start();
    return worker;
  }

  async function submit(target: string, nap: string): Promise<string> {
    const run = await app.repos.runs.create({ workflow_name: 'slow', workflow_kind: 'module', target, status: 'queued', workspace: target, trigger_type: 'api', run_mode: 'distributed', priority: 'normal', params: { nap } });
    await master.submit([run]);
    return run.run_uuid;
  }

  const heirLog: string[] = [];
  const completed = async (uuid: string) => {
    try {
      return await until(async () => ((await app.repos.runs.getByUuid(uuid))?.status === 'completed' ? app.repos.runs.getByUuid(uuid) : undefined), `run ${uuid} to complete`, 60_000);
    } catch (e) {
      const r = await app.repos.runs.getByUuid(uuid);
      // What the run looks like when it did not complete (printed on a failure only).
      const steps = r ? await app.repos.steps.listByRun(r.id) : [];
      console.log(`run ${uuid} did not complete:`, JSON.stringify({ run: r, attempts: await app.repos.attempts.listByRun(uuid), steps: steps.map((x) => [x.step_name, x.status, x.error_message]) }), `\nin-process workers' log:\n${heirLog.join('\n')}`);
      throw e;
    }
  };

  /** One set of steps, one run.completed event, the attempts as expected. */
  async function expectOnce(uuid: string, attempts: [number, string, string, string][]) {
    const run = (await completed(uuid))!;
    expect((await app.repos.steps.listByRun(run.id)).map((s) => [s.step_name, s.status])).toEqual([['first', 'completed'], ['nap', 'completed'], ['last', 'completed']]);
    expect((await app.repos.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 })).total).toBe(1);
    await until(async () => (await app.repos.attempts.get(uuid, attempts.length))?.ended_at, 'the last attempt to be recorded as ended');
    expect((await app.repos.attempts.listByRun(uuid)).map((a) => [a.attempt, a.worker_id, a.outcome, a.cause])).toEqual(attempts);
    expect(run.fence_attempt).toBe(attempts.length);
    expect(run.owner_pid).toBe(process.pid);
  }

  beforeAll(async () => {
    pg = await createMigratedPgDatabase('osm_direct');
    wfDir = tmp();
    writeWorkflows(wfDir, ['slow']);
    app = await openAppContext({ baseFolder: tmp(), workflowFolder: wfDir, databaseUrl: pg.url });
    config = resolveDistributedConfig(app.settings(), { redisUrl: REDIS_URL, prefix });
    master = new DistributedMaster(app, { config, attempts: 1, sweepMs: 500, recordsMs: 200, keepCompleted: 5 });
    await master.start();
  });

  afterEach(async () => {
    for (const h of heirs.splice(0)) {
      await h.worker.stop();
      await h.shared.close();
      h.app.close();
    }
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await master?.stop();
    await app?.close();
    await pg?.drop();
    await dropPrefix(prefix);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a worker paused past its lease: the heir takes the run over, the sleeper wakes and writes nothing more', async () => {
    const sleepy = await spawnWorker('d-sleepy', tmp());
    const uuid = await submit('sleepy.example.com', '6');
    await until(async () => (await app.repos.steps.listByRun((await app.repos.runs.getByUuid(uuid))!.id)).some((s) => s.step_name === 'nap' && s.status === 'running'), 'the long step on d-sleepy');
    sleepy.child.kill('SIGSTOP');
    await startHeir('d-awake');
    await until(async () => (await app.repos.attempts.get(uuid, 2))?.worker_id === 'd-awake', 'attempt 2 on d-awake');
    sleepy.child.kill('SIGCONT');
    await until(() => sleepy.out().includes('lost the lease'), 'd-sleepy to notice', 20_000);
    await expectOnce(uuid, [
      [1, 'd-sleepy', 'stalled', 'first'],
      [2, 'd-awake', 'completed', 'stalled'],
    ]);
    sleepy.child.kill('SIGTERM');
  }, 120_000);

  it('a worker stopped mid-step hands the run back: it is queued again, not cancelled, and completed by another worker', async () => {
    const leaving = await spawnWorker('d-leaving', tmp());
    const uuid = await submit('leaving.example.com', '30');
    await until(async () => (await app.repos.steps.listByRun((await app.repos.runs.getByUuid(uuid))!.id)).some((s) => s.step_name === 'nap' && s.status === 'running'), 'the long step on d-leaving');
    const exited = new Promise<number | null>((r) => leaving.child.once('exit', (code) => r(code)));
    leaving.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const waiting = (await app.repos.runs.getByUuid(uuid))!;
    expect(waiting.status).toBe('queued');
    expect(waiting.fence_attempt).toBe(2);
    // The heir runs it quickly: the nap param is the run's, so shorten it for the test.
    await app.repos.runs.update(waiting.id, { params: { nap: '1' } });
    await startHeir('d-heir');
    await expectOnce(uuid, [
      [1, 'd-leaving', 'handed back', 'first'],
      [2, 'd-heir', 'completed', 'handed back'],
    ]);
  }, 120_000);

  it('a lease confirmed too late while the lock is still held: the run is given back (attempt stalled) and completed by the next attempt, not failed', async () => {
    const late = await startHeir('d-late');
    const uuid = await submit('late.example.com', '2');
    await until(async () => (await app.repos.steps.listByRun((await app.repos.runs.getByUuid(uuid))!.id)).some((s) => s.step_name === 'nap' && s.status === 'running'), 'the long step on d-late');
    // The watchdog's last confirmation is made to look too old (a busy event loop): it stops the
    // attempt although BullMQ still holds the lock for it.
    (late as unknown as { leases: LeaseWatch }).leases.held.get(uuid)!.expiresAt = Date.now();
    await expectOnce(uuid, [
      [1, 'd-late', 'stalled', 'first'],
      [2, 'd-late', 'completed', 'stalled'],
    ]);
  }, 120_000);

  it('a run whose end reached the shared database but not the queue: the next worker records that end, nothing runs again, the webhook goes out once', async () => {
    // A webhook receiver on loopback, allowlisted in the master's settings.
    const hits: { event: string; run_uuid: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const p = JSON.parse(body || '{}') as { event: string; data: { run_uuid: string } };
        hits.push({ event: p.event, run_uuid: p.data?.run_uuid });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const before = fs.readFileSync(app.manager.path, 'utf8');
    const doc = parseDocument(before);
    doc.set('notification', { enabled: true, webhooks: [{ url, enabled: true }] });
    doc.setIn(['server', 'outbound_allowlist'], ['127.0.0.1']);
    app.manager.replaceText(doc.toString());
    try {
      // No worker is online: the task waits. The run's end is written into the shared database as
      // a worker writing straight into it does, by a worker that then died before its end record.
      const uuid = await submit('ended.example.com', '30');
      const run = (await app.repos.runs.getByUuid(uuid))!;
      // In one transaction: the master, seeing a `running` run whose task still waits with no
      // attempt open, would queue it again between these writes (the queue's 'waiting' event).
      await app.repos.tx(async () => {
        await app.repos.runs.transition(run.id, 'running');
        const step = await app.repos.steps.create({ run_id: run.id, run_uuid: uuid, workspace: run.workspace, module_name: 'slow', step_name: 'first', step_type: 'bash', step_index: 0, command: 'true', status: 'running' });
        const stepEvent = { topic: 'step.completed', name: 'first', source: 'executor', source_type: 'run', data_type: 'step', data: {}, workspace: run.workspace, run_id: uuid, workflow_name: 'slow', processed: true };
        await app.repos.steps.finish(step.id, 'completed', { output: 'done elsewhere' }, { event: stepEvent, runId: run.id, count: true });
        await app.repos.runs.finish(run.id, 'completed', {}, { topic: 'run.completed', name: 'run.completed', source: 'executor', source_type: 'run', data_type: 'scan', data: { scan_id: uuid }, workspace: run.workspace, run_id: uuid, workflow_name: 'slow', processed: true });
      });
      expect((await app.repos.runs.getByUuid(uuid))!.status).toBe('completed');
      await startHeir('d-finder');
      await until(async () => (await app.repos.attempts.get(uuid, 1))?.ended_at, 'the attempt to be recorded');
      expect((await app.repos.attempts.listByRun(uuid)).map((a) => [a.attempt, a.worker_id, a.outcome])).toEqual([[1, 'd-finder', 'completed']]);
      await until(() => hits.length > 0, 'the webhook');
      // Nothing ran again: the one step written before is all there is, the run stays completed.
      expect((await app.repos.steps.listByRun(run.id)).map((s) => [s.step_name, s.status, s.output])).toEqual([['first', 'completed', 'done elsewhere']]);
      expect((await app.repos.runs.getByUuid(uuid))!.status).toBe('completed');
      expect((await app.repos.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 })).total).toBe(1);
      await new Promise((r) => setTimeout(r, 1500));
      expect(hits).toEqual([{ event: 'workflow_completed', run_uuid: uuid }]);
    } finally {
      app.manager.replaceText(before);
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  }, 120_000);

  it('a worker killed with its spawners: its orphaned step group is killed when it comes back, and the task runs again', async () => {
    const base = tmp();
    const crash = await spawnWorker('d-crash', base);
    const uuid = await submit('crash.example.com', '120');
    const stepPid = await until(async () => {
      const run = (await app.repos.runs.getByUuid(uuid))!;
      const napping = (await app.repos.steps.listByRun(run.id)).some((s) => s.step_name === 'nap' && s.status === 'running');
      return napping && run.current_pid > 1 && groupAlive(run.current_pid) ? run.current_pid : undefined;
    }, 'the long step pid recorded in the shared database');
    expect(groupAlive(stepPid)).toBe(true);
    const spawners = childrenOf(crash.child.pid!).filter((p) => p !== stepPid);
    const exited = new Promise((r) => crash.child.once('exit', r));
    crash.child.kill('SIGKILL');
    for (const p of spawners) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    await exited;
    await new Promise((r) => setTimeout(r, 300));
    expect(groupAlive(stepPid)).toBe(true); // orphaned, still running

    const again = await spawnWorker('d-crash', base);
    await until(() => !groupAlive(stepPid), 'the orphaned step group to be killed');
    expect(again.out()).toContain('step processes of a previous worker process killed');
    // The task stalls and runs again; cancel the long re-run.
    await until(async () => (await app.repos.attempts.latest(uuid)) >= 2, 'attempt 2');
    const rerun = (await app.repos.runs.getByUuid(uuid))!;
    await app.repos.runs.transition(rerun.id, 'cancelled', { error_message: 'Cancelled by user' });
    await master.propagateCancel(uuid);
    await until(async () => ['cancelled'].includes((await app.repos.runs.getByUuid(uuid))?.status ?? ''), 'the re-run to be cancelled');
    again.child.kill('SIGTERM');
  }, 120_000);
});
