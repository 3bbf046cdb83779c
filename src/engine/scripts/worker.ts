/**
 * A script worker thread: evaluates function-step scripts (and export calls) off the engine's
 * event loop, so a long synchronous function — a 1-million-line import, `exec_cmd`, `sleep` —
 * never stalls the daemon. It opens its own connection to the run's database (WAL lets the
 * engine keep writing) and rolls back any transaction a timed-out or failing script left open.
 */
import { parentPort } from 'node:worker_threads';
import { evaluate, SkipSignal } from '../js-runtime.js';
import { openStore, type Store } from '../../store/index.js';
import type { ScriptRequest, ScriptReply } from './protocol.js';

let store: Store | undefined;
let storePath = '';

function storeFor(path: string | undefined): Store | undefined {
  if (!path) return undefined;
  if (path !== storePath) {
    store?.close();
    store = openStore(path);
    storePath = path;
  }
  return store;
}

function reply(msg: ScriptReply): void {
  parentPort!.postMessage(msg);
}

parentPort!.on('message', (req: ScriptRequest) => {
  let db: Store | undefined;
  try {
    db = storeFor(req.ctx.dbPath);
    const res = evaluate(req.script, req.vars, {
      timeoutMs: req.timeoutMs,
      ctx: { ...req.ctx, store: db, log: (line: string) => reply({ id: req.id, t: 'log', line }) },
    });
    reply({ id: req.id, t: 'done', ok: true, value: res.value });
  } catch (err) {
    // A script cut off by its time limit may leave the import it was running mid-transaction.
    if (db?.db.inTransaction) {
      try {
        db.db.exec('ROLLBACK');
      } catch {
        /* nothing open after all */
      }
    }
    const e = err as { message?: string; code?: string };
    reply({ id: req.id, t: 'done', ok: false, skip: err instanceof SkipSignal, message: String(e?.message ?? err), code: e?.code });
  }
});
