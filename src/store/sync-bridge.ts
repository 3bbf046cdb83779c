/**
 * The synchronous `Store` interface over an `AsyncStore` (PostgreSQL, or SQLite for tests) that
 * lives in a worker thread: the workflow functions are synchronous (so is the JS runtime), and
 * script evaluators on a PostgreSQL base reach it through this bridge.
 *
 * The technique is synckit's: every call is posted to the thread on a MessagePort, then the
 * caller blocks in `Atomics.wait` on a SharedArrayBuffer counter that the thread bumps after
 * posting the answer, and takes the answer with `receiveMessageOnPort` (no event loop turn).
 * Repositories are forwarded generically (REPO_NAMES × whatever methods the thread's store has).
 *
 * Transactions: `tx(fn)` sends 'begin', the thread enters `asyncStore.tx(async () => …)` and keeps
 * consuming calls in that async context (so they join the transaction) until 'commit' or
 * 'rollback'. A nested `tx` joins the open one.
 *
 * Every call waits at most until the deadline (`setDeadline`, the script's budget in evaluators),
 * else `defaultTimeoutMs`; on time-out it throws an error whose message says "script timed out"
 * (the evaluator then reports a time-out and the pool kills its process group).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { OsmError } from '../errors.js';
import { REPO_NAMES, type RepoName } from './async.js';
import type { Store } from './db.js';
import type { DbLocator } from './locator.js';

/** What crosses from the caller to the bridge thread. */
export type BridgeRequest =
  | { id: number; op: 'call'; repo: RepoName; method: string; args: unknown[] }
  | { id: number; op: 'begin' | 'commit' | 'rollback' | 'close' };

/** An error as it crosses back (OsmError fields kept). */
export interface BridgeError {
  name: string;
  message: string;
  code?: string;
  status?: number;
  extra?: Record<string, unknown>;
  osm: boolean;
}

export type BridgeReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: BridgeError };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The synchronous store without the SQLite connection: what the workflow functions use. */
export type SyncStore = Omit<Store, 'db' | 'path' | 'close'> & {
  readonly engine: DbLocator['engine'];
  /** The SQLite path, or '' on PostgreSQL. */
  readonly path: string;
  /** Calls after this epoch-ms instant time out at once; undefined: each call waits `defaultTimeoutMs`. */
  setDeadline(at: number | undefined): void;
  /**
   * The message of the first call that timed out since the last `setDeadline` (the function
   * library turns failures into answers, so the evaluator asks here whether the script ran out
   * of time in a database call), else undefined.
   */
  timedOut(): string | undefined;
  /** Ends the thread and its store (pool). */
  close(): void;
};

export interface SyncBridgeOptions {
  /** Longest wait of one call when no deadline is set (default 5 minutes). */
  defaultTimeoutMs?: number;
  /** Longest wait for the thread to open its store (default 30 s). */
  openTimeoutMs?: number;
}

/** The thread's entry: next to this file when running from dist/, else the build of it. */
function threadFile(): string {
  const candidates = [new URL('./sync-bridge-thread.js', import.meta.url), new URL('../../dist/store/sync-bridge-thread.js', import.meta.url)];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  throw new Error('the store bridge thread is not built (npm run build)');
}

/** The error of a reply, re-created as an OsmError when it was one. */
function revive(e: BridgeError): Error {
  if (e.osm && e.code && e.status !== undefined) {
    const err = new OsmError(e.code, e.status, e.message, e.extra);
    if (e.name && e.name !== 'OsmError') err.name = e.name;
    return err;
  }
  const err = new Error(e.message) as Error & { code?: string };
  err.name = e.name || 'Error';
  if (e.code !== undefined) err.code = e.code;
  return err;
}

/** A time-out of one call: the script's budget ran out (or the database did not answer in time). */
function timedOut(what: string, ms: number): Error {
  return new Error(`script timed out: the database did not answer ${what} within ${ms}ms`);
}

/** Opens the store at `locator` in a worker thread and returns its synchronous face. */
export function openSyncBridge(locator: DbLocator, opts: SyncBridgeOptions = {}): SyncStore {
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 300_000;
  // [0]: bumped after every answer the thread posts; [1]: set when the thread failed for good.
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const { port1: mine, port2: theirs } = new MessageChannel();
  const worker = new Worker(threadFile(), { workerData: { locator, signal, port: theirs }, transferList: [theirs as unknown as MessagePort] });
  // The caller's event loop must not be kept alive by the bridge; `close` ends it.
  worker.unref();
  mine.unref();
  let threadError: Error | undefined;
  worker.on('error', (err) => (threadError = err));
  worker.on('exit', (code) => (threadError ??= new Error(`the store bridge thread exited (code ${code})`)));

  let nextId = 1;
  let deadline: number | undefined;
  /** Depth of `tx` calls on this side (nested ones join). */
  let depth = 0;
  /** Whether the thread may hold an open transaction (true from 'begin' until a confirmed commit or rollback). */
  let open = false;
  let closed = false;
  let lateCall: string | undefined;

  /** Blocks until the reply `id` arrives (or `waitMs` passes). */
  const await_ = (id: number, what: string, waitMs: number): unknown => {
    const until = Date.now() + waitMs;
    for (;;) {
      const seen = Atomics.load(signal, 0);
      for (let m = receiveMessageOnPort(mine); m; m = receiveMessageOnPort(mine)) {
        const reply = m.message as BridgeReply;
        // The thread's last word before it ended (its events cannot reach a blocked caller).
        if (reply.id === -1 && !reply.ok) threadError ??= revive(reply.error);
        // An answer to a call that timed out earlier: nobody waits for it any more.
        if (reply.id !== id) continue;
        if (reply.ok) return reply.value;
        throw revive(reply.error);
      }
      if (threadError) throw threadError;
      if (Atomics.load(signal, 1) === 1) throw new Error('the store bridge thread failed');
      const left = until - Date.now();
      if (left <= 0) {
        const err = timedOut(what, waitMs);
        lateCall ??= err.message;
        throw err;
      }
      Atomics.wait(signal, 0, seen, Math.min(left, 1000));
    }
  };

  /** Sends one request and blocks until its reply (or the time limit). */
  const send = (req: DistributiveOmit<BridgeRequest, 'id'>, what: string, limitMs?: number): unknown => {
    if (closed) throw new Error('the store bridge is closed');
    const id = nextId++;
    const wait = limitMs ?? (deadline !== undefined ? Math.max(1, deadline - Date.now()) : defaultTimeoutMs);
    mine.postMessage({ ...req, id });
    return await_(id, what, wait);
  };

  // The thread answers id 0 once its store is open (or could not be opened).
  let engine: DbLocator['engine'];
  try {
    engine = (await_(0, 'opening the store', opts.openTimeoutMs ?? 30_000) as { engine: DbLocator['engine'] }).engine;
  } catch (err) {
    closed = true;
    mine.close();
    void worker.terminate();
    throw err;
  }

  const repos = Object.fromEntries(
    REPO_NAMES.map((repo) => [
      repo,
      new Proxy(
        {},
        {
          // 'then' stays undefined so a repository is never mistaken for a promise.
          get: (_t, method) => (typeof method === 'string' && method !== 'then' ? (...args: unknown[]) => send({ op: 'call', repo, method, args }, `${repo}.${method}`) : undefined),
        },
      ),
    ]),
  ) as unknown as Pick<Store, RepoName>;

  const rollback = (limitMs?: number): boolean => {
    if (!open || closed) return false;
    send({ op: 'rollback' }, 'ROLLBACK', limitMs);
    open = false;
    return true;
  };

  const store: SyncStore = {
    ...repos,
    engine,
    path: locator.engine === 'sqlite' ? locator.path : '',
    setDeadline: (at) => {
      deadline = at;
      lateCall = undefined;
    },
    timedOut: () => lateCall,
    tx<T>(fn: () => T): T {
      if (depth > 0) return fn();
      open = true;
      try {
        send({ op: 'begin' }, 'BEGIN');
      } catch (err) {
        // Answered with an error: no transaction began. A time-out leaves `open` for rollbackOpen.
        if (!/script timed out/.test((err as Error).message)) open = false;
        throw err;
      }
      depth = 1;
      let result: T;
      try {
        result = fn();
      } catch (err) {
        depth = 0;
        try {
          rollback();
        } catch {
          // the transaction's own failure is what the caller needs to see
        }
        throw err;
      }
      depth = 0;
      try {
        send({ op: 'commit' }, 'COMMIT');
      } catch (err) {
        // A failed COMMIT ended the transaction (rolled back); a time-out leaves it to rollbackOpen.
        if (!/script timed out/.test((err as Error).message)) open = false;
        throw err;
      }
      open = false;
      return result;
    },
    inTransaction: () => depth > 0 || open,
    rollbackOpen: () => {
      depth = 0;
      try {
        // Also after the script's deadline: the transaction must not stay open. Past the deadline
        // the thread may still be stuck in the call that timed out: a short wait, then the
        // evaluator is killed for its time-out and the server rolls back the lost connection.
        return rollback(deadline !== undefined && deadline <= Date.now() ? 1000 : 10_000);
      } catch {
        return false;
      }
    },
    close: () => {
      if (closed) return;
      try {
        send({ op: 'close' }, 'closing the store', 10_000);
      } catch {
        // closing anyway
      }
      closed = true;
      mine.close();
      void worker.terminate();
    },
  };
  return store;
}
