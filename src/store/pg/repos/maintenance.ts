/**
 * Engine-level reads of the PostgreSQL store (the MaintenanceRepo of src/store/maintenance.ts):
 * liveness, an integrity check, tables with row counts and columns, schema version. PostgreSQL
 * has no `PRAGMA quick_check`; `quickCheck` reports instead what PostgreSQL can tell cheaply: an
 * index left invalid (a failed concurrent build) in osm's schema, else 'ok'. Table names reaching
 * SQL are checked against the schema's own table list first.
 */
import { errors, OsmError } from '../../../errors.js';
import type { Async } from '../../async.js';
import type { MaintenanceRepo } from '../../maintenance.js';
import type { PgDb } from '../db.js';
import { ADMIN_COUNT_SQL, ADMIN_TABLES, clearLocks, clearProgram, type AdminTable } from '../../admin.js';
import { pgMigrations } from '../migrations/index.js';
import { pgLatestVersion } from '../migrate.js';

/** The statement_timeout of an ad-hoc read-only query (db_select). */
const READ_ONLY_QUERY_TIMEOUT_MS = 30_000;

/**
 * An ad-hoc SELECT that cannot write: a READ ONLY transaction of its own with a statement
 * timeout. The text is wrapped as a subquery, so it must be one SELECT (or WITH … SELECT, VALUES):
 * a second statement, or a data-modifying WITH, is a syntax error; and the LIMIT bounds what the
 * server sends. Inside a transaction already (whose mode cannot change) it is refused.
 */
async function readOnly(db: PgDb, sql: string, maxRows: number): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  if (db.inTx()) throw errors.validation('a read-only query cannot run inside a write transaction');
  const text = sql.trim().replace(/;\s*$/, '');
  if (text === '') throw errors.validation('empty query');
  // The query layer reads `?` as a parameter placeholder (the repositories' style).
  if (text.includes('?')) throw errors.validation('the ? character is not supported in read-only queries on PostgreSQL');
  const limit = Math.max(1, Math.floor(maxRows));
  try {
    return await db.tx(async () => {
      await db.query('SET TRANSACTION READ ONLY');
      await db.query(`SET LOCAL statement_timeout = ${READ_ONLY_QUERY_TIMEOUT_MS}`);
      const rows = await db.all(`SELECT * FROM (${text}\n) AS osm_q LIMIT ${limit}`);
      // PgDb gives rows, not the result's field list: the columns are the first row's keys, and
      // with no rows those of the one all-NULL row an outer join with a single row makes.
      const first = rows[0] ?? (await db.one(`SELECT osm_q.* FROM (SELECT 1) AS osm_one LEFT JOIN (${text}\n) AS osm_q ON false`));
      return { columns: first ? Object.keys(first) : [], rows };
    });
  } catch (err) {
    if (err instanceof OsmError) throw err;
    throw errors.validation((err as Error).message);
  }
}

export function createPgMaintenanceRepo(db: PgDb): Async<MaintenanceRepo> {
  const tables = async () =>
    (await db.all(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name COLLATE "C"`)).map(
      (r) => String(r.name),
    );
  const known = async (table: string) => {
    if (!(await tables()).includes(table)) throw errors.validation(`unknown table ${JSON.stringify(table)}`);
    return `"${table}"`;
  };
  const applied = async () => {
    if ((await db.all(`SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`)).length === 0) return new Set<number>();
    return new Set((await db.all('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
  };
  return {
    async readOnlyQuery(sql, maxRows) {
      return readOnly(db, sql, maxRows);
    },
    async ping() {
      await db.one('SELECT 1');
    },
    async quickCheck() {
      const bad = await db.all(
        `SELECT c.relname AS name FROM pg_index ix JOIN pg_class c ON c.oid = ix.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND NOT ix.indisvalid ORDER BY c.relname`,
      );
      return bad.length === 0 ? 'ok' : `invalid index: ${bad.map((r) => String(r.name)).join(', ')}`;
    },
    tables,
    async count(table) {
      return Number((await db.one(`SELECT COUNT(*) AS n FROM ${await known(table)}`))?.n ?? 0);
    },
    async columns(table) {
      await known(table);
      const rows = await db.all(
        `SELECT column_name AS name, UPPER(data_type) AS type FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
        [table],
      );
      return rows.map((r) => ({ name: String(r.name), type: String(r.type) }));
    },
    async schemaVersion() {
      const done = await applied();
      return done.size === 0 ? 0 : Math.max(...done);
    },
    async pending() {
      const done = await applied();
      return pgMigrations.filter((m) => !done.has(m.version)).map((m) => ({ version: m.version, name: m.name }));
    },
    async latestVersion() {
      return pgLatestVersion();
    },
    async storeId() {
      return String((await db.one(`SELECT value FROM store_meta WHERE key = 'store_id'`))?.value ?? '');
    },
    adminCounts() {
      return db.tx(
        async () => {
          const out: { name: AdminTable; row_count: number }[] = [];
          for (const [i, name] of ADMIN_TABLES.entries()) out.push({ name, row_count: Number((await db.one(ADMIN_COUNT_SQL[i]!))?.n ?? 0) });
          return out;
        },
        { readOnlySnapshot: true },
      );
    },
    clearTable(table) {
      return db.tx(async () => {
        // Writers of the checked tables wait until the clear commits (readers go on).
        await db.query(`LOCK TABLE ${clearLocks(table).map((t) => `"${t}"`).join(', ')} IN SHARE ROW EXCLUSIVE MODE`);
        const prog = clearProgram(table);
        let step = prog.next();
        while (!step.done) {
          const { kind, sql } = step.value;
          const r = await db.query(sql);
          step = prog.next(kind === 'count' ? Number(r.rows[0]?.n ?? 0) : kind === 'ids' ? r.rows.map((row) => String(row.id)) : r.rowCount);
        }
        return step.value;
      });
    },
  };
}

