/**
 * Runs an ad-hoc SELECT (the `db_select` workflow functions) so that it cannot write, whatever its
 * text: on a separate read-only connection to the database file (query_only on top), or — for an
 * in-memory store, which no other connection can open — on the store's connection under
 * `PRAGMA query_only`. The statement must also be a single reader that SQLite itself reports as
 * read-only. At most `maxRows` rows are read.
 */
import Database from 'better-sqlite3';
import { errors } from '../errors.js';
import type { Store } from './db.js';
import type { Row } from './sql.js';

export interface QueryResult {
  columns: string[];
  rows: Row[];
}

function run(db: Database.Database, sql: string, maxRows: number): QueryResult {
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(sql);
  } catch (err) {
    throw errors.validation((err as Error).message);
  }
  if (!stmt.reader || !stmt.readonly) throw errors.validation('only read-only SELECT queries are allowed');
  const columns = stmt.columns().map((c) => c.name);
  const rows: Row[] = [];
  for (const row of stmt.iterate() as IterableIterator<Row>) {
    rows.push(row);
    if (rows.length >= maxRows) break;
  }
  return { columns, rows };
}

/** Runs `sql` read-only against the store's database and returns up to `maxRows` rows. */
export function runReadOnlyQuery(store: Store, sql: string, maxRows = 1000): QueryResult {
  return readOnlyQueryOn(store.db, sql, maxRows);
}

/**
 * Runs `sql` read-only against the database of connection `conn`: on a separate read-only
 * connection to its file, or under `PRAGMA query_only` on `conn` itself when it is in memory.
 */
export function readOnlyQueryOn(conn: Database.Database, sql: string, maxRows = 1000): QueryResult {
  if (conn.memory || conn.name === ':memory:' || conn.name === '') {
    conn.pragma('query_only = ON');
    try {
      return run(conn, sql, maxRows);
    } finally {
      conn.pragma('query_only = OFF');
    }
  }
  const db = new Database(conn.name, { readonly: true, fileMustExist: true });
  try {
    db.pragma('query_only = ON');
    db.pragma('busy_timeout = 5000');
    return run(db, sql, maxRows);
  } finally {
    db.close();
  }
}
