import { ownedOnOtherHost, ownerHostOf } from '../store/owner.js';
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import { executeStoredRun } from '../services/runs.js';
import { storedRunOptions } from '../services/run-options.js';
import { abortRun } from './executor.js';
import { isAlive, killGroup, sameProcess } from './process-registry.js';
import type { RunSource } from './recorder.js';
import { messageOf } from '../errors.js';

export interface QueueOptions {
  /** Global limit of concurrently executing runs (read live so a settings reload applies). */
  limit: () => number;
  /** How often to look for runs queued by other processes. */
  pollMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface ReconcileReport {
  failed: string[];
  killedPids: number[];
  requeued: number;
}

/** Source recorded in run events for a run's trigger. */
function sourceOf(run: RunRecord): RunSource {
  if (run.trigger_type === 'cli') return 'cli';
  if (run.trigger_type === 'cron' || run.trigger_type === 'event' || run.trigger_type === 'watch' || run.trigger_type === 'schedule') return 'scheduler';
  return 'api';
}

/**
 * The daemon's run scheduler. The queue IS the database: runs are rows in status `queued`; a run
 * waiting for a slot holds nothing. Runs are claimed by priority (critical > high > normal > low,
 * then FIFO) under a global limit and each job's own `concurrency`; a claim is a conditional
 * status update, so two schedulers can never start the same run.
 */
/** Jobs whose limits the queue remembers (for its one-statement claims) besides those with runs here. */
const GROUP_LIMITS_KEPT = 256;

export class RunQueue {
  private readonly running = new Map<string, { run: RunRecord; done: Promise<void> }>();
  private readonly groupRunning = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private kicking = false;
  /** A kick asked for while one was running: it goes round once more. */
  private kickAgain = false;
  /** Every launched run until its after-work is done too (stop and busy() wait for these). */
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim pass in progress (stop waits for it, so no run is claimed after it looked). */
  private pass?: Promise<void>;

  constructor(
    private readonly app: AppContext,
    private readonly opts: QueueOptions,
  ) {}

  /** Reconciles what a previous daemon left behind, then starts scheduling. */
  async start(): Promise<ReconcileReport> {
    const report = await this.reconcile();
    // pollMs 0 (`serve --no-queue-polling`): runs queued by other processes (`osm run --queue`)
    // wait for the next submit or completion here instead of being picked up every 2 s.
    if (this.opts.pollMs !== 0) {
      this.timer = setInterval(() => this.kick(), this.opts.pollMs ?? 2000);
      this.timer.unref();
    }
    this.kick();
    return report;
  }

  /** Runs this queue is executing now. */
  runningRuns(): RunRecord[] {
    return [...this.running.values()].map((r) => r.run);
  }

  /**
   * Whether the queue has work in hand: a claim pass in progress (a run it claimed is `running` in
   * the database before it appears in runningRuns()), runs executing, or finished runs' after-work.
   */
  busy(): boolean {
    return this.kicking || this.running.size > 0 || this.inFlight.size > 0;
  }

  /** The current global limit. */
  limit(): number {
    return Math.max(1, this.opts.limit());
  }

  /** Runs executing now. */
  active(): RunRecord[] {
    return [...this.running.values()].map((r) => r.run);
  }

  /** Number of runs waiting. */
  async depth(): Promise<number> {
    return (await this.app.repos.runs.countByStatus()).queued ?? 0;
  }

  /**
   * Marks runs that were running when their owner died as failed (killing any process group still
   * alive) and leaves queued runs to run. A CLI process still alive keeps its runs.
   */
  async reconcile(): Promise<ReconcileReport> {
    const report: ReconcileReport = { failed: [], killedPids: [], requeued: 0 };
    const repos = this.app.repos;
    for (const run of await repos.runs.listActive()) {
      if (run.status !== 'running' && run.status !== 'pending' && run.current_pid === 0) continue;
      // Another host's run (a database shared by daemons on several machines) is not ours to judge.
      if (ownedOnOtherHost(run)) continue;
      if (run.owner_pid && run.owner_pid !== process.pid && isAlive(run.owner_pid)) continue;
      if (run.status === 'pending' && !run.owner_pid) continue;
      // Only the very process that was recorded (PID + start time): PIDs are reused.
      if (run.current_pid && (sameProcess(run.current_pid, run.current_pid_start) || (!isAlive(run.current_pid) && isAlive(-run.current_pid)))) {
        killGroup(run.current_pid, 0);
        report.killedPids.push(run.current_pid);
      }
      const owner = run.trigger_type === 'cli' ? `the osm process (pid ${run.owner_pid})` : 'the daemon';
      const message = `${owner} stopped while the run was ${run.status}; the run was marked failed at daemon start`;
      await repos.tx(async () => {
        await repos.steps.failUnfinished(run.id, 'the process executing this step stopped');
        await repos.runs.transition(run.id, 'failed', { error_message: message });
        await repos.runs.update(run.id, { current_pid: 0 });
        await repos.events.insert({
          topic: 'run.failed', name: 'run.failed', source: 'executor', source_type: 'run', data_type: 'scan',
          data: { scan_id: run.run_uuid, target: run.target, error: message }, workspace: run.workspace, run_id: run.run_uuid, workflow_name: run.workflow_name, processed: true,
        });
      });
      report.failed.push(run.run_uuid);
    }
    report.requeued = (await repos.runs.countByStatus()).queued ?? 0;
    return report;
  }

  /**
   * Starts as many queued runs as the limits allow. Safe to call any time: it returns at once, the
   * claims happen in the background (one pass at a time; a kick during a pass adds one more pass).
   */
  /** The last claim failure still going on ('' when claims work). */
  private claimProblem = '';

  kick(): void {
    if (this.stopping) return;
    if (this.kicking) {
      this.kickAgain = true;
      return;
    }
    this.kicking = true;
    this.pass = this.claimAll()
      .then(() => {
        if (this.claimProblem) this.opts.log?.('queue claims work again', { after: this.claimProblem });
        this.claimProblem = '';
      })
      .catch((err: unknown) => {
        // A database that is away fails every poll: said once, not every two seconds.
        const problem = messageOf(err);
        if (problem !== this.claimProblem) this.opts.log?.('queue claim failed', { error: problem });
        this.claimProblem = problem;
      })
      .finally(() => {
        this.kicking = false;
        this.pass = undefined;
        if (this.kickAgain) {
          this.kickAgain = false;
          this.kick();
        }
      });
  }

  /**
   * Runs of a claim that failed: on PostgreSQL a claim whose connection was cut off after it was
   * sent may have been applied (the runs are then `running` and this daemon's, yet nobody
   * launched them). They are looked at again at the start of the next pass.
   */
  private readonly maybeClaimed = new Set<number>();

  /** Times (`at`) of one-statement claims that failed: their runs, if any, carry that updated_at. */
  private readonly maybeClaimedAt = new Set<string>();

  /** Launches the runs of failed claims that the database says this daemon did claim. */
  private async adoptMaybeClaimed(): Promise<void> {
    const host = ownerHostOf(process.pid);
    if (this.maybeClaimedAt.size > 0) {
      const ats = new Set(this.maybeClaimedAt);
      this.maybeClaimedAt.clear();
      for (const run of await this.app.repos.runs.listActive()) {
        if (run.status === 'running' && run.owner_pid === process.pid && run.owner_host === host && ats.has(run.updated_at) && !this.running.has(run.run_uuid)) {
          this.opts.log?.('run claimed while the database connection was lost: launching it', { run_uuid: run.run_uuid });
          this.launch(run);
        }
      }
    }
    for (const id of [...this.maybeClaimed]) {
      const run = await this.app.repos.runs.get(id);
      this.maybeClaimed.delete(id);
      if (run && run.status === 'running' && run.owner_pid === process.pid && run.owner_host === host && !this.running.has(run.run_uuid)) {
        this.opts.log?.('run claimed while the database connection was lost: launching it', { run_uuid: run.run_uuid });
        this.launch(run);
      }
    }
  }

  private async claimAll(): Promise<void> {
    if (this.maybeClaimed.size > 0 || this.maybeClaimedAt.size > 0) await this.adoptMaybeClaimed();
    while (!this.stopping) {
      let free = this.limit() - this.running.size;
      if (free <= 0) break;
      const saturated = [...this.groupRunning.entries()].filter(([g, n]) => n >= this.groupLimitOf(g)).map(([g]) => g);
      // First in one statement: the runs at the head of the queue whose jobs' limits are known
      // (every job once planned below), listed and claimed together. The claim's time marks its
      // runs should its answer be lost.
      const caps: Record<string, number> = {};
      for (const [g, limit] of this.groupLimits) if (!saturated.includes(g)) caps[g] = Math.max(0, limit - (this.groupRunning.get(g) ?? 0));
      const at = new Date().toISOString();
      let quick: RunRecord[];
      try {
        quick = await this.app.repos.runs.claimQueued({ free, scan: Math.min(50, free + 16), exclude: saturated, caps, ownerPid: process.pid, at });
      } catch (err) {
        this.maybeClaimedAt.add(at);
        throw err;
      }
      for (const run of quick) this.launch(run);
      if (quick.length >= free) continue;
      // Fewer than the free slots: the queue is short, or a job not planned yet was next.
      free = this.limit() - this.running.size;
      if (free <= 0) break;
      // A few more candidates than free slots: runs of a job at its own limit are passed over,
      // and the loop reads again once that job is saturated (then excluded in the query).
      const candidates = await this.app.repos.runs.listQueued(Math.min(50, free + 16), saturated);
      // As many as the free slots and each job's own limit allow, in claim order.
      const planned = new Map(this.groupRunning);
      const picked: number[] = [];
      for (const cand of candidates) {
        if (picked.length >= free) break;
        const g = cand.run_group_id;
        if (g) {
          const n = planned.get(g) ?? 0;
          if (n >= this.groupLimit(cand)) continue;
          planned.set(g, n + 1);
        }
        picked.push(cand.id);
      }
      if (picked.length === 0) break;
      // The claim is the conditional queued → running change with the owner, all picked runs in
      // one statement: only one claimer can win a run, and none is ever seen running without its
      // owner. Runs taken by another claimer or cancelled meanwhile are left out.
      let claimed: RunRecord[];
      try {
        claimed = await this.app.repos.runs.claim(picked, process.pid);
      } catch (err) {
        for (const id of picked) this.maybeClaimed.add(id);
        throw err;
      }
      for (const run of claimed) this.launch(run);
      if (claimed.length === 0) break;
    }
  }

  private readonly groupLimits = new Map<string, number>();

  private groupLimit(run: Pick<RunRecord, 'run_group_id' | 'options'>): number {
    const limit = storedRunOptions(run.options).concurrency ?? 1;
    const g = run.run_group_id;
    if (g) {
      // Most recently planned last; jobs with no run here are forgotten past GROUP_LIMITS_KEPT.
      this.groupLimits.delete(g);
      this.groupLimits.set(g, limit);
      if (this.groupLimits.size > GROUP_LIMITS_KEPT) {
        for (const old of this.groupLimits.keys()) {
          if (this.groupLimits.size <= GROUP_LIMITS_KEPT) break;
          if (!this.groupRunning.has(old)) this.groupLimits.delete(old);
        }
      }
    }
    return limit;
  }

  private groupLimitOf(group: string): number {
    return this.groupLimits.get(group) ?? 1;
  }

  private launch(run: RunRecord): void {
    const g = run.run_group_id;
    if (g) this.groupRunning.set(g, (this.groupRunning.get(g) ?? 0) + 1);
    this.opts.log?.('run started', { run_uuid: run.run_uuid, workflow: run.workflow_name, target: run.target, priority: run.priority });
    // The slot is free again once the run is terminal: its after-work (diff snapshots, uploads)
    // is not a running run, and the next queued run need not wait for it.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.running.delete(run.run_uuid);
      if (g) {
        const n = (this.groupRunning.get(g) ?? 1) - 1;
        if (n <= 0) this.groupRunning.delete(g);
        else this.groupRunning.set(g, n);
      }
      setImmediate(() => this.kick());
    };
    // The claimed row is fresh: the executor does not read it again.
    const done: Promise<void> = executeStoredRun(this.app, run, { stdout: false, silent: true, color: false }, sourceOf(run), { fresh: true, ended: release })
      .then((out) => this.opts.log?.('run finished', { run_uuid: run.run_uuid, status: out.status, ms: out.durationMs }))
      .catch(async (err: unknown) => {
        this.opts.log?.('run crashed', { run_uuid: run.run_uuid, error: messageOf(err) });
        await this.app.repos.runs.transition(run.id, 'failed', { error_message: `internal error: ${messageOf(err)}` }).catch(() => undefined);
      })
      .finally(() => {
        this.inFlight.delete(done);
        release();
      });
    this.running.set(run.run_uuid, { run, done });
    this.inFlight.add(done);
  }

  /** Stops scheduling, cancels running runs (children killed, recorded cancelled) and waits for them. */
  async stop(timeoutMs = 8000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.pass;
    for (const uuid of this.running.keys()) abortRun(uuid, 'cancelled');
    const all = Promise.all([...this.inFlight]);
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }
}
