import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ScriptReply, ScriptRequest, WorkerFnContext } from './protocol.js';

export interface ScriptCall {
  script: string;
  vars: Record<string, unknown>;
  ctx: WorkerFnContext;
  timeoutMs: number;
  /** 'value' (default) or 'condition' (JS truthiness, variables bound lazily). */
  mode?: 'value' | 'condition';
  /** Receives lines printed by the script (log_info …) as they are printed. */
  onLog?: (line: string) => void;
  /** Aborting kills the process group running the script. */
  signal?: AbortSignal;
}

/** Why a call ended without a value. */
export class ScriptCallError extends Error {
  constructor(
    message: string,
    readonly kind: 'error' | 'skip' | 'aborted' | 'timeout' | 'unavailable',
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ScriptCallError';
  }
}

/** The evaluator entry: next to this file when running from dist/, else the build of it. */
function workerFile(): string | undefined {
  const candidates = [new URL('./worker.js', import.meta.url), new URL('../../../dist/engine/scripts/worker.js', import.meta.url)];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

export interface PoolOptions {
  /** Most evaluator processes alive at once; further calls wait for one. */
  size: number;
  /**
   * Keep a process for the next call (workflow scripts: cheap conditions) or use each one once
   * (API evaluations: nothing an evaluation starts — a background command — outlives it).
   */
  reuse: boolean;
  /** Idle processes started ahead of demand (default 0). */
  spare?: number;
}

interface Slot {
  child: ChildProcess;
  busy: boolean;
  ready: Promise<void>;
  /** Ends an evaluator left idle (each holds tens of MB). */
  idleTimer?: NodeJS.Timeout;
}

/** How long past its own time limit a script may take to report before its group is killed. */
const KILL_GRACE_MS = 2000;
/** How long a reusable evaluator may stay idle before it is ended. */
const IDLE_MS = 60_000;

/** Every pool's live processes, killed when this process exits (they lead their own groups). */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** SIGKILLs the process group an evaluator leads: the evaluator and every command it started. */
function killGroup(child: ChildProcess): void {
  live.delete(child);
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of [...live]) killGroup(c);
  });
}

function setRef(child: ChildProcess, on: boolean): void {
  if (on) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

/**
 * Evaluator processes for scripts. Each runs one script at a time, as the leader of its own
 * process group (detached), so a script that outlives its time limit (plus a grace), or whose run
 * is cancelled, is ended together with every command it started by one SIGKILL to the group —
 * the only way to stop synchronous code and the children of a blocking `spawnSync`.
 */
export class ScriptPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private nextId = 1;

  constructor(
    private readonly file: string,
    private readonly opts: PoolOptions,
  ) {}

  private spawn(): Slot {
    installExitHook();
    let child: ChildProcess;
    try {
      child = fork(this.file, [], {
        detached: true,
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
        execArgv: [],
      });
    } catch (err) {
      throw new ScriptCallError(`the script evaluator could not start: ${(err as Error).message}`, 'unavailable');
    }
    live.add(child);
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: ScriptReply) => {
        if (m.t !== 'ready') return;
        cleanup();
        resolve();
      };
      const onGone = (err?: Error) => {
        cleanup();
        reject(new ScriptCallError(`the script evaluator could not start${err instanceof Error ? `: ${err.message}` : ''}`, 'unavailable'));
      };
      const cleanup = () => {
        child.off('message', onMessage);
        child.off('exit', onGone);
        child.off('error', onGone);
      };
      child.on('message', onMessage);
      child.once('exit', onGone);
      child.once('error', onGone);
    });
    // A start failure is reported to the caller that waits for this slot; never unhandled.
    ready.catch(() => undefined);
    const slot: Slot = { child, busy: false, ready };
    child.on('error', () => this.drop(slot));
    child.on('exit', () => this.drop(slot));
    this.slots.push(slot);
    return slot;
  }

  private async acquire(): Promise<Slot> {
    for (;;) {
      const free = this.slots.find((s) => !s.busy);
      const slot = free ?? (this.slots.length < this.opts.size ? this.spawn() : undefined);
      if (slot) {
        slot.busy = true;
        clearTimeout(slot.idleTimer);
        setRef(slot.child, true);
        try {
          await slot.ready;
        } catch (err) {
          this.kill(slot);
          throw err;
        }
        this.topUp();
        return slot;
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  /** Starts idle processes up to `spare`, within `size`. */
  private topUp(): void {
    const want = this.opts.spare ?? 0;
    try {
      while (this.slots.filter((s) => !s.busy).length < want && this.slots.length < this.opts.size) {
        setRef(this.spawn().child, false);
      }
    } catch {
      // A spare is an optimisation; the next call reports a start failure itself.
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    setRef(slot.child, false);
    if (this.opts.reuse) {
      slot.idleTimer = setTimeout(() => {
        if (!slot.busy) this.kill(slot);
      }, IDLE_MS);
      slot.idleTimer.unref();
    }
    this.waiting.shift()?.();
  }

  private drop(slot: Slot): void {
    live.delete(slot.child);
    const i = this.slots.indexOf(slot);
    if (i === -1) return;
    this.slots.splice(i, 1);
    this.waiting.shift()?.();
  }

  private kill(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    this.drop(slot);
    killGroup(slot.child);
  }

  /** Evaluates a script in an evaluator process; resolves with its value or rejects with ScriptCallError. */
  async run(call: ScriptCall): Promise<unknown> {
    if (call.signal?.aborted) throw new ScriptCallError('run cancelled', 'aborted');
    const slot = await this.acquire();
    // Cancelled while waiting for a slot.
    if (call.signal?.aborted) {
      this.release(slot);
      throw new ScriptCallError('run cancelled', 'aborted');
    }
    const id = this.nextId++;
    const child = slot.child;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void, kill: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        call.signal?.removeEventListener('abort', onAbort);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (kill || !this.opts.reuse) {
          this.kill(slot);
          this.topUp();
        } else this.release(slot);
        fn();
      };
      const onMessage = (msg: ScriptReply) => {
        if (msg.t === 'ready' || msg.id !== id) return;
        if (msg.t === 'log') return call.onLog?.(msg.line);
        if (msg.ok) finish(() => resolve(msg.value), false);
        else finish(() => reject(new ScriptCallError(msg.message, msg.skip ? 'skip' : msg.timedOut ? 'timeout' : 'error', msg.code)), msg.timedOut);
      };
      const onExit = () => finish(() => reject(new ScriptCallError('the script evaluator exited unexpectedly', 'error')), true);
      const onAbort = () => finish(() => reject(new ScriptCallError('run cancelled', 'aborted')), true);
      // The evaluator's own limits stop JS, sleep() and commands; this stops anything that ignores them.
      const watchdog = setTimeout(() => finish(() => reject(new ScriptCallError(`script timed out after ${call.timeoutMs}ms`, 'timeout')), true), call.timeoutMs + KILL_GRACE_MS);
      watchdog.unref();
      child.on('message', onMessage);
      child.once('exit', onExit);
      call.signal?.addEventListener('abort', onAbort, { once: true });
      const req: ScriptRequest = { id, script: call.script, vars: call.vars, ctx: call.ctx, timeoutMs: call.timeoutMs, mode: call.mode ?? 'value' };
      try {
        child.send(req, (err) => {
          if (err) finish(() => reject(new ScriptCallError(`cannot pass the script to its evaluator: ${err.message}`, 'error')), true);
        });
      } catch (err) {
        // Variables that cannot be cloned (should not happen: they are plain data).
        finish(() => reject(new ScriptCallError(`cannot pass variables to the script evaluator: ${(err as Error).message}`, 'error')), true);
      }
    });
  }

  /** Kills every evaluator (and what it started). */
  async close(): Promise<void> {
    for (const s of this.slots.splice(0)) killGroup(s.child);
  }
}

let shared: ScriptPool | null | undefined;
let quick: ScriptPool | null | undefined;
let api: ScriptPool | null | undefined;

function inline(): boolean {
  return process.env.OSM_INLINE_SCRIPTS === '1';
}

const engineSize = () => Math.min(4, Math.max(2, cpus().length));

/** The engine's pool for scripts that may run for hours (function steps, exports), or null when no built evaluator exists (then scripts run inline). */
export function scriptPool(): ScriptPool | null {
  if (shared === undefined) {
    const file = inline() ? undefined : workerFile();
    shared = file ? new ScriptPool(file, { size: engineSize(), reuse: true }) : null;
  }
  return shared;
}

/**
 * The pool of short scripts (conditions, foreach pre-processing, action functions, trigger
 * filters and inputs; 10 s limits): separate from scriptPool so hour-long imports holding every
 * slot never keep a condition waiting.
 */
export function quickScriptPool(): ScriptPool | null {
  if (quick === undefined) {
    const file = inline() ? undefined : workerFile();
    quick = file ? new ScriptPool(file, { size: engineSize(), reuse: true }) : null;
  }
  return quick;
}

/** Hard cap of API evaluator processes; the live limit is `server.max_concurrent_evals`, enforced by the caller. */
const API_POOL_CAP = 64;

/**
 * The pool of `/functions/eval` and `/functions/execute`: separate from the engine's, so API
 * callers never starve runs of evaluators (or the reverse); one fresh process per evaluation.
 */
export function apiScriptPool(): ScriptPool | null {
  if (api === undefined) {
    const file = inline() ? undefined : workerFile();
    api = file ? new ScriptPool(file, { size: API_POOL_CAP, reuse: false, spare: 1 }) : null;
  }
  return api;
}
