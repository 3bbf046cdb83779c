/**
 * A script evaluator process: evaluates scripts (function steps, exports, conditions, API
 * evaluations) off the daemon's event loop, so a long synchronous function — a 1-million-line
 * import, `exec_cmd`, `sleep`, `while (true) {}` — never stalls it. The pool starts it as the
 * leader of its own process group: killing the group at the time limit also ends every command
 * the script started. It opens its own connection to the database (WAL lets the daemon keep
 * writing) and rolls back any transaction a timed-out or failing script left open.
 */
import { Worker } from 'node:worker_threads';
import { evaluate, evaluateCondition, SkipSignal } from '../js-runtime.js';
import { openStore, type Store } from '../../store/index.js';
import type { DbLocator } from '../../store/locator.js';
import { openSyncBridge, type SyncStore } from '../../store/sync-bridge.js';
import type { ScriptRequest, ScriptReply, WorkerFnContext } from './protocol.js';

/**
 * The store of the last request, kept for the next one with the same locator: SQLite opened
 * directly (the synchronous fast path), PostgreSQL through the sync bridge (a thread holding a
 * small pool).
 */
let store: Store | SyncStore | undefined;
let storeKey = '';

function locatorOf(ctx: WorkerFnContext): DbLocator | undefined {
  if (ctx.db) return ctx.db;
  return ctx.dbPath ? { engine: 'sqlite', path: ctx.dbPath } : undefined;
}

function storeFor(ctx: WorkerFnContext): Store | SyncStore | undefined {
  const locator = locatorOf(ctx);
  if (!locator) return undefined;
  const key = locator.engine === 'sqlite' ? `sqlite:${locator.path}` : `postgresql:${locator.url}`;
  if (key !== storeKey) {
    store?.close();
    store = undefined;
    storeKey = '';
    store = locator.engine === 'sqlite' ? openStore(locator.path) : openSyncBridge(locator);
    storeKey = key;
  }
  return store;
}

function reply(msg: ScriptReply): void {
  process.send?.(msg);
}

function handle(req: ScriptRequest): void {
  const started = Date.now();
  let db: Store | SyncStore | undefined;
  try {
    db = storeFor(req.ctx);
    // Database calls through the bridge wait at most for the script's remaining budget.
    const bridge = db && 'setDeadline' in db ? db : undefined;
    bridge?.setDeadline(started + req.timeoutMs);
    const { db: _locator, ...ctx } = req.ctx;
    const opts = {
      // What is left of the budget once the store is open (opening a bridge takes a moment).
      timeoutMs: Math.max(1, started + req.timeoutMs - Date.now()),
      ctx: { ...ctx, store: db, log: (line: string) => reply({ id: req.id, t: 'log', line }) },
    };
    const value = req.mode === 'condition' ? evaluateCondition(req.script, req.vars, { ...opts, lazyBind: true }) : evaluate(req.script, req.vars, opts).value;
    // A database call that ran out of the budget was answered as the function's failure value;
    // the script still ran out of time (and the bridge thread may still be busy with that call).
    const late = bridge?.timedOut();
    if (late) throw new Error(late);
    reply({ id: req.id, t: 'done', ok: true, value });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    const message = String(e?.message ?? err);
    // A time-out may leave commands behind (exec_cmd's shell is killed, not its children): the
    // pool then kills this whole process group.
    const timedOut = Date.now() - started >= req.timeoutMs || /\bscript timed out\b/.test(message);
    const done: ScriptReply = { id: req.id, t: 'done', ok: false, skip: err instanceof SkipSignal, message, code: e?.code, timedOut };
    // A script cut off by its time limit may leave the import it was running mid-transaction.
    // Timed out, this process is killed anyway (a lost connection rolls back on the server):
    // answer first, so a rollback stuck behind a blocked database call delays nothing.
    if (timedOut) reply(done);
    db?.rollbackOpen();
    if (!timedOut) reply(done);
  }
}

/**
 * The daemon may die (kill -9) while this process is deep in synchronous work, where no event
 * handler runs: a thread of its own watches the parent and, once this process is orphaned, kills
 * its whole group, so no script keeps writing for a daemon that is gone.
 */
const LIFELINE = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid === workerData.ppid) return;
  try { process.kill(-workerData.pid, 'SIGKILL'); } catch { process.kill(workerData.pid, 'SIGKILL'); }
}, 250);
`;
new Worker(LIFELINE, { eval: true, workerData: { ppid: process.ppid, pid: process.pid } }).unref();

process.on('message', (req: ScriptRequest) => handle(req));
// The daemon closed the channel: nothing will ever ask again.
process.on('disconnect', () => process.exit(0));
reply({ t: 'ready' });
