/**
 * The async store: the repositories of `Store` with every method returning a Promise of the same
 * result, so one interface serves SQLite (synchronous underneath, adapted by `asyncSqlite`) and
 * PostgreSQL (`openPgStore` in ./pg/store.ts). The types are derived from the synchronous
 * repository interfaces, so the two cannot drift apart.
 *
 * Transactions: `tx(fn)` runs `fn` (async) in one transaction. Repository calls made while `fn`
 * runs — in its async context — join it; on SQLite, calls from other async contexts wait until it
 * ends (the connection is shared), on PostgreSQL they use other pool connections.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Store } from './db.js';

/** Every method of `T` returning a Promise of its result. */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** The repositories a store carries (everything of `Store` except the connection and its controls). */
export const REPO_NAMES = [
  'runs',
  'steps',
  'artifacts',
  'assets',
  'assetDiffs',
  'vulnDiffs',
  'vulns',
  'events',
  'schedules',
  'workflows',
  'workspaces',
  'stats',
  'webhookRuns',
  'orgs',
  'access',
  'maintenance',
  'assetStats',
  'attempts',
  'leases',
] as const satisfies readonly (keyof Store)[];

export type RepoName = (typeof REPO_NAMES)[number];

export type AsyncRepos = { [K in RepoName]: Async<Store[K]> };

export interface AsyncStore extends AsyncRepos {
  readonly engine: 'sqlite' | 'postgresql';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it rejects. Inside
   * a transaction already (same async context), `fn` joins it.
   */
  tx<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Opens up to `connections` database connections ahead of need (PostgreSQL's pool; SQLite has
   * one connection, already open). A daemon calls it before its queue starts, so the first runs
   * do not open connections under their first writes.
   */
  warm?(connections: number): Promise<void>;
  close(): Promise<void>;
}

/** Wraps every method of `repo` with `wrap` (generic: no method is listed by hand). */
export function wrapRepo<T extends object>(repo: T, wrap: (call: () => unknown) => Promise<unknown>): Async<T> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(repo)) {
    const fn = (repo as Record<string, unknown>)[key];
    if (typeof fn === 'function') out[key] = (...args: unknown[]) => wrap(() => (fn as (...a: unknown[]) => unknown).apply(repo, args));
  }
  return out as Async<T>;
}

/**
 * The SQLite store behind the async interface. Calls run synchronously on the connection (in a
 * microtask, so a throw becomes a rejection). While a `tx` is open its statements own the shared
 * connection: calls from outside its async context queue until it ends, so they never land inside
 * it by accident.
 */
export function asyncSqlite(store: Store): AsyncStore {
  const inTx = new AsyncLocalStorage<true>();
  let open: Promise<void> | null = null;

  const call = async (fn: () => unknown): Promise<unknown> => {
    if (!inTx.getStore()) while (open) await open;
    return fn();
  };

  const repos = Object.fromEntries(REPO_NAMES.map((name) => [name, wrapRepo(store[name], call)])) as AsyncRepos;

  return {
    ...repos,
    engine: 'sqlite',
    async tx<T>(fn: () => Promise<T>): Promise<T> {
      if (inTx.getStore()) return fn();
      while (open) await open;
      let release!: () => void;
      open = new Promise<void>((resolve) => (release = resolve));
      try {
        store.db.exec('BEGIN IMMEDIATE');
        try {
          const result = await inTx.run(true, fn);
          store.db.exec('COMMIT');
          return result;
        } catch (err) {
          if (store.db.inTransaction) store.db.exec('ROLLBACK');
          throw err;
        }
      } finally {
        open = null;
        release();
      }
    },
    async close() {
      while (open) await open;
      store.close();
    },
  };
}
