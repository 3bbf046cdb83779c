/**
 * The daemon's scheduler (reference §5, with the "recommended TS behaviour" of §5.3): enabled
 * schedule rows and the cron/event/watch triggers of indexed workflows are registered at start;
 * changes made through the API re-register at once, changes made by other processes (the CLI) are
 * picked up by a periodic resync. Every fire creates a queued run row. Events are read from the
 * event log (id > last seen, every second) so API-emitted events and the engine's own run/step/
 * asset events can both trigger workflows. Filters and input functions are workflow code: they run
 * in script evaluator processes, one event at a time and in order (src/engine/scripts/pool.ts).
 */
import cron from 'node-cron';
import { messageOf } from '../errors.js';
import type { RunQueue } from '../engine/queue.js';
import type { EventRecord } from '../store/index.js';
import type { AppContext } from '../services/context.js';
import type { Workflow } from '../workflow/types.js';
import { normaliseCron } from './cron.js';
import { Deduper, eventFromRecord, filtersPass, renderEventText, type EventEnvelope } from './event-match.js';
import { fireTrigger, recordFireFailure } from './fire.js';
import { resolveInput } from './input-map.js';
import { setLiveScheduler, type LiveScheduler } from './live.js';
import { topicMatches } from './topic-match.js';
import { fingerprint, loadWorkflowTriggers, scheduleKey, specFromSchedule, type TriggerSpec } from './triggers.js';
import { checkWatchPath, watchFile } from './watch.js';
import { parseDuration } from '../util/duration.js';
import { statusOf, triggerInfo, workflowsOf, type Registered, type TriggerInfo } from './registry.js';

export type { TriggerInfo } from './registry.js';

export interface SchedulerOptions {
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  queue?: RunQueue;
  /** Event log poll interval (default 1000 ms). */
  pollMs?: number;
  /** Schedule table resync interval (default 5000 ms); workflow triggers every 6th resync. */
  resyncMs?: number;
  /** Time limit of one filter or input expression (default 1000 ms). */
  exprTimeoutMs?: number;
  /** Unprocessed events replayed at start (default 100, as the reference). */
  replayLimit?: number;
  /** Debounce of watch triggers without their own (default 500 ms). */
  watchDebounceMs?: number;
  /** false (`serve --no-event-receiver`): events are recorded but never fire event triggers. */
  eventReceiver?: boolean;
}

const BATCH = 200;

export class Scheduler implements LiveScheduler {
  private readonly triggers = new Map<string, Registered>();
  private readonly deduper = new Deduper();
  private workflowsSeen: Workflow[] = [];
  private lastEventId = 0;
  private pollTimer?: NodeJS.Timeout;
  private resyncTimer?: NodeJS.Timeout;
  private resyncTicks = 0;
  private running = false;
  private pokeQueued = false;
  /** Event handling in order: each look at the log waits for the previous one. */
  private polling: Promise<void> = Promise.resolve();
  private pollWaiting?: Promise<void>;
  private readonly pendingWatches = new Set<Promise<unknown>>();
  readonly problems: string[] = [];

  constructor(
    private readonly app: AppContext,
    private readonly opts: SchedulerOptions = {},
  ) {}

  private log(msg: string, fields?: Record<string, unknown>): void {
    this.opts.log?.(msg, fields);
  }

  // node-cron's own messages (missed executions) go to our log, not to the console.
  private readonly cronLogger = {
    info: (m: string) => this.log(`cron: ${m}`),
    warn: (m: string) => this.log(`cron: ${m}`),
    error: (m: string | Error) => this.log(`cron: ${messageOf(m)}`),
    debug: () => undefined,
  };

  /** Registers everything, replays unprocessed events, starts the timers. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    setLiveScheduler(this.app, this);
    await this.resyncSchedules();
    this.reloadWorkflowTriggers();
    await this.settled();
    if (this.opts.eventReceiver !== false) {
      // Tail the log from here; older unprocessed rows (emitted while no scheduler ran) are replayed once.
      const startMax = await this.app.repos.events.maxId();
      for (const rec of await this.app.repos.events.listUnprocessed(this.opts.replayLimit ?? 100)) {
        if (rec.id <= startMax) await this.handleEventSafe(rec);
      }
      this.lastEventId = startMax;
      this.pollTimer = setInterval(() => void this.pollEvents(), this.opts.pollMs ?? 1000);
      this.pollTimer.unref();
    }
    this.resyncTimer = setInterval(() => {
      void this.resyncSchedules().catch((err: unknown) => this.log('scheduler: resync failed', { error: messageOf(err) }));
      if (++this.resyncTicks % 6 === 0) this.reloadWorkflowTriggers();
    }, this.opts.resyncMs ?? 5000);
    this.resyncTimer.unref();
    this.log('scheduler started', { triggers: this.triggers.size });
  }

  /** Clears every timer, cron task and watcher. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.pollTimer = undefined;
    this.resyncTimer = undefined;
    await this.polling;
    await this.settled();
    for (const key of [...this.triggers.keys()]) this.unregister(key);
    await this.settled();
    setLiveScheduler(this.app, undefined);
  }

  /** True between start and stop. */
  get isRunning(): boolean {
    return this.running;
  }

  /** Resolves once pending watcher set-ups and tear-downs are done. */
  async settled(): Promise<void> {
    while (this.pendingWatches.size > 0) await Promise.allSettled([...this.pendingWatches]);
  }

  private track<T>(p: Promise<T>): void {
    const wrapped = p.catch((err: unknown) => this.log('scheduler: watcher error', { error: messageOf(err) }));
    this.pendingWatches.add(wrapped);
    void wrapped.finally(() => this.pendingWatches.delete(wrapped));
  }

  // ---- registration ---------------------------------------------------------------------------

  /** Registers (or re-registers) a trigger; disabled ones are only dropped. Problems are kept in `error`. */
  register(spec: TriggerSpec): void {
    this.unregister(spec.key);
    if (!spec.enabled || !this.running) return;
    const reg: Registered = { spec, print: fingerprint(spec), nextRun: null, lastRun: null, runCount: 0, error: '' };
    this.triggers.set(spec.key, reg);
    try {
      if (spec.type === 'cron') {
        const expr = normaliseCron(spec.schedule ?? '');
        reg.task = cron.createTask(expr, () => void this.fireCron(spec.key), { name: spec.key, logger: this.cronLogger });
        void reg.task.start();
        reg.nextRun = reg.task.getNextRun()?.toISOString() ?? null;
      } else if (spec.type === 'watch') {
        const path = checkWatchPath(this.app, spec.watchPath ?? '');
        this.track(
          watchFile(path, spec.debounceMs ?? this.opts.watchDebounceMs ?? 500, () => void this.fireWatch(spec.key), (err) => this.log('scheduler: watch error', { trigger: spec.key, error: messageOf(err) })).then((w) => {
            if (this.triggers.get(spec.key) === reg) reg.watch = w;
            else return w.close();
          }),
        );
      }
    } catch (err) {
      reg.error = messageOf(err);
      this.log('scheduler: trigger not registered', { trigger: spec.key, error: reg.error });
    }
    if (spec.scheduleId) {
      const written = this.app.repos.schedules.setNextRun(spec.scheduleId, reg.nextRun); // awaited below
      this.track(written.catch((err: unknown) => this.log('scheduler: next_run not written', { trigger: spec.key, error: messageOf(err) })));
    }
  }

  /** Drops a trigger: its cron task and watcher stop. */
  unregister(key: string): void {
    const reg = this.triggers.get(key);
    if (!reg) return;
    this.triggers.delete(key);
    if (reg.task) void reg.task.destroy();
    if (reg.watch) this.track(reg.watch.close());
    this.deduper.forgetPrefix(`${key}\u0000`);
  }

  /** Re-reads one schedule row: registers, re-registers or drops its trigger. */
  async syncSchedule(id: string): Promise<void> {
    const row = await this.app.repos.schedules.get(id);
    if (!row || !row.is_enabled) {
      this.unregister(scheduleKey(id));
      if (row) await this.app.repos.schedules.setNextRun(id, null);
      return;
    }
    this.register(specFromSchedule(row));
  }

  /** Brings schedule triggers in line with the table (rows changed by another process). */
  async resyncSchedules(): Promise<void> {
    let rows;
    try {
      rows = await this.app.repos.schedules.listEnabled();
    } catch (err) {
      this.log('scheduler: cannot read schedules', { error: messageOf(err) });
      return;
    }
    const wanted = new Map(rows.map((r) => [scheduleKey(r.id), specFromSchedule(r)]));
    for (const [key, reg] of this.triggers) {
      if (reg.spec.origin === 'schedule' && !wanted.has(key)) this.unregister(key);
    }
    for (const [key, spec] of wanted) {
      const cur = this.triggers.get(key);
      if (!cur || cur.print !== fingerprint(spec)) this.register(spec);
    }
  }

  /** Re-reads the triggers declared in workflow files. */
  reloadWorkflowTriggers(): void {
    let loaded;
    try {
      loaded = loadWorkflowTriggers(this.app);
    } catch (err) {
      this.log('scheduler: cannot list workflows', { error: messageOf(err) });
      return;
    }
    this.workflowsSeen = loaded.workflows;
    this.problems.splice(0, this.problems.length, ...loaded.errors);
    const wanted = new Map(loaded.specs.filter((s) => s.enabled).map((s) => [s.key, s]));
    for (const [key, reg] of this.triggers) {
      if (reg.spec.origin === 'workflow' && !wanted.has(key)) this.unregister(key);
    }
    for (const [key, spec] of wanted) {
      const cur = this.triggers.get(key);
      if (!cur || cur.print !== fingerprint(spec)) this.register(spec);
    }
  }

  // ---- firing ---------------------------------------------------------------------------------

  /** The current spec of a trigger at fire time; a schedule row is re-read (deleted or disabled → dropped). */
  private async currentSpec(key: string): Promise<Registered | undefined> {
    const reg = this.triggers.get(key);
    if (!reg || !reg.spec.scheduleId) return reg;
    const row = await this.app.repos.schedules.get(reg.spec.scheduleId);
    if (!row || !row.is_enabled) {
      this.unregister(key);
      return undefined;
    }
    reg.spec = specFromSchedule(row);
    return reg;
  }

  private async fire(reg: Registered, triggerType: 'cron' | 'watch' | 'event', extra: { target?: string; params?: Record<string, string>; envelope?: EventEnvelope } = {}): Promise<string> {
    const nextRun = reg.task ? (reg.task.getNextRun()?.toISOString() ?? null) : undefined;
    if (nextRun !== undefined) reg.nextRun = nextRun;
    try {
      const run = await fireTrigger(this.app, reg.spec, { triggerType, queue: this.opts.queue, nextRun, ...extra });
      reg.lastRun = new Date().toISOString();
      reg.runCount += 1;
      this.log('scheduler: fired', { trigger: reg.spec.key, type: triggerType, run_uuid: run.run_uuid });
      return '';
    } catch (err) {
      const message = messageOf(err);
      this.log('scheduler: fire failed', { trigger: reg.spec.key, type: triggerType, error: message });
      return message;
    }
  }

  /** Cron tick of one trigger (never rejects). */
  fireCron(key: string): Promise<void> {
    return this.fireStatic(key, 'cron');
  }

  /** Debounced change of a watched file (never rejects). */
  fireWatch(key: string): Promise<void> {
    return this.fireStatic(key, 'watch');
  }

  /** A fire without an event: the input can only hold literals and function calls. */
  private async fireStatic(key: string, type: 'cron' | 'watch'): Promise<void> {
    const reg = await this.currentSpec(key);
    if (!reg || !this.running) return;
    let extra: { target?: string; params?: Record<string, string> };
    try {
      extra = await resolveInput(reg.spec.input, undefined, { timeoutMs: this.opts.exprTimeoutMs });
    } catch (err) {
      await this.fail(reg, type, err);
      return;
    }
    // Stopped, or the trigger changed, while its input was evaluated.
    if (!this.running || this.triggers.get(key) !== reg) return;
    await this.fire(reg, type, extra);
  }

  /** Records a fire that failed before a run could be created (bad input). */
  private async fail(reg: Registered, type: 'cron' | 'watch' | 'event', err: unknown): Promise<string> {
    const message = messageOf(err);
    this.log('scheduler: fire failed', { trigger: reg.spec.key, type, error: message });
    const nextRun = reg.task ? (reg.task.getNextRun()?.toISOString() ?? null) : undefined;
    if (nextRun !== undefined) reg.nextRun = nextRun;
    await recordFireFailure(this.app, reg.spec, { triggerType: type, nextRun }, message);
    return message;
  }

  // ---- events ---------------------------------------------------------------------------------

  /** Looks at new events soon (after the current I/O turn) instead of at the next poll. */
  poke(): void {
    if (this.pokeQueued || !this.running) return;
    this.pokeQueued = true;
    setImmediate(() => {
      this.pokeQueued = false;
      void this.pollEvents();
    });
  }

  /** Handles every event recorded since the last look; resolves once they are handled. */
  processPending(): Promise<void> {
    return this.pollEvents();
  }

  /**
   * Queues one look at the event log behind the one in progress (never rejects). A look that has
   * not started yet covers every event recorded so far, so callers share it.
   */
  private pollEvents(): Promise<void> {
    if (this.pollWaiting) return this.pollWaiting;
    const next = this.polling
      .then(() => {
        this.pollWaiting = undefined;
        return this.pollOnce();
      })
      .catch((err: unknown) => this.log('scheduler: event polling failed', { error: messageOf(err) }));
    this.pollWaiting = next;
    this.polling = next;
    return next;
  }

  private async pollOnce(): Promise<void> {
    if (!this.running || this.opts.eventReceiver === false) return;
    for (let round = 0; round < 50; round++) {
      let batch: EventRecord[];
      try {
        batch = await this.app.repos.events.listAfter(this.lastEventId, BATCH);
      } catch (err) {
        this.log('scheduler: cannot read events', { error: messageOf(err) });
        return;
      }
      for (const rec of batch) {
        this.lastEventId = rec.id;
        await this.handleEventSafe(rec);
      }
      if (batch.length < BATCH) return;
    }
  }

  private async handleEventSafe(rec: EventRecord): Promise<void> {
    try {
      await this.handleEvent(rec);
    } catch (err) {
      this.log('scheduler: event handling failed', { event_id: rec.event_id, error: messageOf(err) });
    }
  }

  /** True when the event comes from a run this same trigger started (a trigger never feeds itself). */
  private async causedBy(rec: EventRecord, spec: TriggerSpec): Promise<boolean> {
    if (!rec.run_id) return false;
    const run = await this.app.repos.runs.getByUuid(rec.run_id);
    return Boolean(run && run.trigger_type === 'event' && run.workflow_name === spec.workflowName && run.trigger_name === spec.triggerName);
  }

  /**
   * Matches one event against every registered event trigger and fires the matches. The row is
   * marked processed (with the fire errors, if any) when it was not already.
   */
  async handleEvent(rec: EventRecord): Promise<{ matched: string[]; errors: string[] }> {
    const matched: string[] = [];
    const problems: string[] = [];
    // The scheduler's own records never trigger anything (a trigger on every topic would loop).
    if (rec.source_type !== 'scheduler') {
      const env = eventFromRecord(rec);
      for (const reg of [...this.triggers.values()]) {
        const spec = reg.spec;
        if (spec.type !== 'event' || !topicMatches(spec.event?.topic, env.topic)) continue;
        if (!(await filtersPass(spec.event, env, { timeoutMs: this.opts.exprTimeoutMs }))) continue;
        if (await this.causedBy(rec, spec)) continue;
        if (spec.event?.dedupe_key) {
          let windowMs: number | undefined;
          try {
            windowMs = parseDuration(spec.event.dedupe_window ?? '') ?? 0;
          } catch {
            windowMs = 0;
          }
          if (this.deduper.isDuplicate(`${spec.key}\u0000${renderEventText(spec.event.dedupe_key, env)}`, windowMs)) continue;
        }
        const current = await this.currentSpec(spec.key);
        if (!current) continue;
        matched.push(spec.key);
        let input: { target?: string; params?: Record<string, string> };
        try {
          input = await resolveInput(current.spec.input, env, { timeoutMs: this.opts.exprTimeoutMs });
        } catch (err) {
          problems.push(`${spec.key}: ${await this.fail(current, 'event', err)}`);
          continue;
        }
        const error = await this.fire(current, 'event', { ...input, envelope: env });
        if (error) problems.push(`${spec.key}: ${error}`);
      }
    }
    if (!rec.processed) await this.app.repos.events.markProcessed(rec.id, problems.join('; ').slice(0, 2000));
    return { matched, errors: problems };
  }

  // ---- reporting ------------------------------------------------------------------------------

  /** Every registered trigger. */
  list(): TriggerInfo[] {
    return [...this.triggers.values()].map(triggerInfo);
  }

  /** `GET /event-receiver/status`. */
  status(): { enabled: boolean; running: boolean; workflow_count: number; trigger_count: number } {
    return statusOf([...this.triggers.values()], this.running && this.opts.eventReceiver !== false);
  }

  /** `GET /event-receiver/workflows`: workflows with registered triggers, and the triggers. */
  workflows(): ReturnType<typeof workflowsOf> {
    return workflowsOf(this.list(), (name) => this.workflowsSeen.find((w) => w.name === name) ?? this.tryLoad(name));
  }

  private tryLoad(name: string): Workflow | undefined {
    try {
      return this.app.loader.load(name);
    } catch {
      return undefined;
    }
  }
}

/** Starts the scheduler of the daemon (`osm serve`); `stop()` clears every timer and watcher. */
export async function startScheduler(app: AppContext, opts: SchedulerOptions = {}): Promise<Scheduler> {
  const scheduler = new Scheduler(app, opts);
  await scheduler.start();
  return scheduler;
}
