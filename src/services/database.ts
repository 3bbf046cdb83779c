/**
 * Database administration over the API: row counts of the clearable tables and clearing one
 * (force required). What a clear also does to keep the database consistent, and when it is
 * refused, is described in src/store/admin.ts. A successful clear is recorded in event_logs
 * (topic `database.table_cleared`, processed) and dropped schedules leave the live scheduler.
 */
import { OsmError } from '../errors.js';
import { ADMIN_TABLES, isAdminTable, type AdminTable } from '../store/admin.js';
import { liveScheduler } from '../scheduler/live.js';
import type { AppContext } from './context.js';

const validTables = () => [...ADMIN_TABLES];

/** Errors of the clear route; the first two carry `valid_tables` like the reference's. */
export const databaseErrors = {
  notForced: () =>
    new OsmError('OSM_ERR_CLEAR_NOT_FORCED', 400, 'This is a destructive operation. Set force=true to confirm deletion of all records.', { valid_tables: validTables() }),
  unknownTable: (name: string) =>
    new OsmError('OSM_ERR_CLEAR_UNKNOWN_TABLE', 400, `unknown table: ${name} (valid tables: ${ADMIN_TABLES.join(', ')})`, { valid_tables: validTables() }),
  activeRuns: (table: AdminTable, n: number) =>
    new OsmError('OSM_ERR_CLEAR_ACTIVE_RUNS', 409, `Cannot clear ${table}: ${n} run(s) are running or queued; cancel them or wait until they finish`),
  workspaceData: (assets: number, vulns: number) =>
    new OsmError(
      'OSM_ERR_CLEAR_WORKSPACE_DATA',
      409,
      `Cannot clear workspaces while ${assets} asset(s) and ${vulns} vulnerability(ies) remain: their per-workspace counters live on the workspace rows; clear assets and vulnerabilities first`,
    ),
  referenced: (table: AdminTable) => new OsmError('OSM_ERR_CLEAR_REFERENCED', 409, `Cannot clear ${table}: rows of other tables still reference it`),
};

/** GET /database/tables. */
export async function listTables(app: AppContext): Promise<{ data: { name: string; row_count: number }[]; valid_tables: string[] }> {
  return { data: await app.repos.maintenance.adminCounts(), valid_tables: validTables() };
}

/** POST /database/tables/{table}/clear: checks in the reference's order (force, then the table name). */
export async function clearTable(app: AppContext, table: string, force: boolean | undefined): Promise<{ message: string; table: string }> {
  if (force !== true) throw databaseErrors.notForced();
  if (!isAdminTable(table)) throw databaseErrors.unknownTable(table);
  let result;
  try {
    result = await app.repos.maintenance.clearTable(table);
  } catch (err) {
    // A foreign key added by a later migration must give a clear answer, not a 500.
    if (['SQLITE_CONSTRAINT_FOREIGNKEY', '23503'].includes(String((err as { code?: string }).code))) throw databaseErrors.referenced(table);
    throw err;
  }
  if (!result.cleared) {
    const r = result.refusal;
    throw r.reason === 'active_runs' ? databaseErrors.activeRuns(table, r.count) : databaseErrors.workspaceData(r.assets, r.vulnerabilities);
  }
  const scheduler = liveScheduler(app);
  for (const id of result.scheduleIds) await scheduler?.syncSchedule(id);
  try {
    await app.repos.events.insert({
      topic: 'database.table_cleared', name: 'database.table_cleared', source: 'api', source_type: 'api', data_type: 'admin',
      data: { table, rows_deleted: result.rows }, processed: true,
    });
  } catch {
    // Recording must not change the answer; a failing store shows elsewhere.
  }
  return { message: 'Table cleared successfully', table };
}
