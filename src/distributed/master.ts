/**
 * The master (`osm serve --master`): one BullMQ `Queue` to add tasks, one `QueueEvents` to learn
 * what happened to them, and a periodic sweep that reconciles the database with the queue (events
 * are not replayed after a disconnect, so the sweep is what makes the master eventually right).
 * The master never executes a distributed run itself; it records what workers report.
 */
import { Job, Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { errors, messageOf } from '../errors.js';
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import { CANCEL_FLAG_TTL_S, QUEUE_NAME, cancelKey } from './keys.js';
import { bullPriority, issuesText, PROTOCOL_VERSION, taskOptionsSchema, taskProgressSchema, taskResultSchema, type TaskData, type TaskRequirements } from './protocol.js';
import { workflowTools, type NeedsCache } from './routing.js';
import { storedRunOptions } from '../services/run-options.js';
import { applyProgress, applyTaskResult, failRemoteRun, markRemoteStarted } from './persist.js';
import { connectionOptions, pingRedis, type DistributedConfig } from './redis-config.js';
import { getWorkerView } from './worker-registry.js';
import { runAfter, type RecordContext } from './apply-records.js';
import { RecordConsumer } from './record-consumer.js';
import { FleetViews, WAITING_STATES } from './fleet-views.js';

export type { TaskLists } from './fleet-views.js';

export interface MasterOptions {
  config: DistributedConfig;
  /** Attempts per task (a thrown error or a worker shutdown; not a workflow that failed). Default 3. */
  attempts?: number;
  /** First retry delay (exponential). Default 5000 ms. */
  backoffMs?: number;
  /** Reconciliation interval. Default 5000 ms. */
  sweepMs?: number;
  /** How often the durable attempt records are read. Default 500 ms. */
  recordsMs?: number;
  /** Finished jobs BullMQ keeps (`distributed.keep_completed` / `keep_failed`); results never depend on them. */
  keepCompleted?: number;
  keepFailed?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}


function isOpen(run: RunRecord): boolean {
  return run.status === 'queued' || run.status === 'running' || run.status === 'pending';
}

/** Job data of a stored run; only allowlisted options travel (none that name paths of this machine). */
export function taskDataOf(run: RunRecord, requires: TaskRequirements = { tools: [], labels: [] }, storeId = ''): TaskData {
  const options = taskOptionsSchema.safeParse(storedRunOptions(run.options));
  return {
    v: PROTOCOL_VERSION,
    run_uuid: run.run_uuid,
    workflow_name: run.workflow_name,
    workflow_kind: run.workflow_kind === 'flow' ? 'flow' : 'module',
    target: run.target,
    params: run.params ?? {},
    priority: run.priority,
    workspace: run.workspace,
    options: options.success ? options.data : {},
    submitted_at: new Date().toISOString(),
    requires,
    store_id: storeId,
  };
}

/** Bound of the set of runs recorded but whose `completed` event has not arrived yet. */
const RECORDED_KEPT = 10_000;

/** The master's task queue: submit, cancel, list, and record what workers report. */
export class DistributedMaster {
  private queue?: Queue;
  private events?: QueueEvents;
  private readonly chains = new Map<string, Promise<void>>();
  /** Runs whose task is (or may be) in the queue. */
  private readonly inflight = new Set<string>();
  /** Runs whose end record this master applied, until their task's `completed` event is seen. */
  private readonly recorded = new Set<string>();
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  /** Reads and applies the durable attempt records (record-consumer.ts). */
  private readonly reader: RecordConsumer;
  private recordsTimer?: NodeJS.Timeout;
  private stopped = false;
  /** This master's database identity when it is PostgreSQL (sent with each task), else ''. */
  private storeId = '';
  /** Needs of waiting jobs already read for the queue warnings. */
  private readonly needs: NeedsCache = new Map();
  /** How attempt records are applied (apply-records.ts), with what they need of the master. */
  private readonly records: RecordContext;
  /** Tasks, workers, drain and warnings as the API and metrics show them. */
  readonly views: FleetViews;

  constructor(
    private readonly app: AppContext,
    private readonly opts: MasterOptions,
  ) {
    this.records = {
      app,
      log: (msg, fields) => this.log(msg, fields),
      workerOffline: (id) => this.workerOffline(id),
      settled: (uuid) => {
        this.inflight.delete(uuid);
        if (this.recorded.size >= RECORDED_KEPT) this.recorded.clear();
        this.recorded.add(uuid);
      },
    };
    this.views = new FleetViews({ queue: () => this.q, prefix: opts.config.prefix, app, needs: this.needs });
    this.reader = new RecordConsumer({
      app,
      prefix: opts.config.prefix,
      client: () => this.q.client,
      records: this.records,
      runOf: (uuid) => this.runOf(uuid),
      stopped: () => this.stopped || !this.queue,
    });
  }

  /** Key prefix in use. */
  get prefix(): string {
    return this.opts.config.prefix;
  }

  /** Redis target and prefix of this master. */
  get config(): DistributedConfig {
    return this.opts.config;
  }

  /** Redis address without credentials. */
  get redisDisplay(): string {
    return this.opts.config.redis.display;
  }

  private log(msg: string, fields: Record<string, unknown> = {}): void {
    this.opts.log?.(msg, fields);
  }

  private get q(): Queue {
    if (!this.queue || this.stopped) throw errors.unavailable('the distributed master is not running');
    return this.queue;
  }

  /** Connects (failing fast when Redis is unreachable), listens to queue events and reconciles once. */
  async start(): Promise<void> {
    const { redis, prefix } = this.opts.config;
    await pingRedis(redis);
    const connection = connectionOptions(redis);
    // A producer should fail fast rather than queue commands while Redis is away (BullMQ's advice).
    this.queue = new Queue(QUEUE_NAME, { connection: { ...connection, enableOfflineQueue: false }, prefix });
    this.events = new QueueEvents(QUEUE_NAME, { connection, prefix });
    this.queue.on('error', (err) => this.log('distributed queue error', { error: messageOf(err) }));
    this.events.on('error', (err) => this.log('distributed queue events error', { error: messageOf(err) }));
    await Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]);
    this.events.on('active', ({ jobId }) => this.serial(jobId, () => this.onActive(jobId)));
    // A task given back without an attempt (a worker that cannot take it, or draining) waits again.
    this.events.on('delayed', ({ jobId }) => this.serial(jobId, () => this.onReturned(jobId)));
    // A task just added waits too (no `prev`): its run is queued already.
    this.events.on('waiting', ({ jobId, prev }) => (prev ? this.serial(jobId, () => this.onReturned(jobId)) : undefined));
    this.events.on('progress', ({ jobId, data }) => this.serial(jobId, () => this.onProgress(jobId, data)));
    this.events.on('completed', ({ jobId }) => this.serial(jobId, () => this.settle(jobId)));
    this.events.on('failed', ({ jobId }) => this.serial(jobId, () => this.settle(jobId)));
    this.events.on('stalled', ({ jobId }) => {
      this.log('task stalled: its worker stopped renewing the lock; BullMQ moved it back to wait', { run_uuid: jobId });
      void this.serial(jobId, () => this.onStalled(jobId));
    });
    // Workers on this very database write their runs straight into it (docs/distributed.md).
    this.storeId = this.app.repos.engine === 'postgresql' ? await this.app.repos.maintenance.storeId() : '';
    // Records written while the master was away first: they are the truth about finished attempts.
    await this.consume();
    await this.adoptQueuedJobs();
    await this.sweep();
    this.recordsTimer = setInterval(() => void this.consume(), this.opts.recordsMs ?? 500);
    this.recordsTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), this.opts.sweepMs ?? 5000);
    this.sweepTimer.unref();
  }

  /** Stops listening and closes every connection (pending writes finish first). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.recordsTimer) clearInterval(this.recordsTimer);
    await this.sweeping;
    await this.reader.stop();
    await Promise.allSettled([...this.chains.values()]);
    await Promise.allSettled([this.events?.close(), this.queue?.close()]);
  }

  /** Runs `fn` after earlier work on the same task, so its events are applied in order. */
  private serial(jobId: string, fn: () => Promise<void> | void): Promise<void> {
    const prev = this.chains.get(jobId) ?? Promise.resolve();
    const next = prev
      .then(() => (this.stopped ? undefined : fn()))
      .catch((err: unknown) => this.log('distributed: cannot apply task update', { run_uuid: jobId, error: messageOf(err) }))
      .finally(() => {
        if (this.chains.get(jobId) === next) this.chains.delete(jobId);
      });
    this.chains.set(jobId, next);
    return next;
  }

  private jobOptions(run: RunRecord): JobsOptions {
    return {
      jobId: run.run_uuid,
      priority: bullPriority(run.priority),
      attempts: Math.max(1, this.opts.attempts ?? 3),
      backoff: { type: 'exponential', delay: Math.max(0, this.opts.backoffMs ?? 5000) },
      removeOnComplete: { age: 7 * 24 * 3600, count: Math.max(1, this.opts.keepCompleted ?? 1000) },
      removeOnFail: { age: 30 * 24 * 3600, count: Math.max(1, this.opts.keepFailed ?? 5000) },
    };
  }

  /**
   * Adds one task per run (job id = run_uuid, so adding twice is a no-op). When Redis refuses,
   * the runs are marked failed and the error is thrown.
   */
  async submit(runs: RunRecord[]): Promise<void> {
    if (runs.length === 0) return;
    try {
      // The workflow's declared tools, read once per workflow of the batch.
      const tools = new Map<string, string[]>();
      const requires = (run: RunRecord): TaskRequirements => {
        const labels = storedRunOptions(run.options).labels ?? [];
        if (!tools.has(run.workflow_name)) tools.set(run.workflow_name, workflowTools(this.app, run.workflow_name));
        return { tools: tools.get(run.workflow_name)!, labels };
      };
      await this.q.addBulk(runs.map((run) => ({ name: 'run', data: taskDataOf(run, requires(run), this.storeId), opts: this.jobOptions(run) })));
    } catch (err) {
      const message = `failed to submit to distributed queue: ${messageOf(err)}`;
      for (const run of runs) await failRemoteRun(this.app, run, message);
      throw errors.distributedQueueFailed(messageOf(err));
    }
    for (const run of runs) {
      this.inflight.add(run.run_uuid);
      this.needs.delete(run.run_uuid);
    }
    this.log('distributed tasks submitted', { count: runs.length, runs: runs.map((r) => r.run_uuid) });
  }

  /**
   * A worker took the task. Its start record (written right after, durable, with the attempt and
   * the worker) moves the run to running: the records are read shortly, once for the tasks taken
   * in that moment, rather than reading the job and writing the run once per task here.
   */
  private onActive(jobId: string): void {
    this.inflight.add(jobId);
    void this.reader.shortly();
  }

  /** Back in wait/delayed with no attempt running (given back unstarted): the run is queued again. */
  private async onReturned(jobId: string): Promise<void> {
    const run = await this.runOf(jobId);
    if (run?.status !== 'running' || !WAITING_STATES.has(await this.q.getJobState(jobId))) return;
    const attempts = this.app.repos.attempts;
    const latest = await attempts.latest(jobId);
    if (latest > 0 && (await attempts.get(jobId, latest))?.ended_at === null) return;
    await attempts.requeueRun(jobId);
  }

  private async onProgress(jobId: string, data: unknown): Promise<void> {
    const p = taskProgressSchema.safeParse(data);
    const run = p.success ? await this.runOf(jobId) : undefined;
    if (!run || !p.success) return;
    // Progress of an attempt that was superseded (a paused worker waking up) says nothing.
    if (p.data.attempt !== undefined && p.data.attempt < (await this.app.repos.attempts.latest(jobId))) return;
    if (run.status === 'queued') await markRemoteStarted(this.app, run);
    await applyProgress(this.app, (await this.app.repos.runs.get(run.id)) ?? run, p.data);
  }

  private async runOf(jobId: string): Promise<RunRecord | undefined> {
    const run = await this.app.repos.runs.getByUuid(jobId);
    return run && run.run_mode === 'distributed' ? run : undefined;
  }

  /**
   * A task finished in BullMQ (completed, or failed for good; retries are left alone). The
   * durable records are applied first — they carry the result; the job only matters when no
   * record exists (a worker of an older version, or BullMQ failing a task itself after stalls).
   * Usually the end record was written before the job completed, so applying the records ends
   * the run and nothing is read from the job. Otherwise the job state is read BEFORE the records
   * are read again: BullMQ trims a job only after it completed, so a job missing then has its
   * record in the stream already.
   */
  private async settle(jobId: string): Promise<void> {
    await this.reader.shortly();
    // Its end record was applied: the run is recorded, nothing to read.
    if (this.recorded.delete(jobId)) return;
    if (!this.stillOpen(jobId, await this.runOf(jobId))) return;
    const state = await this.q.getJobState(jobId);
    await this.consume();
    const run = await this.runOf(jobId);
    if (!this.stillOpen(jobId, run)) return;
    if (state === 'unknown') return this.lost(run);
    if (state !== 'completed' && state !== 'failed') {
      if (state === 'active') await this.onActive(jobId);
      return;
    }
    const job = await Job.fromId(this.q, jobId);
    if (!job) return this.lost(run);
    const at = job.finishedOn ? new Date(job.finishedOn).toISOString() : undefined;
    if (state === 'completed') {
      const parsed = taskResultSchema.safeParse(job.returnvalue);
      if (!parsed.success) {
        await failRemoteRun(this.app, run, `the worker returned an invalid result: ${issuesText(parsed.error)}`, at);
      } else {
        const after: (() => Promise<void>)[] = [];
        const r = await applyTaskResult(this.app, run, parsed.data, { defer: (fn) => after.push(fn) });
        await runAfter({ after }, (m, f) => this.log(m, f));
        this.log('distributed run recorded from the job (no attempt record)', { run_uuid: jobId, status: r.run.status, worker: parsed.data.worker_id });
      }
      this.inflight.delete(jobId);
    } else if (state === 'failed') {
      const reason = job.failedReason || 'task failed';
      await this.app.repos.attempts.endOlder(jobId, Number.MAX_SAFE_INTEGER, /stalled/.test(reason) ? 'stalled' : 'error', reason);
      await failRemoteRun(this.app, run, reason, at);
      this.log('distributed run failed', { run_uuid: jobId, error: reason });
      this.inflight.delete(jobId);
    }
  }

  /** Whether the distributed run is still open; when not, its task is no longer watched. */
  private stillOpen(jobId: string, run: RunRecord | undefined): run is RunRecord {
    if (run && isOpen(run)) return true;
    this.inflight.delete(jobId);
    return false;
  }

  /** BullMQ moved a task back to wait after its lock expired: its attempt ended, the run waits again. */
  private async onStalled(jobId: string): Promise<void> {
    const run = await this.runOf(jobId);
    if (!run || !isOpen(run)) return;
    await this.consume();
    const state = await this.q.getJobState(jobId);
    if (!WAITING_STATES.has(state)) return; // already taken again: the next start record closes the attempt
    const attempts = this.app.repos.attempts;
    const latest = await attempts.latest(jobId);
    const open = latest > 0 ? await attempts.get(jobId, latest) : undefined;
    if (open && open.ended_at === null) {
      const lost = await this.workerOffline(open.worker_id);
      await attempts.end(jobId, latest, lost ? 'worker lost' : 'stalled', { error: 'the worker stopped renewing its lease' });
    }
    if (await attempts.requeueRun(jobId)) this.log('distributed run queued again after a stall', { run_uuid: jobId });
  }

  private async workerOffline(workerId: string): Promise<boolean> {
    try {
      const w = await getWorkerView(await this.q.client, this.q, this.prefix, workerId);
      return !w || w.status === 'offline';
    } catch {
      return false;
    }
  }

  /** Applies the pending attempt records now (see RecordConsumer.consume). */
  consume(): Promise<void> {
    return this.reader.consume();
  }

  /** The task is gone from the queue (removed, or trimmed before the master saw it finish). */
  private async lost(run: RunRecord): Promise<void> {
    this.inflight.delete(run.run_uuid);
    await failRemoteRun(this.app, run, 'the task disappeared from the distributed queue before its result was recorded');
  }

  /**
   * Reconciliation: unfinished distributed runs get a task when they have none (created while
   * Redis was down, or started/resumed later), finished tasks are recorded, cancelled runs have
   * their task removed or flagged.
   */
  sweep(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.sweeping ??= this.doSweep()
      .catch((err: unknown) => this.log('distributed sweep failed', { error: messageOf(err) }))
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  private async doSweep(): Promise<void> {
    await this.consume();
    for (const run of await this.app.repos.runs.listUnfinishedByMode('distributed')) {
      if (this.inflight.has(run.run_uuid)) continue;
      await this.serial(run.run_uuid, () => this.ensureTask(run.run_uuid));
    }
    for (const uuid of [...this.inflight]) await this.serial(uuid, () => this.check(uuid));
  }

  /**
   * At start: unfinished jobs of runs that ended while the master was down (cancelled, typically)
   * are tracked again, so the sweep removes or flags them. Unfinished runs are the sweep's own job.
   */
  private async adoptQueuedJobs(): Promise<void> {
    const jobs = await this.q.getJobs(['active', 'prioritized', 'waiting', 'delayed'], 0, 999, true);
    for (const job of jobs) {
      const run = job?.id ? await this.runOf(job.id) : undefined;
      if (run && run.status !== 'queued' && run.status !== 'running') this.inflight.add(run.run_uuid);
    }
  }

  private async ensureTask(uuid: string): Promise<void> {
    const run = await this.runOf(uuid);
    if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
    const job = await Job.fromId(this.q, uuid);
    if (job) {
      this.inflight.add(uuid);
      return this.check(uuid);
    }
    // No job: its end record, if any, was written before the job could be trimmed.
    await this.consume();
    const now = await this.runOf(uuid);
    if (!now || !isOpen(now)) return;
    if (now.status === 'queued') {
      await this.submit([run]).catch(() => undefined);
      return;
    }
    await this.lost(run);
  }

  private async check(uuid: string): Promise<void> {
    const state = await this.q.getJobState(uuid);
    if (state === 'unknown') await this.consume();
    const run = await this.app.repos.runs.getByUuid(uuid);
    if (!run) {
      if (WAITING_STATES.has(state)) await (await Job.fromId(this.q, uuid))?.remove().catch(() => undefined);
      this.inflight.delete(uuid);
      return;
    }
    if (state === 'unknown') {
      if (run.status === 'queued' || run.status === 'running') await this.lost(run);
      this.inflight.delete(uuid);
      return;
    }
    if (state === 'completed' || state === 'failed') return this.settle(uuid);
    if (run.status === 'cancelled') {
      await this.cancelTask(uuid);
      return;
    }
    if (state === 'active' && run.status === 'queued') await this.onActive(uuid);
  }

  /**
   * Cancels a task: a waiting one is removed from the queue; an active one gets a cancellation
   * flag its worker polls every second (the worker then aborts the run and kills its process
   * groups). The run row itself is cancelled by the caller (`cancelRun`).
   */
  async cancelTask(uuid: string): Promise<{ removed: boolean; flagged: boolean }> {
    const client = await this.q.client;
    // The flag first: a worker may pick the task up between the state check and the removal.
    await client.set(cancelKey(this.prefix, uuid), '1', { EX: CANCEL_FLAG_TTL_S });
    const job = await Job.fromId(this.q, uuid);
    if (!job) {
      this.inflight.delete(uuid);
      return { removed: false, flagged: true };
    }
    const state = await job.getState();
    if (WAITING_STATES.has(state)) {
      try {
        await job.remove();
        this.inflight.delete(uuid);
        return { removed: true, flagged: true };
      } catch {
        // Locked by a worker that just took it: the flag reaches it.
      }
    }
    return { removed: false, flagged: true };
  }

  /** After `DELETE /runs/{id}`: propagates a cancel of a distributed run to its task. */
  async propagateCancel(idOrUuid: string): Promise<void> {
    const run = await this.app.repos.runs.find(idOrUuid);
    if (!run || run.run_mode !== 'distributed' || run.status !== 'cancelled') return;
    await this.serial(run.run_uuid, async () => {
      await this.cancelTask(run.run_uuid);
    });
  }
}
