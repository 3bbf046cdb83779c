/**
 * A run's combined step output, read back or followed live (GET /runs/{id}/logs, `osm logs`).
 *
 * Everything comes from the run's log folder — the step log files and the output journal that
 * numbers every line and step change with one sequence (engine/live/journal.ts) — so a backfill and
 * the live part are one read, in one order, and a client that resumes after sequence N gets
 * exactly what follows N. While the run executes in this process its output pings the follower the
 * moment a line is written; otherwise (a run executed by `osm run` in another process) the folder
 * is looked at every half second. A follower reads at its client's pace: the engine never waits
 * for it, and nothing is dropped. Lines are masked like every other place a run's data is shown.
 */
import { realpath } from 'node:fs/promises';
import { join, isAbsolute, resolve } from 'node:path';
import type { Principal } from '../auth/principal.js';
import { scopeOf } from '../auth/scope.js';
import type { RunRecord, RunStatus } from '../store/index.js';
import { TERMINAL_RUN_STATUSES } from '../store/index.js';
import { RunLogReader, type LogEvent } from '../engine/live/log-reader.js';
import { liveRunOutput } from '../engine/live/run-output.js';
import { isInside, isSafeName } from '../util/fs-safe.js';
import { maskSecrets } from '../workflow/tpl-redact.js';
import { findRun, secretsOf } from './run-control.js';
import { errors } from '../errors.js';
import type { AppContext } from './context.js';

/** One item of a log stream. `id` is the run sequence number (the SSE `id:`, the resume cursor). */
export type RunLogItem =
  | { type: 'line'; id: number; step: string; substep?: string; stream: 'stdout' | 'stderr'; line: string; ts: string }
  | { type: 'step'; id: number; step: string; status: string; exit_code: number | null; duration_ms: number; ts: string }
  | { type: 'end'; status: 'completed' | 'failed' | 'cancelled' };

export interface RunLogOptions {
  /** Only this step's lines and changes (or a parallel-steps child's lines, by the child's name). */
  step?: string;
  /** Only the last N lines of what exists (then, when following, everything new). */
  tail?: number;
  /** Resume after this sequence number (`Last-Event-ID`); wins over `tail`. */
  after?: number;
  /** Keep going until the run ends (SSE, `osm logs -f`); false stops at what exists now. */
  follow: boolean;
  /** How often a run executed elsewhere is looked at (default 500 ms). */
  pollMs?: number;
}

const TERMINAL = new Set<string>(TERMINAL_RUN_STATUSES as readonly string[]);

/**
 * A follower reads at most this often: what arrived meanwhile comes in one read and one write, so
 * twenty followers of a chatty foreach cost twenty reads per interval, not one per line each.
 */
const FOLLOW_INTERVAL_MS = 40;

/**
 * The log folder of a run, or undefined when it has none here: the folder of the run's output when
 * it executes in this process, else `<workspace folder>/logs/<run_uuid>` — the workspace folder as
 * the artifacts download finds it, and the log folder must resolve inside it.
 */
export async function runLogDir(app: AppContext, run: RunRecord): Promise<string | undefined> {
  const live = liveRunOutput(run.run_uuid);
  if (live?.dir) return live.dir;
  if (!isSafeName(run.run_uuid) || !run.workspace || !isSafeName(run.workspace)) return undefined;
  const row = await app.repos.workspaces.get(run.workspace);
  const root = row?.local_path && isAbsolute(row.local_path) ? row.local_path : join(resolve(app.settings().paths.workspaces), run.workspace);
  try {
    const base = await realpath(root);
    const dir = await realpath(join(base, 'logs', run.run_uuid));
    return isInside(base, dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** An open log stream of one run: `items()` yields until the end (or the signal); then `close()`. */
export class RunLogSession {
  private reader?: RunLogReader;
  private readonly secrets: string[];
  private wake?: () => void;
  private woken = false;
  private unwatch?: () => void;

  constructor(
    private readonly app: AppContext,
    readonly run: RunRecord,
    private readonly opts: RunLogOptions,
    /** Who reads (the request's principal; undefined for the local CLI). */
    readonly principal?: Principal,
  ) {
    this.secrets = secretsOf(app, run);
  }

  /** Every item from the cursor on, one at a time (see `batches`). */
  async *items(signal?: AbortSignal): AsyncGenerator<RunLogItem> {
    for await (const batch of this.batches(signal)) yield* batch;
  }

  /**
   * Every item from the cursor on, in batches (what one read found); with `follow`, waits for
   * more until the run is terminal. Ends with an `end` item when the run is terminal. `signal`
   * stops it (client gone, shutdown).
   */
  async *batches(signal?: AbortSignal): AsyncGenerator<RunLogItem[]> {
    const onAbort = () => this.poke();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let after = this.opts.after ?? -1;
      let ended = false;
      for (;;) {
        if (signal?.aborted) return;
        const reader = await this.readerFor();
        if (reader && after < 0) after = this.opts.tail !== undefined ? await reader.tailStart(this.opts.tail, this.opts.step) : 0;
        let more = false;
        if (reader) {
          const got = await reader.read(after);
          more = got.more;
          const batch: RunLogItem[] = [];
          for (const e of got.events) {
            after = e.seq;
            const item = this.item(e);
            if (item) batch.push(item);
          }
          if (batch.length) yield batch;
          if (signal?.aborted) return;
        }
        if (more) {
          // A large backlog: let the rest of the process (requests, the engine) have a turn.
          await new Promise((r) => setImmediate(r));
          continue;
        }
        if (ended) {
          const status = await this.status();
          yield [{ type: 'end', status: (TERMINAL.has(status) ? status : 'failed') as 'completed' | 'failed' | 'cancelled' }];
          return;
        }
        // Caught up. A terminal run gets one more read (lines written just before its status) then ends.
        if (TERMINAL.has(await this.status())) {
          ended = true;
          continue;
        }
        if (!this.opts.follow) return;
        await this.waitForMore();
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await this.close();
    }
  }

  /** Stops watching and closes the files. */
  async close(): Promise<void> {
    this.unwatch?.();
    this.unwatch = undefined;
    this.poke();
    const r = this.reader;
    this.reader = undefined;
    await r?.close();
  }

  private async status(): Promise<RunStatus> {
    return ((await this.app.repos.runs.get(this.run.id))?.status ?? this.run.status) as RunStatus;
  }

  /** The reader of the run's folder once it exists (a queued run has none yet); watches a live run. */
  private async readerFor(): Promise<RunLogReader | undefined> {
    if (!this.unwatch) {
      const live = liveRunOutput(this.run.run_uuid);
      if (live && !live.isClosed) this.unwatch = live.watch(() => this.poke());
    }
    if (this.reader) return this.reader;
    const dir = await runLogDir(this.app, (await this.app.repos.runs.get(this.run.id)) ?? this.run);
    if (dir) this.reader = new RunLogReader(dir);
    return this.reader;
  }

  private poke(): void {
    this.woken = true;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async waitForMore(): Promise<void> {
    await new Promise((r) => setTimeout(r, FOLLOW_INTERVAL_MS));
    if (this.woken) {
      this.woken = false;
      return;
    }
    // Pings arrive for a run of this process; the timer covers the rest (and a run starting here later).
    const pollMs = this.opts.pollMs ?? (this.unwatch ? 2000 : 500);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, pollMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.woken = false;
  }

  private item(e: LogEvent): RunLogItem | undefined {
    if (this.opts.step !== undefined && e.step !== this.opts.step && !(e.kind === 'line' && e.part === this.opts.step)) return undefined;
    const ts = new Date(e.ts).toISOString();
    if (e.kind === 'line') return { type: 'line', id: e.seq, step: e.step, ...(e.part ? { substep: e.part } : {}), stream: e.stream, line: maskSecrets(e.line, this.secrets), ts };
    return { type: 'step', id: e.seq, step: e.step, status: e.status, exit_code: e.exit_code, duration_ms: e.duration_ms, ts };
  }
}

/**
 * Opens a run's log stream for a caller: the run is found as GET /runs/{id} finds it, in the
 * request principal's orgs (404 when it does not exist or is another org's); `undefined` for the
 * local CLI, which reads its own base folder.
 */
export async function openRunLogs(app: AppContext, principal: Principal | undefined, idOrUuid: string, opts: RunLogOptions): Promise<RunLogSession> {
  const run = await findRun(app, idOrUuid, scopeOf(principal));
  // An unknown step is an error (404), not an empty answer. A step of a run still going may start
  // later: a follower waits for it; what exists now (no follow) or a finished run must name it.
  if (opts.step !== undefined && (!opts.follow || TERMINAL.has(run.status)) && !(await stepKnown(app, run, opts.step))) {
    throw errors.notFound(`step not found: ${opts.step}`);
  }
  return new RunLogSession(app, run, opts, principal);
}

/**
 * True when the run has a step of that name: a step row, or a name its output journal holds (hook
 * steps write lines but have no step rows; parallel-steps children are named on their lines).
 */
async function stepKnown(app: AppContext, run: RunRecord, step: string): Promise<boolean> {
  if ((await app.repos.steps.listByRun(run.id)).some((s) => s.step_name === step)) return true;
  const dir = await runLogDir(app, run);
  if (!dir) return false;
  const reader = new RunLogReader(dir);
  try {
    return await reader.hasStep(step);
  } finally {
    await reader.close();
  }
}
