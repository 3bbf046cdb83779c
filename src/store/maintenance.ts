/**
 * Engine-level reads of the SQLite store for maintenance commands and health checks (`osm db
 * list`, `osm db status`, `osm health`, /health/ready): liveness, integrity, tables and their
 * row counts and columns, schema version. Table names reaching SQL are checked against the
 * database's own table list first.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { errors, OsmError } from '../errors.js';
import type { AsyncStore } from './async.js';
import { readOnlyQueryOn, type QueryResult } from './readonly-query.js';
import { latestVersion, pendingMigrations, schemaVersion } from './migrate.js';
import { migrations } from './migrations/index.js';
import type { Db } from './sql.js';
import { adminTableCounts, clearAdminTable, type AdminTable, type ClearResult } from './admin.js';

export interface MaintenanceRepo {
  /**
   * Runs one ad-hoc SELECT (`db_select`) so that it cannot write, whatever its text, and returns
   * at most `maxRows` rows. A statement that is not a single read-only query, or fails, throws a
   * validation error (400).
   */
  readOnlyQuery(sql: string, maxRows: number): QueryResult;
  /** Throws when the database does not answer a trivial query. */
  ping(): void;
  /** `PRAGMA quick_check`: 'ok' or the first problem found. */
  quickCheck(): string;
  /** User tables, sorted. */
  tables(): string[];
  /** Row count of a table (which must exist). */
  count(table: string): number;
  /** Columns (name and declared type) of a table (which must exist). */
  columns(table: string): { name: string; type: string }[];
  schemaVersion(): number;
  /** Migrations not applied yet (none for an open store: opening migrates). */
  pending(): { version: number; name: string }[];
  latestVersion(): number;
  /** This database's random identity (migration 019): a worker recognises its master's database by it. */
  storeId(): string;
  /** Row count of each table the API may clear (GET /database/tables), in one read. */
  adminCounts(): { name: AdminTable; row_count: number }[];
  /** Clears one of those tables with what depends on it, or says why not (src/store/admin.ts). */
  clearTable(table: AdminTable): ClearResult;
}

export function createMaintenanceRepo(db: Db): MaintenanceRepo {
  const tables = () =>
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
  const known = (table: string) => {
    if (!tables().includes(table)) throw errors.validation(`unknown table ${JSON.stringify(table)}`);
    return `"${table}"`;
  };
  return {
    readOnlyQuery: (sql, maxRows) => {
      try {
        return readOnlyQueryOn(db, sql, maxRows);
      } catch (err) {
        if (err instanceof OsmError) throw err;
        throw errors.validation((err as Error).message);
      }
    },
    ping: () => {
      db.prepare('SELECT 1').get();
    },
    quickCheck: () => String((db.prepare('PRAGMA quick_check').get() as { quick_check: string }).quick_check),
    tables,
    count: (table) => (db.prepare(`SELECT COUNT(*) AS n FROM ${known(table)}`).get() as { n: number }).n,
    columns: (table) => db.prepare(`SELECT name, type FROM pragma_table_info(?) ORDER BY cid`).all(known(table).slice(1, -1)) as { name: string; type: string }[],
    schemaVersion: () => schemaVersion(db),
    pending: () => pendingMigrations(db).map((m) => ({ version: m.version, name: m.name })),
    latestVersion: () => latestVersion(),
    storeId: () => String((db.prepare(`SELECT value FROM store_meta WHERE key = 'store_id'`).get() as { value?: string } | undefined)?.value ?? ''),
    adminCounts: () => adminTableCounts(db),
    clearTable: (table) => clearAdminTable(db, table),
  };
}

/** The schema state of a SQLite database file, read without migrating or creating it. */
export function inspectSqliteFile(path: string): { exists: boolean; version: number; pending: { version: number; name: string }[] } {
  if (!existsSync(path)) return { exists: false, version: 0, pending: migrations.map((m) => ({ version: m.version, name: m.name })) };
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const version = schemaVersion(db);
    return { exists: true, version, pending: pendingMigrations(db).map((m) => ({ version: m.version, name: m.name })) };
  } finally {
    db.close();
  }
}

/**
 * Rows of one table for `osm db list -t`: chosen columns (checked against the table), an optional
 * SQL condition and a text search over the text columns, newest first (by `id` when the table
 * has one, else SQLite's rowid), read through `readOnlyQuery` so the condition cannot write.
 * Either engine (the async store).
 */
export async function listTableRows(
  repos: Pick<AsyncStore, 'maintenance' | 'engine'>,
  opts: { table: string; columns?: string[]; where?: string; search?: string; limit: number },
): Promise<QueryResult> {
  const info = await repos.maintenance.columns(opts.table);
  const cols = opts.columns && opts.columns.length > 0 ? opts.columns : info.map((c) => c.name);
  for (const c of cols) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(c) || !info.some((i) => i.name === c)) throw errors.validation(`unknown column ${JSON.stringify(c)} of ${opts.table}`);
  const conds: string[] = [];
  if (opts.where) conds.push(`(${opts.where})`);
  if (opts.search) {
    const literal = `'${opts.search.replace(/'/g, "''")}'`;
    const text = info.filter((c) => /char|text|clob/i.test(c.type) || c.type === '').map((c) => `"${c.name}" LIKE '%' || ${literal} || '%'`);
    if (text.length) conds.push(`(${text.join(' OR ')})`);
  }
  const order = info.some((c) => c.name === 'id') ? ' ORDER BY "id" DESC' : repos.engine === 'sqlite' ? ' ORDER BY rowid DESC' : '';
  const sql = `SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${opts.table}"${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}${order} LIMIT ${opts.limit}`;
  try {
    return await repos.maintenance.readOnlyQuery(sql, opts.limit);
  } catch (err) {
    throw errors.validation(`query failed: ${(err as Error).message}`);
  }
}
