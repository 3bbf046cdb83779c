import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ScriptReply, ScriptRequest, WorkerFnContext } from './protocol.js';

export interface ScriptCall {
  script: string;
  vars: Record<string, unknown>;
  ctx: WorkerFnContext;
  timeoutMs: number;
  /** Receives lines printed by the script (log_info …) as they are printed. */
  onLog?: (line: string) => void;
  /** Aborting terminates the worker running the script. */
  signal?: AbortSignal;
}

/** Why a call ended without a value. */
export class ScriptCallError extends Error {
  constructor(
    message: string,
    readonly kind: 'error' | 'skip' | 'aborted' | 'timeout',
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ScriptCallError';
  }
}

/** The worker entry: next to this file when running from dist/, else the build of it. */
function workerFile(): string | undefined {
  const candidates = [new URL('./worker.js', import.meta.url), new URL('../../../dist/engine/scripts/worker.js', import.meta.url)];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

/**
 * Worker threads for scripts that may run long. Each worker runs one script at a time; a script
 * that outlives its time limit (plus a grace), or whose run is cancelled, has its worker
 * terminated and replaced — the only way to stop synchronous code.
 */
export class ScriptPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private nextId = 1;

  constructor(
    private readonly file: string,
    private readonly size = Math.min(4, Math.max(2, cpus().length)),
  ) {}

  private async acquire(): Promise<Slot> {
    for (;;) {
      const free = this.slots.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        free.worker.ref();
        return free;
      }
      if (this.slots.length < this.size) {
        const slot: Slot = { worker: new Worker(this.file), busy: true };
        slot.worker.on('error', () => this.drop(slot));
        slot.worker.on('exit', () => this.drop(slot));
        this.slots.push(slot);
        return slot;
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    slot.worker.unref();
    this.waiting.shift()?.();
  }

  private drop(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i !== -1) this.slots.splice(i, 1);
    this.waiting.shift()?.();
  }

  /** Evaluates a script in a worker; resolves with its value or rejects with ScriptCallError. */
  async run(call: ScriptCall): Promise<unknown> {
    if (call.signal?.aborted) throw new ScriptCallError('run cancelled', 'aborted');
    const slot = await this.acquire();
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void, kill = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        call.signal?.removeEventListener('abort', onAbort);
        slot.worker.off('message', onMessage);
        slot.worker.off('exit', onExit);
        if (kill) {
          this.drop(slot);
          void slot.worker.terminate();
        } else this.release(slot);
        fn();
      };
      const onMessage = (msg: ScriptReply) => {
        if (msg.id !== id) return;
        if (msg.t === 'log') return call.onLog?.(msg.line);
        if (msg.ok) finish(() => resolve(msg.value));
        else finish(() => reject(new ScriptCallError(msg.message, msg.skip ? 'skip' : 'error', msg.code)));
      };
      const onExit = () => finish(() => reject(new ScriptCallError('the script worker exited unexpectedly', 'error')), true);
      const onAbort = () => finish(() => reject(new ScriptCallError('run cancelled', 'aborted')), true);
      // The worker's own vm time limit stops JS; this stops synchronous host work that ignores it.
      const watchdog = setTimeout(() => finish(() => reject(new ScriptCallError(`script timed out after ${call.timeoutMs}ms`, 'timeout')), true), call.timeoutMs + 5000);
      watchdog.unref();
      slot.worker.on('message', onMessage);
      slot.worker.once('exit', onExit);
      call.signal?.addEventListener('abort', onAbort, { once: true });
      const req: ScriptRequest = { id, script: call.script, vars: call.vars, ctx: call.ctx, timeoutMs: call.timeoutMs };
      try {
        slot.worker.postMessage(req);
      } catch (err) {
        // Variables that cannot be cloned (should not happen: they are plain data).
        finish(() => reject(new ScriptCallError(`cannot pass variables to the script worker: ${(err as Error).message}`, 'error')));
      }
    });
  }

  /** Terminates every worker. */
  async close(): Promise<void> {
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}

let shared: ScriptPool | null | undefined;

/** The process-wide pool, or null when no built worker file exists (then scripts run inline). */
export function scriptPool(): ScriptPool | null {
  if (shared === undefined) {
    const file = process.env.OSM_INLINE_SCRIPTS === '1' ? undefined : workerFile();
    shared = file ? new ScriptPool(file) : null;
  }
  return shared;
}
