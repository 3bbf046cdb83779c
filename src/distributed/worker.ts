/**
 * A worker (`osm worker join`): a BullMQ `Worker` on the shared queue that executes each task
 * with the local engine against its own base folder. BullMQ's lock (renewed while the task runs)
 * is the failure detector: a worker that dies stops renewing it, and after `lockDuration` another
 * worker's stalled-job check moves the task back to wait (at-least-once; `maxStalledCount` caps
 * the re-runs). A graceful stop aborts the runs in hand and puts their tasks back in the queue.
 */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { Queue, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { errors, messageOf } from '../errors.js';
import { abortRun } from '../engine/executor.js';
import type { AppContext } from '../services/context.js';
import { VERSION } from '../version.js';
import { cancelKey, HEARTBEAT_MS, QUEUE_NAME, WORKER_POLL_MS } from './keys.js';
import { issuesText, taskDataSchema, type TaskResult } from './protocol.js';
import { connectionOptions, pingRedis, type DistributedConfig } from './redis-config.js';
import { rejectionMessage, runTask } from './task-runner.js';
import { effectiveStatus, liveWorkerNames, readWorkerEntry, writeWorkerEntry, type WorkerEntry } from './worker-registry.js';

export interface WorkerOptions {
  config: DistributedConfig;
  /** Unique worker id (default `wosm-<8 hex>`). */
  name?: string;
  concurrency?: number;
  /** BullMQ lock duration (default 30 s): how long a dead worker holds its task. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval (default 30 s). */
  stalledIntervalMs?: number;
  /** Re-runs allowed after stalls before the task fails (default 1). */
  maxStalledCount?: number;
  heartbeatMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** True for a usable worker name. */
export function isValidWorkerName(name: string): boolean {
  return /^[A-Za-z0-9._-]{1,64}$/.test(name);
}

/** One worker process's BullMQ Worker, its registry entry and its cancellation poll. */
export class DistributedWorker {
  readonly id: string;
  private readonly instance = randomBytes(8).toString('hex');
  private readonly hostname = osHostname();
  private worker?: Worker;
  private queue?: Queue;
  private readonly current = new Set<string>();
  private readonly userCancelled = new Set<string>();
  /** Tasks whose lock another worker may now hold: their runs are stopped here (no two copies at once). */
  private readonly lostLock = new Set<string>();
  private counters = { complete: 0, failed: 0 };
  private joinedAt = new Date().toISOString();
  private heartbeat?: NodeJS.Timeout;
  private poller?: NodeJS.Timeout;
  private stopping = false;
  private running?: Promise<void>;

  constructor(
    private readonly app: AppContext,
    private readonly opts: WorkerOptions,
  ) {
    const name = opts.name?.trim();
    if (name !== undefined && name !== '' && !isValidWorkerName(name)) throw errors.invalidWorkerName(name);
    this.id = name || `wosm-${randomBytes(4).toString('hex')}`;
  }

  private log(msg: string, fields: Record<string, unknown> = {}): void {
    this.opts.log?.(msg, { worker: this.id, ...fields });
  }

  private get prefix(): string {
    return this.opts.config.prefix;
  }

  /** Tasks being executed now. */
  activeTasks(): string[] {
    return [...this.current];
  }

  /** Connects, refuses a name held by a live worker, registers and starts taking tasks. */
  async start(): Promise<void> {
    const { redis, prefix } = this.opts.config;
    await pingRedis(redis);
    const connection = connectionOptions(redis);
    this.queue = new Queue(QUEUE_NAME, { connection, prefix });
    this.queue.on('error', (err) => this.log('worker queue connection error', { error: messageOf(err) }));
    const client = await this.queue.client;
    const existing = await readWorkerEntry(client, prefix, this.id);
    if (existing && existing.instance !== this.instance && effectiveStatus(existing, Date.now(), await liveWorkerNames(this.queue)) !== 'offline') {
      await this.queue.close();
      throw errors.workerNameTaken(this.id);
    }

    this.worker = new Worker(QUEUE_NAME, (job, token, signal) => this.process(job, token, signal), {
      connection,
      prefix,
      name: this.id,
      concurrency: Math.max(1, this.opts.concurrency ?? 1),
      autorun: false,
      ...(this.opts.lockDurationMs ? { lockDuration: this.opts.lockDurationMs } : {}),
      ...(this.opts.stalledIntervalMs ? { stalledInterval: this.opts.stalledIntervalMs } : {}),
      ...(this.opts.maxStalledCount !== undefined ? { maxStalledCount: this.opts.maxStalledCount } : {}),
    });
    this.worker.on('error', (err) => this.log('worker error', { error: messageOf(err) }));
    this.worker.on('failed', (job, err) => {
      if (job && !(err instanceof WaitingError)) this.log('task failed', { run_uuid: job.id, error: err.message, attempts: job.attemptsMade });
    });
    this.worker.on('lockRenewalFailed', (ids) => {
      for (const id of ids) {
        if (!this.current.has(id)) continue;
        this.log('lost the lock of a running task (it may be re-run elsewhere); aborting it here', { run_uuid: id });
        this.lostLock.add(id);
        abortRun(id, 'shutdown');
      }
    });
    await this.worker.waitUntilReady();
    await this.publish();
    this.heartbeat = setInterval(() => void this.publish(), this.opts.heartbeatMs ?? HEARTBEAT_MS);
    this.poller = setInterval(() => void this.pollCancellations(), WORKER_POLL_MS);
    this.running = this.worker.run().catch((err: unknown) => this.log('worker stopped with an error', { error: messageOf(err) }));
  }

  private entry(): WorkerEntry {
    const offline = this.stopping && this.current.size === 0;
    return {
      id: this.id,
      instance: this.instance,
      hostname: this.hostname,
      pid: process.pid,
      status: offline ? 'offline' : this.current.size > 0 ? 'busy' : 'idle',
      current_tasks: [...this.current],
      concurrency: Math.max(1, this.opts.concurrency ?? 1),
      joined_at: this.joinedAt,
      last_heartbeat: new Date().toISOString(),
      tasks_complete: this.counters.complete,
      tasks_failed: this.counters.failed,
      version: VERSION,
    };
  }

  /** Writes this worker's entry (heartbeat and every status change). */
  private async publish(): Promise<void> {
    if (!this.queue) return;
    try {
      await writeWorkerEntry(await this.queue.client, this.prefix, this.entry());
    } catch (err) {
      this.log('cannot write worker heartbeat', { error: messageOf(err) });
    }
  }

  /** Aborts runs whose task was cancelled on the master (their process groups are killed by the engine). */
  private async pollCancellations(): Promise<void> {
    if (!this.queue || this.current.size === 0) return;
    const uuids = [...this.current];
    try {
      const client = await this.queue.client;
      const flags = await Promise.all(uuids.map((u) => client.get(cancelKey(this.prefix, u))));
      uuids.forEach((uuid, i) => {
        if (!flags[i]) return;
        if (!this.userCancelled.has(uuid)) this.log('task cancelled on the master; aborting the run', { run_uuid: uuid });
        this.userCancelled.add(uuid);
        abortRun(uuid, 'cancelled');
      });
    } catch (err) {
      this.log('cannot read cancellation flags', { error: messageOf(err) });
    }
  }

  private async isFlagged(uuid: string): Promise<boolean> {
    if (!this.queue) return false;
    return Boolean(await (await this.queue.client).get(cancelKey(this.prefix, uuid)));
  }

  /** The BullMQ processor: one task. */
  private async process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<TaskResult> {
    const parsed = taskDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid task data: ${issuesText(parsed.error)}`);
    const data = parsed.data;
    const uuid = data.run_uuid;
    this.current.add(uuid);
    await this.publish();
    const onAbort = () => abortRun(uuid, 'cancelled');
    signal?.addEventListener('abort', onAbort);
    this.log('task started', { run_uuid: uuid, workflow: data.workflow_name, target: data.target, attempt: job.attemptsMade + 1 });
    try {
      const flagged = await this.isFlagged(uuid);
      if (flagged) this.userCancelled.add(uuid);
      const { result } = await runTask(
        this.app,
        data,
        { workerId: this.id, hostname: this.hostname, onProgress: (p) => void job.updateProgress(p).catch(() => undefined) },
        { cancelledBeforeStart: flagged },
      );
      if (this.lostLock.has(uuid)) throw new Error(`worker ${this.id} lost the task's lock; the run was stopped here`);
      if (this.stopping && result.run.status === 'cancelled' && !this.userCancelled.has(uuid)) {
        // Aborted by our own shutdown, not by a user: hand the task back for another worker.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (result.run.status === 'completed') this.counters.complete++;
      else this.counters.failed++;
      this.log('task finished', { run_uuid: uuid, status: result.run.status, steps: result.steps.length });
      return result;
    } catch (err) {
      if (err instanceof WaitingError) throw err;
      this.counters.failed++;
      // BullMQ keeps err.message as the job's failedReason, which the master records on the run.
      throw new Error(rejectionMessage(err));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.current.delete(uuid);
      this.userCancelled.delete(uuid);
      this.lostLock.delete(uuid);
      await this.publish();
    }
  }

  /**
   * Graceful stop: no new tasks, runs in hand aborted and their tasks put back in the queue,
   * entry marked offline, connections closed. A stuck close is forced after `timeoutMs`.
   */
  async stop(timeoutMs = 15_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.poller) clearInterval(this.poller);
    for (const uuid of this.current) abortRun(uuid, 'shutdown');
    if (this.worker) {
      const closing = this.worker.close();
      let timer: NodeJS.Timeout | undefined;
      const forced = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const r = await Promise.race([closing.then(() => 'closed' as const), forced]);
      if (timer) clearTimeout(timer);
      if (r === 'timeout') await this.worker.close(true).catch(() => undefined);
      await this.running;
    }
    await this.publish();
    await this.queue?.close().catch(() => undefined);
  }
}
