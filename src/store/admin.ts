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
import type { Store } from './db.js';

/** The clearable tables, in the reference's order (also the `valid_tables` of its answers). */
export const ADMIN_TABLES = [
  'runs', 'step_results', 'artifacts', 'assets', 'event_logs', 'schedules', 'workspaces', 'vulnerabilities', 'asset_diffs', 'vuln_diffs',
] as const;
export type AdminTable = (typeof ADMIN_TABLES)[number];

export function isAdminTable(name: string): name is AdminTable {
  return (ADMIN_TABLES as readonly string[]).includes(name);
}

/** Row count of each clearable table, in order. */
export function adminTableCounts(store: Store): { name: AdminTable; row_count: number }[] {
  return store.db.transaction(() =>
    ADMIN_TABLES.map((name) => {
      const row = store.db.prepare(`SELECT COUNT(*) AS n FROM "${name}"`).get() as { n: number };
      return { name, row_count: Number(row.n) };
    }),
  )();
}

/** Why a clear was refused (nothing was deleted). */
export type ClearRefusal =
  | { reason: 'active_runs'; count: number }
  | { reason: 'workspace_data'; assets: number; vulnerabilities: number };

export type ClearResult =
  | { cleared: true; table: AdminTable; rows: number; scheduleIds: string[] }
  | { cleared: false; table: AdminTable; refusal: ClearRefusal };

const count = (store: Store, sql: string): number => Number((store.db.prepare(sql).get() as { n: number }).n);

/**
 * Deletes every row of `table` (and what depends on it, see above) in one IMMEDIATE transaction,
 * so the checks and the delete see the same database. Returns the refusal instead when the clear
 * would break state the engine or the counters rely on.
 */
export function clearAdminTable(store: Store, table: AdminTable): ClearResult {
  return store.tx((): ClearResult => {
    const db = store.db;
    if (table === 'runs' || table === 'step_results') {
      const active = count(store, `SELECT COUNT(*) AS n FROM runs WHERE status IN ('running', 'queued')`);
      if (active > 0) return { cleared: false, table, refusal: { reason: 'active_runs', count: active } };
    }
    if (table === 'workspaces') {
      const assets = count(store, 'SELECT COUNT(*) AS n FROM assets');
      const vulnerabilities = count(store, 'SELECT COUNT(*) AS n FROM vulnerabilities');
      if (assets + vulnerabilities > 0) return { cleared: false, table, refusal: { reason: 'workspace_data', assets, vulnerabilities } };
    }
    let scheduleIds: string[] = [];
    if (table === 'runs') {
      db.prepare('DELETE FROM artifacts WHERE run_id IN (SELECT id FROM runs)').run();
      for (const diffs of DIFF_SNAPSHOT_TABLES) db.prepare(`UPDATE ${diffs} SET run_id = 0 WHERE run_id <> 0`).run();
    }
    if (table === 'schedules') {
      scheduleIds = (db.prepare('SELECT id FROM schedules').all() as { id: string }[]).map((r) => r.id);
    }
    const rows = db.prepare(`DELETE FROM "${table}"`).run().changes;
    return { cleared: true, table, rows, scheduleIds };
  });
}
