/**
 * Raw SQL against a test server's database on either engine, for what no repository method does
 * (backdating a timestamp, corrupting a row, counting rows): SQLite runs it on the synchronous
 * store's connection, PostgreSQL on a short-lived `pg` client to the test database. Placeholders
 * are `?` on both engines (rewritten to `$1, $2, …` for PostgreSQL; no `?` inside string literals).
 */
import pg from 'pg';
import type { AppContext, SqliteAppContext } from '../../src/services/context.js';

export interface EngineSqlTarget {
  app: AppContext;
  /** Set by makeTestServer on PostgreSQL. */
  databaseUrl?: string;
}

function pgText(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

async function onPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

function sqliteDb(t: EngineSqlTarget) {
  const store = (t.app as SqliteAppContext).store;
  if (!store) throw new Error('engine-sql: no SQLite store and no PostgreSQL databaseUrl on this test server');
  return store.db;
}

/** Runs a statement (UPDATE, DELETE, INSERT); resolves to the number of rows it changed. */
export async function sqlRun(t: EngineSqlTarget, sql: string, ...params: unknown[]): Promise<number> {
  if (t.databaseUrl) return onPg(t.databaseUrl, async (c) => (await c.query(pgText(sql), params)).rowCount ?? 0);
  return sqliteDb(t).prepare(sql).run(...params).changes;
}

/** The rows of a query. */
export async function sqlAll<T = Record<string, unknown>>(t: EngineSqlTarget, sql: string, ...params: unknown[]): Promise<T[]> {
  if (t.databaseUrl) return onPg(t.databaseUrl, async (c) => (await c.query(pgText(sql), params)).rows as T[]);
  return sqliteDb(t).prepare(sql).all(...params) as T[];
}

/** The first row of a query (undefined when none). */
export async function sqlGet<T = Record<string, unknown>>(t: EngineSqlTarget, sql: string, ...params: unknown[]): Promise<T | undefined> {
  return (await sqlAll<T>(t, sql, ...params))[0];
}

/** `SELECT COUNT(*) AS n FROM …` as a number on both engines (PostgreSQL's bigint arrives as text). */
export async function sqlCount(t: EngineSqlTarget, sql: string, ...params: unknown[]): Promise<number> {
  const row = await sqlGet<{ n: number | string }>(t, sql, ...params);
  return Number(row?.n ?? 0);
}
