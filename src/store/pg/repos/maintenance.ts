/**
 * Engine-level reads of the PostgreSQL store (the MaintenanceRepo of src/store/maintenance.ts):
 * liveness, an integrity check, tables with row counts and columns, schema version. PostgreSQL
 * has no `PRAGMA quick_check`; `quickCheck` reports instead what PostgreSQL can tell cheaply: an
 * index left invalid (a failed concurrent build) in osm's schema, else 'ok'. Table names reaching
 * SQL are checked against the schema's own table list first.
 */
import { errors } from '../../../errors.js';
import type { Async } from '../../async.js';
import type { MaintenanceRepo } from '../../maintenance.js';
import type { PgDb } from '../db.js';
import { ADMIN_COUNT_SQL, ADMIN_TABLES, clearLocks, clearProgram, type AdminTable } from '../../admin.js';
import { pgMigrations } from '../migrations/index.js';
import { pgLatestVersion } from '../migrate.js';

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
