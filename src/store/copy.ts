/**
 * `osm db copy`: moves a whole base between the SQLite store and a PostgreSQL database, in either
 * direction, table by table.
 *
 * Semantics: truncate-and-reload. Each table is emptied and reloaded from the source in one
 * transaction, so the target ends up holding exactly the source's rows (ids included) and running
 * the copy again gives the same result — nothing is duplicated, nothing stale survives. Tables
 * are loaded parents first (runs before step_results, assets before asset_history); the derived
 * tables (workspaces with their counters, `counters`, the asset facet counts) are loaded last, as
 * the source holds them, so the counters are exact without recounting.
 *
 * To PostgreSQL rows go through COPY FROM STDIN (text format) with the table's triggers disabled
 * for the load (the counters they would keep are copied as they are); identity sequences are then
 * moved past the highest id. To SQLite rows are inserted with one prepared statement in an
 * IMMEDIATE transaction (the SQLite triggers fire, and the derived tables loaded last overwrite
 * what they counted).
 *
 * Verification: each table's checksum is computed on both sides the same way — every row
 * rendered as a line of PostgreSQL's COPY text format (NULL as \N, tab-separated, the same
 * backslash escapes), hashed with SHA-256, and the first 128 bits of the hashes summed (mod
 * 2^128), so it does not depend on row order; the target's is read back after the load.
 */
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { errors } from '../errors.js';
import type { Db } from './sql.js';
import type { Store } from './db.js';
import { sqliteSchemaInfo, type TableInfo } from './schema-info.js';
import { schemaVersion } from './migrate.js';
import { applyPgMigrations, pgSchemaVersion } from './pg/migrate.js';
import { checkout, type PgPool } from './pg/pool.js';
import { copyLine, parseCopyLine } from './pg/copy-text.js';

export { copyLine, copyValue, parseCopyLine } from './pg/copy-text.js';

/** Loaded first, in this order (their children follow). */
const PARENTS = ['orgs', 'runs', 'assets', 'vulnerabilities'];
/** Derived from other tables by triggers: loaded last, as the source holds them. */
const DERIVED = ['workspaces', 'counters', 'asset_status_counts', 'asset_type_counts'];
/** Never copied: each side records its own migrations and identity (store_meta); leases belong to the processes of each side. */
const SKIP = new Set(['schema_migrations', 'sqlite_sequence', 'leases', 'store_meta']);

export interface TableCopyResult {
  table: string;
  source_rows: number;
  target_rows: number;
  source_checksum: string;
  target_checksum: string;
  ok: boolean;
  ms: number;
}

export interface CopyProgress {
  table: string;
  /** 1-based position of the table and the number of tables. */
  index: number;
  tables: number;
  rows: number;
  total: number;
  done: boolean;
}

export interface CopyOptions {
  onProgress?: (p: CopyProgress) => void;
  /** Rows between progress reports (default 10,000). */
  progressEvery?: number;
}

export interface CopyResult {
  direction: 'sqlite-to-postgresql' | 'postgresql-to-sqlite';
  schema_version: number;
  tables: TableCopyResult[];
  ok: boolean;
}

/** The tables to copy, in load order. */
export function copyOrder(tables: readonly string[]): string[] {
  const list = tables.filter((t) => !SKIP.has(t));
  const first = PARENTS.filter((t) => list.includes(t));
  const last = DERIVED.filter((t) => list.includes(t));
  const middle = list.filter((t) => !first.includes(t) && !last.includes(t)).sort();
  return [...first, ...middle, ...last];
}

// ---- the checksum (the COPY text format itself: ./pg/copy-text.ts) ----

const MASK = (1n << 128n) - 1n;

/** An order-independent checksum of lines: the sum of their SHA-256 prefixes. */
export class TableChecksum {
  rows = 0;
  private sum = 0n;
  add(line: string): void {
    this.rows++;
    this.sum = (this.sum + BigInt(`0x${createHash('sha256').update(line).digest('hex').slice(0, 32)}`)) & MASK;
  }
  get hex(): string {
    return this.sum.toString(16).padStart(32, '0');
  }
}

// ---- SQLite side ----

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

function sqliteRows(db: Db, table: TableInfo): IterableIterator<unknown[]> {
  return db.prepare(`SELECT ${table.columns.map((c) => quote(c.name)).join(', ')} FROM ${quote(table.name)}`).raw(true).iterate() as IterableIterator<unknown[]>;
}

function sqliteChecksum(db: Db, table: TableInfo): TableChecksum {
  const sum = new TableChecksum();
  for (const row of sqliteRows(db, table)) sum.add(copyLine(row));
  return sum;
}

function sqliteCount(db: Db, table: string): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM ${quote(table)}`).get() as { n: number }).n;
}

// ---- PostgreSQL side ----

async function pgChecksum(pool: PgPool, table: TableInfo): Promise<TableChecksum> {
  const { client, release } = await checkout(pool);
  try {
    const sum = new TableChecksum();
    const stream = client.query(copyTo(`COPY (SELECT ${table.columns.map((c) => quote(c.name)).join(', ')} FROM ${quote(table.name)}) TO STDOUT`));
    for await (const line of copyLines(stream)) sum.add(line);
    return sum;
  } finally {
    release();
  }
}

/** The lines of a COPY TO stream (rows end with \n; newlines inside values are escaped). */
async function* copyLines(stream: AsyncIterable<Buffer>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + chunk.toString('utf8');
    const parts = text.split('\n');
    rest = parts.pop()!;
    for (const p of parts) yield p;
  }
  if (rest) yield rest;
}

async function pgCount(pool: PgPool, table: string): Promise<number> {
  return Number((await pool.query<{ n: number }>(`SELECT COUNT(*)::bigint AS n FROM ${quote(table)}`)).rows[0]!.n);
}

/** Moves an identity column's sequence past the highest id, so new rows do not collide with copied ones. */
async function resetIdentity(client: { query: PgPool['query'] }, table: TableInfo): Promise<void> {
  if (table.primaryKey.length !== 1) return;
  const pk = table.primaryKey[0]!;
  if (table.columns.find((c) => c.name === pk)?.family !== 'int') return;
  await client.query(
    `SELECT setval(seq, COALESCE((SELECT MAX(${quote(pk)}) FROM ${quote(table.name)}), 1), (SELECT MAX(${quote(pk)}) FROM ${quote(table.name)}) IS NOT NULL)
     FROM pg_get_serial_sequence($1, $2) AS seq WHERE seq IS NOT NULL`,
    [quote(table.name), pk],
  );
}

function checkSameSchema(sqliteVersion: number, pgVersion: number): void {
  if (sqliteVersion !== pgVersion) {
    throw errors.unavailable(`schema versions differ (SQLite ${sqliteVersion}, PostgreSQL ${pgVersion}): run osm db migrate on both engines with this osm first`);
  }
}

/**
 * Copies every table of the SQLite store `db` into the PostgreSQL database of `pool`, migrating
 * it first; replaces what the target tables held.
 */
export async function copySqliteToPg(store: Store, pool: PgPool, opts: CopyOptions = {}): Promise<CopyResult> {
  const db = store.db;
  await applyPgMigrations(pool);
  const version = schemaVersion(db);
  checkSameSchema(version, await pgSchemaVersion(pool));
  const schema = new Map(sqliteSchemaInfo(db).map((t) => [t.name, t]));
  const order = copyOrder([...schema.keys()]);
  const every = opts.progressEvery ?? 10_000;
  const results: TableCopyResult[] = [];
  for (const [i, name] of order.entries()) {
    const table = schema.get(name)!;
    const started = Date.now();
    const total = sqliteCount(db, name);
    const report = (rows: number, done: boolean) => opts.onProgress?.({ table: name, index: i + 1, tables: order.length, rows, total, done });
    report(0, false);
    const source = new TableChecksum();
    const { client, release } = await checkout(pool);
    try {
      await client.query('BEGIN');
      await client.query(`TRUNCATE ${quote(name)} CASCADE`);
      await client.query(`ALTER TABLE ${quote(name)} DISABLE TRIGGER USER`);
      const rows = sqliteRows(db, table);
      // Lines batched into ~256 KB chunks; the pipeline honours the COPY stream's backpressure.
      const chunks = Readable.from((function* () {
        let buf = '';
        for (const row of rows) {
          const line = copyLine(row);
          source.add(line);
          buf += `${line}\n`;
          if (source.rows % every === 0) report(source.rows, false);
          if (buf.length >= 262_144) {
            yield buf;
            buf = '';
          }
        }
        if (buf) yield buf;
      })());
      await pipeline(chunks, client.query(copyFrom(`COPY ${quote(name)} (${table.columns.map((c) => quote(c.name)).join(', ')}) FROM STDIN`)));
      await client.query(`ALTER TABLE ${quote(name)} ENABLE TRIGGER USER`);
      await resetIdentity(client, table);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw errors.internal(`copying table ${name} to PostgreSQL failed: ${(err as Error).message}`);
    } finally {
      release();
    }
    const target = await pgChecksum(pool, table);
    report(source.rows, true);
    results.push(result(name, source, target, started));
  }
  return { direction: 'sqlite-to-postgresql', schema_version: version, tables: results, ok: results.every((r) => r.ok) };
}

/**
 * Copies every table of the PostgreSQL database of `pool` into the SQLite store `db`; replaces
 * what the SQLite tables held. The PostgreSQL schema must be at the SQLite store's version.
 */
export async function copyPgToSqlite(pool: PgPool, store: Store, opts: CopyOptions = {}): Promise<CopyResult> {
  const db = store.db;
  const version = schemaVersion(db);
  const pgVersion = await pgSchemaVersion(pool);
  if (pgVersion === 0) throw errors.validation('the PostgreSQL database has no osm schema (nothing to copy from)');
  checkSameSchema(version, pgVersion);
  const schema = new Map(sqliteSchemaInfo(db).map((t) => [t.name, t]));
  const order = copyOrder([...schema.keys()]);
  const every = opts.progressEvery ?? 10_000;
  const results: TableCopyResult[] = [];
  for (const [i, name] of order.entries()) {
    const table = schema.get(name)!;
    const started = Date.now();
    const total = await pgCount(pool, name);
    const report = (rows: number, done: boolean) => opts.onProgress?.({ table: name, index: i + 1, tables: order.length, rows, total, done });
    report(0, false);
    const numeric = table.columns.map((c) => c.family === 'int' || c.family === 'real');
    const insert = db.prepare(`INSERT INTO ${quote(name)} (${table.columns.map((c) => quote(c.name)).join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`);
    const source = new TableChecksum();
    const { client, release } = await checkout(pool);
    db.exec('BEGIN IMMEDIATE');
    try {
      db.prepare(`DELETE FROM ${quote(name)}`).run();
      const stream = client.query(copyTo(`COPY (SELECT ${table.columns.map((c) => quote(c.name)).join(', ')} FROM ${quote(name)}) TO STDOUT`));
      for await (const line of copyLines(stream)) {
        source.add(line);
        insert.run(parseCopyLine(line, numeric));
        if (source.rows % every === 0) report(source.rows, false);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw errors.internal(`copying table ${name} from PostgreSQL failed: ${(err as Error).message}`);
    } finally {
      release();
    }
    const target = sqliteChecksum(db, table);
    report(source.rows, true);
    results.push(result(name, source, target, started));
  }
  return { direction: 'postgresql-to-sqlite', schema_version: version, tables: results, ok: results.every((r) => r.ok) };
}

function result(table: string, source: TableChecksum, target: TableChecksum, started: number): TableCopyResult {
  return {
    table,
    source_rows: source.rows,
    target_rows: target.rows,
    source_checksum: source.hex,
    target_checksum: target.hex,
    ok: source.rows === target.rows && source.hex === target.hex,
    ms: Date.now() - started,
  };
}

