/**
 * Database administration of the API (GET /database/tables, POST /database/tables/{table}/clear):
 * row counts of the reference's ten clearable tables and clearing one of them without leaving the
 * database inconsistent. The reference runs a bare `DELETE FROM <table>`; here each clear also
 * takes care of what depends on the table:
 *
 * - runs: refused while runs are running or queued (the engine and the queue hold those rows);
 *   step results go with their runs (ON DELETE CASCADE), artifacts of the runs are deleted, asset
 *   and vulnerability diff snapshots keep their data but lose the link to the run (run_id 0).
 * - step_results: refused while runs are running or queued (their steps are being written).
 * - workspaces: refused while assets or vulnerabilities exist: the trigger-kept per-workspace
 *   counters live on these rows, and a row re-created by the next insert would count from zero.
 * - assets and vulnerabilities: row triggers keep every counter exact; history rows cascade.
 *
 * Table names are never taken from the request: only the fixed list below reaches SQL.
 */
import { DIFF_SNAPSHOT_TABLES } from './asset-diffs.js';
import type { Db } from './sql.js';

/** The clearable tables, in the reference's order (also the `valid_tables` of its answers). */
export const ADMIN_TABLES = [
  'runs', 'step_results', 'artifacts', 'assets', 'event_logs', 'schedules', 'workspaces', 'vulnerabilities', 'asset_diffs', 'vuln_diffs',
] as const;
export type AdminTable = (typeof ADMIN_TABLES)[number];

export function isAdminTable(name: string): name is AdminTable {
  return (ADMIN_TABLES as readonly string[]).includes(name);
}

/** Counts every clearable table, in order. */
export const ADMIN_COUNT_SQL = ADMIN_TABLES.map((name) => `SELECT COUNT(*) AS n FROM "${name}"`);

/** Why a clear was refused (nothing was deleted). */
export type ClearRefusal =
  | { reason: 'active_runs'; count: number }
  | { reason: 'workspace_data'; assets: number; vulnerabilities: number };

export type ClearResult =
  | { cleared: true; table: AdminTable; rows: number; scheduleIds: string[] }
  | { cleared: false; table: AdminTable; refusal: ClearRefusal };

/** One statement of a clear: a count, a change (its row count is the answer) or a list of ids. */
export type ClearStatement = { kind: 'count' | 'change' | 'ids'; sql: string };

function* stmt(kind: ClearStatement['kind'], sql: string): Generator<ClearStatement, number | string[], number | string[]> {
  return yield { kind, sql };
}

/**
 * The clear of `table` as a program of dialect-neutral statements (see above), run by each engine
 * inside one transaction that keeps writers of the checked tables out (tables to lock:
 * `clearLocks`), so the checks and the delete see the same database. Returns the refusal instead
 * when the clear would break state the engine or the counters rely on.
 */
export function* clearProgram(table: AdminTable): Generator<ClearStatement, ClearResult, number | string[]> {
  if (table === 'runs' || table === 'step_results') {
    const active = (yield* stmt('count', `SELECT COUNT(*) AS n FROM runs WHERE status IN ('running', 'queued')`)) as number;
    if (active > 0) return { cleared: false, table, refusal: { reason: 'active_runs', count: active } };
  }
  if (table === 'workspaces') {
    const assets = (yield* stmt('count', 'SELECT COUNT(*) AS n FROM assets')) as number;
    const vulnerabilities = (yield* stmt('count', 'SELECT COUNT(*) AS n FROM vulnerabilities')) as number;
    if (assets + vulnerabilities > 0) return { cleared: false, table, refusal: { reason: 'workspace_data', assets, vulnerabilities } };
  }
  let scheduleIds: string[] = [];
  if (table === 'runs') {
    yield* stmt('change', 'DELETE FROM artifacts WHERE run_id IN (SELECT id FROM runs)');
    for (const diffs of DIFF_SNAPSHOT_TABLES) yield* stmt('change', `UPDATE ${diffs} SET run_id = 0 WHERE run_id <> 0`);
  }
  if (table === 'schedules') scheduleIds = (yield* stmt('ids', 'SELECT id FROM schedules')) as string[];
  const rows = (yield* stmt('change', `DELETE FROM "${table}"`)) as number;
  return { cleared: true, table, rows, scheduleIds };
}

/** Tables whose writers a clear of `table` keeps out while it checks and deletes. */
export function clearLocks(table: AdminTable): string[] {
  if (table === 'runs' || table === 'step_results') return ['runs', 'step_results'];
  if (table === 'workspaces') return ['workspaces', 'assets', 'vulnerabilities'];
  return [table];
}

/** Row count of each clearable table, in order (one read transaction). */
export function adminTableCounts(db: Db): { name: AdminTable; row_count: number }[] {
  return db.transaction(() => ADMIN_TABLES.map((name, i) => ({ name, row_count: Number((db.prepare(ADMIN_COUNT_SQL[i]!).get() as { n: number }).n) })))();
}

/** Runs the clear of `table` in one IMMEDIATE transaction (SQLite: the write lock keeps every writer out). */
export function clearAdminTable(db: Db, table: AdminTable): ClearResult {
  return db
    .transaction((): ClearResult => {
      const prog = clearProgram(table);
      let step = prog.next();
      while (!step.done) {
        const { kind, sql } = step.value;
        const st = db.prepare(sql);
        step = prog.next(
          kind === 'count' ? Number((st.get() as { n: number }).n) : kind === 'ids' ? (st.all() as { id: string }[]).map((r) => String(r.id)) : st.run().changes,
        );
      }
      return step.value;
    })
    .immediate();
}
