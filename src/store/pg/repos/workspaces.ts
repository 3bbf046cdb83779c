/**
 * The `workspaces` table on PostgreSQL (statements shared with src/store/workspaces.ts). The
 * counters are kept by the PL/pgSQL twins of the SQLite triggers. Snapshot export/import
 * (dumpPage, restoreDump) is not implemented on PostgreSQL yet: those two reject with
 * `unavailable`.
 */
import { errors } from '../../../errors.js';
import type { Async } from '../../async.js';
import { nowIso } from '../../sql.js';
import {
  addToCounterSql,
  checkCounter,
  checkFileCounter,
  deleteCounts,
  RECOMPUTE_COUNTERS_SQL,
  workspaceListWhere,
  workspaceUpsert,
  WORKSPACE_DELETE_DATA,
  type WorkspaceRecord,
  type WorkspacesRepo,
} from '../../workspaces.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

const asWorkspace = (row: Record<string, unknown>) => row as unknown as WorkspaceRecord;

export function createPgWorkspacesRepo(db: PgDb): Async<WorkspacesRepo> {
  const deleteData = (name: string) =>
    db.tx(async () => {
      const changes: number[] = [];
      for (const sql of WORKSPACE_DELETE_DATA) changes.push((await db.query(sql, sql.split('?').slice(1).map(() => name))).rowCount);
      return deleteCounts(changes);
    });
  const notYet = (method: string) => Promise.reject(errors.unavailable(`store.workspaces.${method} is not implemented on PostgreSQL yet (use db_engine: sqlite)`));

  return {
    async upsertRunInfo(input) {
      const u = workspaceUpsert(input);
      return asWorkspace((await db.queryNamed(u.sql, u.values)).rows[0]!);
    },
    async get(name) {
      const row = await db.one('SELECT * FROM workspaces WHERE name = ?', [name]);
      return row ? asWorkspace(row) : undefined;
    },
    list(filter, page) {
      return pgListPage(db, { table: 'workspaces', where: workspaceListWhere(filter, 'ILIKE'), orderBy: 'name COLLATE "C" ASC', map: asWorkspace }, page);
    },
    delete(name) {
      return db.tx(async () => {
        await deleteData(name);
        return (await db.query('DELETE FROM workspaces WHERE name = ?', [name])).rowCount > 0;
      });
    },
    async setDataSource(name, dataSource) {
      return (await db.query('UPDATE workspaces SET data_source = ?, updated_at = ? WHERE name = ?', [dataSource, nowIso(), name])).rowCount > 0;
    },
    async names() {
      return (await db.all('SELECT name FROM workspaces ORDER BY name COLLATE "C" ASC')).map((r) => r.name as string);
    },
    deleteData,
    async addToCounter(name, counter, amount, reset = false) {
      checkFileCounter(counter);
      const now = nowIso();
      return db.tx(async () => {
        await db.query('INSERT INTO workspaces (name, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [name, now, now]);
        const { rows } = await db.queryNamed(addToCounterSql(counter), { name, amount: Math.trunc(amount), reset: reset ? 1 : 0, now });
        return Number(rows[0]?.value ?? 0);
      });
    },
    async counter(name, counter) {
      checkCounter(counter);
      return Number((await db.one(`SELECT ${counter} AS value FROM workspaces WHERE name = ?`, [name]))?.value ?? 0);
    },
    async recomputeCounters(name) {
      const { rows } = await db.queryNamed(RECOMPUTE_COUNTERS_SQL, { name, now: nowIso() });
      return rows[0] ? asWorkspace(rows[0]) : undefined;
    },
    dumpPage: () => notYet('dumpPage'),
    restoreDump: () => notYet('restoreDump'),
  };
}
