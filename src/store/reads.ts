/**
 * Read programs: one implementation of a multi-query read (a diff, a report) that runs on the
 * synchronous SQLite store (workflow functions, which are synchronous) and on the async store
 * (daemon, PostgreSQL) alike. A program is a generator that yields repository calls; a driver
 * makes each call on its store and sends the result back:
 *
 *   function* counts(ws: string): Reads<number> {
 *     const a = yield* read((r) => r.assets.count(ws));
 *     return a;
 *   }
 *   runReadsSync(counts('x'), store);        // SQLite, synchronous
 *   await runReads(counts('x'), app.repos);   // either engine
 *
 * A `read` callback must return the repository method's result as is (no `.map` on it: on the
 * async store it is a Promise); work on the result after the `yield*`.
 */
import type { AsyncRepos, RepoName } from './async.js';
import type { Store } from './db.js';

/** The repositories a program reads, typed as the synchronous store's. */
export type Repos = Pick<Store, RepoName>;
export type Query = (r: Repos) => unknown;
export type Reads<T> = Generator<Query, T, unknown>;

/** One repository call; its result is what the call returns on the synchronous store. */
export function* read<T>(call: (r: Repos) => T): Reads<T> {
  return (yield call) as T;
}

/** Runs `prog` on the synchronous store. */
export function runReadsSync<T>(prog: Reads<T>, store: Repos): T {
  let step = prog.next();
  while (!step.done) step = prog.next(step.value(store));
  return step.value;
}

/** Runs `prog` on the async store (each call awaited in turn). */
export async function runReads<T>(prog: Reads<T>, repos: AsyncRepos): Promise<T> {
  const asRepos = repos as unknown as Repos;
  let step = prog.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await step.value(asRepos);
    } catch (err) {
      step = prog.throw(err);
      continue;
    }
    step = prog.next(value);
  }
  return step.value;
}
