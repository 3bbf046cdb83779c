/**
 * The thread behind `openSyncBridge` (./sync-bridge.ts): opens the AsyncStore of its locator and
 * answers the caller's requests one at a time, in order. After posting each answer it bumps the
 * shared counter and wakes the caller, which is blocked in Atomics.wait.
 *
 * A 'begin' enters `store.tx(async () => …)`; the requests that follow are consumed inside that
 * async context — so they join the transaction — until 'commit' (the callback resolves) or
 * 'rollback' (it rejects).
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { OsmError } from '../errors.js';
import { asyncSqlite, type AsyncStore } from './async.js';
import { openStore } from './db.js';
import type { DbLocator } from './locator.js';
import { openPgStore } from './pg/store.js';
import type { BridgeError, BridgeReply, BridgeRequest } from './sync-bridge.js';

const { locator, signal, port } = workerData as { locator: DbLocator; signal: Int32Array; port: MessagePort };

function post(reply: BridgeReply): void {
  try {
    port.postMessage(reply);
  } catch (err) {
    // A value that cannot be cloned: answer with the reason instead.
    port.postMessage({ id: reply.id, ok: false, error: errorOf(err) } satisfies BridgeReply);
  }
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function errorOf(err: unknown): BridgeError {
  if (err instanceof OsmError) return { name: err.name, message: err.message, code: err.code, status: err.status, ...(err.extra ? { extra: err.extra } : {}), osm: true };
  const e = err as { name?: string; message?: string; code?: unknown };
  return { name: String(e?.name ?? 'Error'), message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}), osm: false };
}

const ok = (id: number, value: unknown) => post({ id, ok: true, value });
const fail = (id: number, err: unknown) => post({ id, ok: false, error: errorOf(err) });

const inbox: BridgeRequest[] = [];
let wake: (() => void) | null = null;
port.on('message', (req: BridgeRequest) => {
  inbox.push(req);
  wake?.();
  wake = null;
});

async function next(): Promise<BridgeRequest> {
  while (inbox.length === 0) await new Promise<void>((r) => (wake = r));
  return inbox.shift()!;
}

async function call(store: AsyncStore, req: Extract<BridgeRequest, { op: 'call' }>): Promise<void> {
  try {
    const repo = (store as unknown as Record<string, Record<string, unknown>>)[req.repo];
    const fn = repo?.[req.method];
    if (typeof fn !== 'function') throw new Error(`${req.repo}.${req.method} is not a store method`);
    ok(req.id, await (fn as (...a: unknown[]) => Promise<unknown>).apply(repo, req.args));
  } catch (err) {
    fail(req.id, err);
  }
}

class Rollback extends Error {}

/**
 * One transaction: from 'begin' (answered once BEGIN ran) to 'commit' or 'rollback' (answered
 * once it is done). A 'close' inside it rolls back; its id is returned for the caller to close.
 */
async function transaction(store: AsyncStore, beginId: number): Promise<number | undefined> {
  let begun = false;
  let endId = beginId;
  let closing = false;
  try {
    await store.tx(async () => {
      begun = true;
      ok(beginId, true);
      for (;;) {
        const req = await next();
        if (req.op === 'call') await call(store, req);
        else if (req.op === 'begin') fail(req.id, new Error('a transaction is already open'));
        else if (req.op === 'commit') {
          endId = req.id;
          return;
        } else {
          endId = req.id;
          closing = req.op === 'close';
          throw new Rollback();
        }
      }
    });
    ok(endId, true);
  } catch (err) {
    if (err instanceof Rollback) {
      if (closing) return endId;
      ok(endId, true);
    } else if (!begun) fail(beginId, err);
    else fail(endId, err);
  }
  return undefined;
}

async function main(): Promise<void> {
  let store: AsyncStore;
  try {
    store = locator.engine === 'postgresql' ? await openPgStore(locator.url, { max: 2 }) : asyncSqlite(openStore(locator.path));
  } catch (err) {
    fail(0, err);
    port.close();
    return;
  }
  ok(0, { engine: store.engine });
  for (;;) {
    let req = await next();
    if (req.op === 'begin') {
      const closeId = await transaction(store, req.id);
      if (closeId === undefined) continue;
      // 'close' arrived inside the transaction (rolled back): close now, answering that request.
      req = { id: closeId, op: 'close' };
    }
    if (req.op === 'call') await call(store, req);
    else if (req.op === 'commit') fail(req.id, new Error('no transaction is open'));
    else if (req.op === 'rollback') ok(req.id, false);
    else if (req.op === 'close') {
      await store.close().catch(() => undefined);
      ok(req.id, true);
      port.close();
      return;
    }
  }
}

/** A failure outside any request: the caller learns it at its next wait (id -1), and the thread ends. */
function fatal(err: unknown): void {
  try {
    fail(-1, err);
  } finally {
    Atomics.store(signal, 1, 1);
    Atomics.notify(signal, 0);
    process.exit(1);
  }
}
process.on('uncaughtException', fatal);
main().catch(fatal);
