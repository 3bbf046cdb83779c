/**
 * Run and step state changes as they are recorded (GET /osm/api/events/stream): the `run.*` and
 * `step.*` records of the event log, in order, each with its event log id — the stream's cursor, so
 * a client reconnecting with `Last-Event-ID` gets exactly the records after the last one it saw.
 * Run records carry the run's summary as it is when sent (the status the record announces), step
 * records the step's outcome, so lists update without polling.
 *
 * A caller bound to organizations sees only the records of its orgs' runs.
 *
 * One watcher per daemon looks for new records (every 250 ms while anyone listens, and at once
 * when a run of this process changes); each stream then reads from its own cursor at its own pace.
 */
import type { Principal } from '../auth/principal.js';
import { inScope, scopeOf, type Scope } from '../auth/scope.js';
import type { EventRecord, RunRecord } from '../store/index.js';
import { onRunChange } from '../engine/live/run-output.js';
import type { AppContext } from './context.js';

export interface RunSummary {
  id: number;
  run_uuid: string;
  status: string;
  workflow_name: string;
  target: string;
  workspace: string;
  completed_steps: number;
  total_steps: number;
  current_step?: string;
}

export interface StepChange {
  run_uuid: string;
  step_name: string;
  status: string;
  exit_code: number | null;
  duration_ms: number;
}

/** One stream item: the event log record's id and topic, and what it says. */
export interface StreamEvent {
  id: number;
  topic: string;
  data: RunSummary | StepChange;
}

const STATUS_OF_TOPIC: Record<string, string> = {
  'run.queued': 'queued',
  'run.started': 'running',
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
  'step.started': 'running',
  'step.completed': 'completed',
  'step.failed': 'failed',
};

const POLL_MS = 250;
const BATCH = 200;

/** The one event log watcher of an app context: pings its listeners when new records exist. */
class EventLogWatch {
  private readonly listeners = new Set<() => void>();
  private timer?: NodeJS.Timeout;
  private unhook?: () => void;
  private seen = 0;
  /** Settles once `seen` holds the newest record id of the time the first listener came. */
  private seeded: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(private readonly app: AppContext) {}

  get size(): number {
    return this.listeners.size;
  }

  listen(cb: () => void): () => void {
    this.listeners.add(cb);
    if (!this.timer) {
      this.seeded = this.app.repos.events.maxId().then( // awaited below (look)
        (max) => void (this.seen = max),
        () => undefined, // the database is closing
      );
      this.timer = setInterval(() => void this.look(), POLL_MS);
      this.timer.unref();
      this.unhook = onRunChange(() => this.soon());
    }
    return () => {
      this.listeners.delete(cb);
      if (this.listeners.size === 0) {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        this.unhook?.();
        this.unhook = undefined;
      }
    };
  }

  /** Looks after the current turn (the change being recorded has committed by then). */
  private soon(): void {
    if (this.queued) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      void this.look();
    });
  }

  private async look(): Promise<void> {
    await this.seeded;
    let max: number;
    try {
      max = await this.app.repos.events.maxId();
    } catch {
      return; // the database is closing
    }
    if (max <= this.seen) return;
    this.seen = max;
    for (const cb of [...this.listeners]) cb();
  }
}

const watches = new WeakMap<AppContext, EventLogWatch>();

function watchOf(app: AppContext): EventLogWatch {
  let w = watches.get(app);
  if (!w) {
    w = new EventLogWatch(app);
    watches.set(app, w);
  }
  return w;
}

/** Listeners on an app's event log watcher (tests: disconnected streams leave none). */
export function eventStreamListeners(app: AppContext): number {
  return watches.get(app)?.size ?? 0;
}

function parseData(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A run as the stream shows it, with the status of the record that announced it. */
async function runSummary(app: AppContext, run: RunRecord, status: string): Promise<RunSummary> {
  const running = status === 'running' ? (await app.repos.steps.listByRun(run.id)).filter((s) => s.status === 'running') : [];
  return {
    id: run.id,
    run_uuid: run.run_uuid,
    status,
    workflow_name: run.workflow_name,
    target: run.target,
    workspace: run.workspace,
    completed_steps: run.completed_steps,
    total_steps: run.total_steps,
    ...(running.length ? { current_step: running[running.length - 1]!.step_name } : {}),
  };
}

/** An open event stream: `items()` yields until the signal aborts. */
export class EventStreamSession {
  private readonly scope: Scope;

  constructor(
    private readonly app: AppContext,
    /** Who reads (the request's principal). */
    readonly principal: Principal | undefined,
    private readonly after?: number,
  ) {
    this.scope = scopeOf(principal);
  }

  /** Records after the cursor (or from now on), as they are recorded. */
  async *items(signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const repos = this.app.repos;
    let cursor = this.after ?? (await repos.events.maxId());
    let wake: (() => void) | undefined;
    let pinged = false;
    const ping = () => {
      pinged = true;
      const w = wake;
      wake = undefined;
      w?.();
    };
    const stop = watchOf(this.app).listen(ping);
    signal.addEventListener('abort', ping, { once: true });
    try {
      for (;;) {
        if (signal.aborted) return;
        const batch = await repos.events.listAfter(cursor, BATCH);
        for (const rec of batch) {
          cursor = rec.id;
          const item = await this.item(rec);
          if (item) yield item;
          if (signal.aborted) return;
        }
        if (batch.length === BATCH) {
          await new Promise((r) => setImmediate(r));
          continue;
        }
        if (pinged) {
          pinged = false;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        pinged = false;
      }
    } finally {
      stop();
      signal.removeEventListener('abort', ping);
    }
  }

  private async item(rec: EventRecord): Promise<StreamEvent | undefined> {
    const isRun = rec.topic.startsWith('run.');
    if (!isRun && !rec.topic.startsWith('step.')) return undefined;
    const data = parseData(rec.data);
    const uuid = rec.run_id || (typeof data.scan_id === 'string' ? data.scan_id : '');
    if (!uuid) return undefined;
    const run = await this.app.repos.runs.getByUuid(uuid);
    if (!run || !inScope(this.scope, run.org_uuid)) return undefined;
    if (isRun) {
      return { id: rec.id, topic: rec.topic, data: await runSummary(this.app, run, STATUS_OF_TOPIC[rec.topic] ?? run.status) };
    }
    const name = typeof data.step_name === 'string' ? data.step_name : rec.name;
    return {
      id: rec.id,
      topic: rec.topic,
      data: {
        run_uuid: uuid,
        step_name: name,
        status: STATUS_OF_TOPIC[rec.topic] ?? rec.topic.slice('step.'.length),
        exit_code: typeof data.exit_code === 'number' ? data.exit_code : null,
        duration_ms: typeof data.duration_ms === 'number' ? data.duration_ms : 0,
      },
    };
  }
}

/** Opens the event stream for a caller (the request's principal), from `after` (`Last-Event-ID`) or from now. */
export function openEventStream(app: AppContext, principal: Principal | undefined, after?: number): EventStreamSession {
  return new EventStreamSession(app, principal, after);
}
