/**
 * A worker (`osm worker join`): a BullMQ `Worker` on the shared queue that executes each task
 * with the local engine against its own base folder. BullMQ's lock (renewed while the task runs)
 * is the failure detector: a worker that dies stops renewing it, and after `lockDuration` another
 * worker's stalled-job check moves the task back to wait (at-least-once; `maxStalledCount` caps
 * the re-runs). A graceful stop aborts the runs in hand and puts their tasks back in the queue.
 */
import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import { DelayedError, Queue, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { errors, messageOf } from '../errors.js';
import { abortRun } from '../engine/executor.js';
import type { AppContext } from '../services/context.js';
import { VERSION } from '../version.js';
import { cancelKey, drainKey, DEFAULT_LEASE_S, HEARTBEAT_MS, QUEUE_NAME, WORKER_POLL_MS } from './keys.js';
import { issuesText, jobReturnValue, PROTOCOL_VERSION, taskDataSchema, type TaskResult } from './protocol.js';
import { recordEnd, recordMany, recordStart, type EndRecord, type FileRecord } from './records.js';
import { nowIso } from '../store/sql.js';
import { connectionOptions, pingRedis, type DistributedConfig } from './redis-config.js';
import { collectResult, rejectionMessage, runTask } from './task-runner.js';
import type { AsyncStore } from '../store/async.js';
import { openPgStore } from '../store/pg/store.js';
import { fencedUrl, isFenceError } from '../store/pg/fence.js';
import { LeaseWatch } from './lease-watch.js';
import { RoutingGate } from './routing.js';
import { FileShipper, type FileChunk } from './files-ship.js';
import { shipRows } from './ship-rows.js';
import { reconcileSharedRuns, reconcileWorkerRuns } from './worker-reconcile.js';
import { effectiveStatus, liveWorkerNames, readWorkerEntry, writeWorkerEntry, type WorkerEntry } from './worker-registry.js';

export interface WorkerOptions {
  config: DistributedConfig;
  /** Unique worker id (default `wosm-<8 hex>`). */
  name?: string;
  concurrency?: number;
  /**
   * `distributed.lease_seconds` (default 30): a task whose worker stops renewing its lock is back in
   * wait within one lease (lock = 3/4 lease, renewed every 1/4; stalled check every 1/4).
   */
  leaseSeconds?: number;
  /** BullMQ lock duration (overrides the one derived from the lease). */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval (overrides the one derived from the lease). */
  stalledIntervalMs?: number;
  /** Re-runs allowed after stalls before the task fails (default 1). */
  maxStalledCount?: number;
  heartbeatMs?: number;
  /** Custom routing labels (`--label`, checked with parseWorkerLabels). */
  labels?: string[];
  /**
   * The master's PostgreSQL database, when this worker's settings open it too: a task whose
   * `store_id` is this database's is written straight into it (fenced by its attempt number)
   * instead of being recorded here and shipped.
   */
  shared?: SharedDatabase;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** The shared database of a worker writing straight into the master's store. */
export interface SharedDatabase {
  repos: AsyncStore;
  url: string;
  /** store_meta.store_id of that database. */
  storeId: string;
}

/** Status changes of this window (tasks starting and ending) are written to the registry in one go. */
const PUBLISH_WINDOW_MS = 25;

/** How long a stopping worker waits for the shared database to take a run back before stopping it anyway. */
const RELEASE_TIMEOUT_MS = 2000;

/** An attempt that lost its lease: its result is not recorded. */
class Fenced extends Error {}
/** The run already ended in the shared database: an earlier attempt wrote its end there but stopped before its end record. */
class AlreadyEnded extends Error {}

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
  /** Lease of each task in hand: the job lock's token and the latest expiry of it confirmed in Redis. */
  private readonly leases: LeaseWatch;
  private leaseTimer?: NodeJS.Timeout;
  private counters = { complete: 0, failed: 0 };
  private joinedAt = new Date().toISOString();
  private heartbeat?: NodeJS.Timeout;
  private poller?: NodeJS.Timeout;
  private publishTimer?: NodeJS.Timeout;
  private stopping = false;
  private draining = false;
  private running?: Promise<void>;
  private gate?: RoutingGate;
  /** Tasks written straight into the shared database: their attempt and fenced store. */
  private readonly direct = new Map<string, { attempt: number; store: AsyncStore }>();

  constructor(
    private readonly app: AppContext,
    private readonly opts: WorkerOptions,
  ) {
    const name = opts.name?.trim();
    if (name !== undefined && name !== '' && !isValidWorkerName(name)) throw errors.invalidWorkerName(name);
    this.id = name || `wosm-${randomBytes(4).toString('hex')}`;
    // Checks every min(1 s, a quarter of the lock).
    const checkMs = Math.max(50, Math.min(WORKER_POLL_MS, Math.floor(this.lockDurationMs / 4)));
    this.leases = new LeaseWatch({ prefix: this.prefix, lockDurationMs: this.lockDurationMs, checkMs, onLost: (uuid, why) => this.loseLease(uuid, why) });
  }

  private log(msg: string, fields: Record<string, unknown> = {}): void {
    this.opts.log?.(msg, { worker: this.id, ...fields });
  }

  private get prefix(): string {
    return this.opts.config.prefix;
  }

  /** BullMQ lock duration: three quarters of the lease (renewed every third of it). */
  get lockDurationMs(): number {
    return this.opts.lockDurationMs ?? Math.round((this.opts.leaseSeconds ?? DEFAULT_LEASE_S) * 750);
  }

  /** Stalled-job check: a quarter of the lease, so a dead worker's task is back in wait within one lease. */
  get stalledIntervalMs(): number {
    return this.opts.stalledIntervalMs ?? Math.max(100, Math.round((this.opts.leaseSeconds ?? DEFAULT_LEASE_S) * 250));
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

    const orphans = await reconcileWorkerRuns(this.app);
    if (orphans.failed.length > 0) this.log('runs left unfinished by a previous worker process marked failed', { ...orphans });
    if (this.opts.shared) {
      const killed = await reconcileSharedRuns(this.opts.shared.repos);
      if (killed.length > 0) this.log('step processes of a previous worker process killed (shared database)', { killedPids: killed });
    }

    this.worker = new Worker(QUEUE_NAME, (job, token, signal) => this.process(job, token, signal), {
      connection,
      prefix,
      name: this.id,
      concurrency: Math.max(1, this.opts.concurrency ?? 1),
      autorun: false,
      lockDuration: this.lockDurationMs,
      lockRenewTime: Math.max(50, Math.floor(this.lockDurationMs / 3)),
      stalledInterval: this.stalledIntervalMs,
      ...(this.opts.maxStalledCount !== undefined ? { maxStalledCount: this.opts.maxStalledCount } : {}),
    });
    this.worker.on('error', (err) => this.log('worker error', { error: messageOf(err) }));
    this.worker.on('failed', (job, err) => {
      if (job && !(err instanceof WaitingError) && !(err instanceof DelayedError)) this.log('task failed', { run_uuid: job.id, error: err.message, attempts: job.attemptsMade });
    });
    this.worker.on('lockRenewalFailed', (ids) => {
      for (const id of ids) this.loseLease(id, 'lock renewal failed');
    });
    this.gate = new RoutingGate(this.app, this.opts.labels ?? []);
    await this.worker.waitUntilReady();
    await this.publish();
    this.heartbeat = setInterval(() => {
      this.gate?.refresh();
      void this.publish();
    }, this.opts.heartbeatMs ?? HEARTBEAT_MS);
    this.poller = setInterval(() => void this.pollCancellations(), WORKER_POLL_MS);
    this.leaseTimer = setInterval(() => void this.leases.check(() => this.queue?.client), this.leases.checkMs);
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
      draining: this.draining,
      ...this.gate?.advertised(),
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

  /**
   * A task started or ended: the entry is written within PUBLISH_WINDOW_MS, once for every change
   * of that window (tiny tasks start and end many times a second; `osm worker ls` reads the latest).
   */
  private publishSoon(): void {
    if (this.publishTimer || this.stopping) return;
    this.publishTimer = setTimeout(() => {
      this.publishTimer = undefined;
      void this.publish();
    }, PUBLISH_WINDOW_MS);
  }

  /** `osm worker drain`: once flagged, the worker finishes what it has and takes nothing new. */
  private async pollDrain(): Promise<void> {
    if (!this.queue || this.draining || this.stopping) return;
    try {
      const flag = await (await this.queue.client).get(drainKey(this.prefix, this.id));
      if (!flag) return;
      this.draining = true;
      this.log('draining: finishing the tasks in hand, taking no new ones');
      void this.worker?.pause(true).catch(() => undefined);
      await this.publish();
    } catch {
      // Redis away: checked again next second
    }
  }

  /** Aborts runs whose task was cancelled on the master (their process groups are killed by the engine). */
  private async pollCancellations(): Promise<void> {
    void this.pollDrain();
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

  /** The BullMQ processor: one task, i.e. one attempt of its run. */
  private async process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<TaskResult> {
    const parsed = taskDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid task data: ${issuesText(parsed.error)}`);
    const data = parsed.data;
    const uuid = data.run_uuid;
    if (this.draining) {
      // A fetch already in flight when the drain began: hand the task back untouched (no attempt).
      await job.moveToWait(token);
      throw new WaitingError();
    }
    // Routing: a task this worker cannot satisfy goes back (no attempt used) for another worker.
    const unmet = this.gate?.check(data);
    if (unmet) {
      this.log('task given back: this worker cannot take it', { run_uuid: uuid, reason: unmet });
      await this.gate!.giveBack(job, token, unmet);
      void this.publish();
      throw new DelayedError();
    }
    const client = await this.queue!.client;
    // The attempt number (fencing token), recorded durably before anything runs; the run's
    // cancellation flag is read in the same call.
    const sentAt = Date.now();
    const { attempt, lockTtlMs, cancelled: flagged } = await recordStart(client, this.prefix, token ?? '', {
      v: PROTOCOL_VERSION, kind: 'start', run_uuid: uuid, worker_id: this.id, at: new Date().toISOString(),
      attempts_made: job.attemptsMade ?? 0, stalled: job.stalledCounter ?? 0,
    });
    if (attempt === 0) throw new Error(`worker ${this.id} does not hold the lock of task ${uuid}`);
    this.current.add(uuid);
    // The lease's first confirmation: the lock's time to live read with the attempt (counted from
    // before the call, so never later than the lock's real expiry).
    this.leases.taken(uuid, token ?? '', sentAt, lockTtlMs);
    // Not awaited: the entry is written shortly, once for the changes of a short window.
    this.publishSoon();
    const onAbort = () => abortRun(uuid, 'cancelled');
    signal?.addEventListener('abort', onAbort);
    this.log('task started', { run_uuid: uuid, workflow: data.workflow_name, target: data.target, attempt });
    const end = async (rec: Omit<EndRecord, 'v' | 'kind' | 'run_uuid' | 'worker_id' | 'at'>): Promise<boolean> => {
      if (this.lostLock.has(uuid)) return false;
      const ok = await recordEnd(client, this.prefix, token ?? '', attempt, {
        v: PROTOCOL_VERSION, kind: 'end', run_uuid: uuid, worker_id: this.id, at: new Date().toISOString(), ...rec,
      });
      if (!ok) this.log('attempt result refused: this worker no longer holds the task (lease lost or a newer attempt started)', { run_uuid: uuid, attempt });
      return ok;
    };
    const attemptStartedAt = nowIso();
    // Written straight into the master's database when this worker opens it too (same store_id).
    const shared = this.opts.shared && data.store_id && data.store_id === this.opts.shared.storeId ? this.opts.shared : undefined;
    let files: FileShipper | undefined;
    const handBack = async (): Promise<never> => {
      // Aborted by our own shutdown, not by a user: hand the task back for another worker.
      await end({ outcome: 'handed back', error: `worker ${this.id} stopped`, final: false });
      await job.moveToWait(token);
      throw new WaitingError();
    };
    /**
     * The watchdog stopped the attempt because its lease could not be confirmed in time (a busy
     * or paused worker, a slow Redis). When the lock is in fact still this worker's, the task goes
     * back to the queue at once with the attempt recorded as stalled, rather than failing: the
     * run is executed again by the next attempt. A lock already lost (expired, or another worker
     * took it) refuses both, and the late attempt ends fenced off, as before.
     */
    const giveUpLease = async (why: string): Promise<never> => {
      const recorded = await recordEnd(client, this.prefix, token ?? '', attempt, {
        v: PROTOCOL_VERSION, kind: 'end', run_uuid: uuid, worker_id: this.id, at: new Date().toISOString(), outcome: 'stalled', error: `worker ${this.id} stopped the attempt: ${why}`, final: false,
      }).catch(() => false);
      if (recorded && (await job.moveToWait(token).then(() => true, () => false))) {
        this.log('task given back after its lease could not be confirmed', { run_uuid: uuid, attempt });
        throw new WaitingError();
      }
      this.counters.failed++;
      throw new Fenced(`attempt ${attempt} of ${uuid} was stopped here: ${why}`);
    };
    try {
      let taskApp = this.app;
      if (shared) {
        try {
          taskApp = await this.openDirect(shared, uuid, attempt);
        } catch (err) {
          if (!(err instanceof AlreadyEnded)) throw err;
          // Nothing runs again: the end is recorded from what the shared database holds, so the
          // master records the attempt and sends the run's webhooks (once: it knows an end it saw).
          const { store: _sqlite, ...rest } = this.app;
          const run = await shared.repos.runs.getByUuid(uuid);
          if (!run) throw new UnrecoverableError(`run ${uuid} is not in the shared database`);
          const result = await collectResult({ ...rest, repos: shared.repos, db: { engine: 'postgresql', url: shared.url } }, run.id, { workerId: this.id, hostname: this.hostname }, true);
          if (!(await end({ outcome: 'result', error: '', final: true, result }))) throw new Fenced(`late result of attempt ${attempt} refused`);
          this.log('task already ended in the shared database: its end recorded', { run_uuid: uuid, status: result.run.status, attempt });
          return result;
        }
      }
      // The run's log folder follows on the master while it runs; the rest and the artifacts before the end record.
      const fileRecord = (c: FileChunk): FileRecord => ({ v: PROTOCOL_VERSION, kind: 'file', run_uuid: uuid, worker_id: this.id, at: nowIso(), ...c });
      files = new FileShipper(taskApp, uuid, (cs) => recordMany(client, this.prefix, token ?? '', attempt, cs.map(fileRecord)), (m, f) => this.log(m, f));
      files.startLive(WORKER_POLL_MS);
      if (flagged) this.userCancelled.add(uuid);
      const { result } = await runTask(
        taskApp,
        data,
        { workerId: this.id, hostname: this.hostname, attempt, onProgress: (p) => void job.updateProgress({ ...p, attempt }).catch(() => undefined) },
        { cancelledBeforeStart: flagged, direct: Boolean(shared) },
      );
      if (this.lostLock.has(uuid)) await giveUpLease(`worker ${this.id} lost the task's lease`);
      if (this.stopping && result.run.status === 'cancelled' && !this.userCancelled.has(uuid)) await handBack();
      if (!shared) {
        // The rows the attempt wrote into this worker's database travel first, fenced like the end record.
        const shipped = await shipRows({ app: this.app, prefix: this.prefix, workerId: this.id, log: (m, f) => this.log(m, f) }, client, token ?? '', attempt, uuid, attemptStartedAt);
        if (shipped === undefined) throw new Fenced(`rows of attempt ${attempt} refused`);
        if (shipped.capped) result.truncated = true;
      }
      // The last file chunks and the end record leave together (one fenced round trip, all or none).
      const sentEnd = await files.finish(result, this.id, async (cs) => {
        if (this.lostLock.has(uuid)) return false;
        const endRecord: EndRecord = { v: PROTOCOL_VERSION, kind: 'end', run_uuid: uuid, worker_id: this.id, at: new Date().toISOString(), outcome: 'result', error: '', final: true, result };
        return recordMany(client, this.prefix, token ?? '', attempt, [...cs.map(fileRecord), endRecord]);
      });
      if (!sentEnd) {
        this.log('attempt result refused: this worker no longer holds the task (lease lost or a newer attempt started)', { run_uuid: uuid, attempt });
        throw new Fenced(`late result of attempt ${attempt} refused`);
      }
      if (result.run.status === 'completed') this.counters.complete++;
      else this.counters.failed++;
      this.log('task finished', { run_uuid: uuid, status: result.run.status, steps: result.steps.length, attempt, ...(shared ? { direct: true } : {}) });
      return jobReturnValue(result);
    } catch (err) {
      if (err instanceof WaitingError || err instanceof DelayedError) throw err;
      // A run stopped here by the watchdog fails its next writes on purpose (in the shared
      // database, fenced off): that is not the task's outcome, the task goes back if it can.
      if (this.lostLock.has(uuid) && !(err instanceof Fenced)) await giveUpLease(messageOf(err));
      if (shared && isFenceError(err)) {
        this.counters.failed++;
        throw new Fenced(`attempt ${attempt} of ${uuid} was stopped here: ${messageOf(err)}`);
      }
      if (shared && this.stopping && !this.userCancelled.has(uuid)) await handBack();
      this.counters.failed++;
      if (err instanceof Fenced) throw err;
      // BullMQ keeps err.message as the job's failedReason; the end record is what the master applies.
      const message = rejectionMessage(err);
      const final = err instanceof UnrecoverableError || (job.attemptsMade ?? 0) + 1 >= (job.opts.attempts ?? 1);
      await end({ outcome: 'error', error: message, final }).catch(() => undefined);
      throw new Error(message);
    } finally {
      files?.stop();
      const d = this.direct.get(uuid);
      if (d) {
        this.direct.delete(uuid);
        await d.store.close().catch(() => undefined);
      }
      signal?.removeEventListener('abort', onAbort);
      this.current.delete(uuid);
      this.leases.released(uuid);
      this.userCancelled.delete(uuid);
      this.lostLock.delete(uuid);
      // Not awaited: the entry is written shortly, once for the changes of a short window; the slot is free.
      this.publishSoon();
    }
  }

  /**
   * Takes the run for `attempt` in the shared database (claimRun raises its fence and clears an
   * earlier attempt) and opens the attempt's fenced store: every write of this execution —
   * engine, evaluator processes, bridge threads, which reopen the locator's URL — carries the
   * fence, and the database refuses it once a newer attempt has claimed the run.
   */
  private async openDirect(shared: SharedDatabase, uuid: string, attempt: number): Promise<AppContext> {
    const claim = await shared.repos.attempts.claimRun(uuid, attempt);
    if (claim === 'superseded') throw new Fenced(`attempt ${attempt} of ${uuid} is older than the one holding the run in the shared database`);
    if (claim === 'missing') throw new UnrecoverableError(`run ${uuid} is not in the shared database`);
    if (claim === 'finished') throw new AlreadyEnded(`run ${uuid} already ended in the shared database`);
    const url = fencedUrl(shared.url, uuid, attempt);
    const store = await openPgStore(url, { migrate: false, max: 4 });
    this.direct.set(uuid, { attempt, store });
    const { store: _sqlite, ...rest } = this.app;
    return { ...rest, repos: store, db: { engine: 'postgresql', url } };
  }

  /**
   * Stops a run executing here. Written straight into the shared database, it is first given back
   * there (its fence moves past this attempt, the run waits queued) and its store closed, so the
   * aborted run's own last writes — a `cancelled` status — never reach the shared run.
   */
  private async halt(uuid: string): Promise<void> {
    const d = this.direct.get(uuid);
    if (d && this.opts.shared) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, RELEASE_TIMEOUT_MS);
      });
      await Promise.race([this.opts.shared.repos.attempts.releaseRun(uuid, d.attempt).catch(() => false), timeout]);
      if (timer) clearTimeout(timer);
      await d.store.close().catch(() => undefined);
    }
    abortRun(uuid, 'shutdown');
  }

  /** Stops a run whose lease this worker lost: its process groups are killed by the engine at once. */
  private loseLease(uuid: string, why: string): void {
    if (!this.current.has(uuid) || this.lostLock.has(uuid)) return;
    this.log(`lost the lease of a running task (${why}); stopping it here, it may be re-run elsewhere`, { run_uuid: uuid });
    this.lostLock.add(uuid);
    void this.halt(uuid);
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
    if (this.publishTimer) clearTimeout(this.publishTimer);
    this.publishTimer = undefined;
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    await Promise.all([...this.current].map((uuid) => this.halt(uuid)));
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
