/**
 * The `workspaces` table on PostgreSQL (statements shared with src/store/workspaces.ts). The
 * counters are kept by the PL/pgSQL twins of the SQLite triggers. Snapshot export pages by id
 * (artifacts, whose id is a uuid, by position in created_at order); snapshot import runs the
 * engine-neutral restorePlan of workspace-dump.ts in one transaction, a row PostgreSQL refuses
 * (a value of the wrong type, a constraint) rejecting the whole import as invalid.
 */
import { errors, OsmError } from '../../../errors.js';
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
import { DUMP_SELECTION, restoreInsertSql, restorePlan } from '../../workspace-dump.js';
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

  return {
    async upsertRunInfo(input) {
      const u = workspaceUpsert(input);
      // An upsert of given values: sent twice, the row is the same.
      return asWorkspace((await db.queryNamed(u.sql, u.values, { idempotent: true })).rows[0]!);
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
    async dumpPage(name, table, after, limit) {
      const sel = DUMP_SELECTION[table];
      const names = sel.where.split('?').slice(1).map(() => name);
      const n = Math.max(1, Math.trunc(limit));
      if (sel.table === 'artifacts') {
        // No numeric key: `after` counts the rows already returned (new artifacts sort last).
        const rows = await db.all(`SELECT * FROM artifacts WHERE ${sel.where} ORDER BY created_at, id COLLATE "C" LIMIT ? OFFSET ?`, [...names, n, Math.max(0, Math.trunc(after))]);
        return { rows, last: after + rows.length };
      }
      const rows = await db.all(`SELECT * FROM ${sel.table} WHERE id > ? AND ${sel.where} ORDER BY id LIMIT ?`, [after, ...names, n]);
      return { rows, last: rows.length > 0 ? Number(rows[rows.length - 1]!.id) : after };
    },
    restoreDump(name, source, opts) {
      const columns = new Map<string, Set<string>>();
      return db.tx(async () => {
        const plan = restorePlan(name, source, opts);
        let step = plan.next();
        while (!step.done) {
          const op = step.value;
          let result: unknown;
          try {
            if (op.op === 'get') result = await db.one(op.sql, op.params);
            else if (op.op === 'insert') result = Number((await db.queryNamed(`${restoreInsertSql(op.table, op.values)}${op.returnId ? ' RETURNING id' : ''}`, op.values)).rows[0]?.id ?? 0);
            else if (op.op === 'upsert') await db.queryNamed(op.sql, op.values);
            else if (op.op === 'columns') {
              result = columns.get(op.table) ?? new Set((await db.all('SELECT column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?', [op.table])).map((r) => String(r.c)));
              columns.set(op.table, result as Set<string>);
            } else await deleteData(op.name);
          } catch (err) {
            // A dumped value PostgreSQL refuses (data exception 22…, constraint 23…) makes the snapshot invalid, not the server broken.
            const code = (err as { code?: string }).code ?? '';
            if (!(err instanceof OsmError) && /^2[23]/.test(code)) throw errors.validation(`snapshot row rejected by PostgreSQL: ${(err as Error).message}`);
            throw err;
          }
          step = plan.next(result);
        }
        return step.value;
      });
    },
  };
}
