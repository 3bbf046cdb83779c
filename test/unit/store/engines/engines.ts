/**
 * The engines the store tests run on: SQLite (asyncSqlite over an in-memory store) and
 * PostgreSQL (openPgStore on a fresh database per test, cloned from a migrated template made
 * once per file). PostgreSQL absent: its cases are skipped with a visible message locally, and
 * fail under CI=true (pgAvailable).
 */
import { afterAll, afterEach, beforeEach } from 'vitest';
import { asyncSqlite, type AsyncStore } from '../../../../src/store/async.js';
import { openStore } from '../../../../src/store/db.js';
import { openPgStore } from '../../../../src/store/pg/store.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../../helpers/pg.js';

export interface Opened {
  store: AsyncStore;
  /** PostgreSQL only: another store (its own pool, like a second daemon) on the same database; closed by dispose. */
  another?: () => Promise<AsyncStore>;
  /** PostgreSQL only: the database's URL. */
  url?: string;
  dispose: () => Promise<void>;
}

export interface Engine {
  name: 'sqlite' | 'postgresql';
  /** A fresh, migrated, empty store and its disposal. */
  open(): Promise<Opened>;
}

const sqlite: Engine = {
  name: 'sqlite',
  async open() {
    const store = asyncSqlite(openStore(':memory:'));
    return { store, dispose: () => store.close() };
  },
};

let template: Promise<PgDatabase> | undefined;

/** A migrated database used as the TEMPLATE of every test's database (dropped after the file). */
function pgTemplate(): Promise<PgDatabase> {
  template ??= (async () => {
    const db = await createPgDatabase('osm_tmpl');
    const store = await openPgStore(db.url, { max: 1 });
    await store.close();
    return db;
  })();
  return template;
}

const postgresql: Engine = {
  name: 'postgresql',
  async open() {
    const tmpl = await pgTemplate();
    const db = await createPgDatabase('osm_eng', tmpl.name);
    const store = await openPgStore(db.url, { migrate: false });
    const others: AsyncStore[] = [];
    return {
      store,
      url: db.url,
      another: async () => {
        const other = await openPgStore(db.url, { migrate: false });
        others.push(other);
        return other;
      },
      dispose: async () => {
        for (const o of others) await o.close();
        await store.close();
        await db.drop();
      },
    };
  },
};

afterAll(async () => {
  if (template) await (await template).drop();
});

/** The engines to run on: SQLite always, PostgreSQL when its server answers (else a visible skip, or a failure on CI). */
export const ENGINES: Engine[] = (await pgAvailable('store engines')) ? [sqlite, postgresql] : [sqlite];

/** A fresh store per test of the enclosing describe; `s()` gives it. */
export function useStore(engine: Engine): (() => AsyncStore) & { opened: () => Opened } {
  let current: Opened | undefined;
  beforeEach(async () => {
    current = await engine.open();
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  const opened = () => {
    if (!current) throw new Error('no store: useStore must be called inside describe');
    return current;
  };
  return Object.assign(() => opened().store, { opened });
}
