/** The diff-window and field-history queries of assets and vulnerabilities on PostgreSQL (SQL of field-history.ts). */
import { diffWindowSql, historySql, mapHistory } from '../field-history.js';
import type { Row } from '../sql.js';
import type { PgDb } from './db.js';

/** SQLite's LIMIT -1 ("no limit") is LIMIT NULL on PostgreSQL. */
const lim = (n: number) => (n < 0 ? null : n);

export function pgDiffWindowQueries<R, B>(db: PgDb, table: 'assets' | 'vulnerabilities', history: 'asset_history' | 'vuln_history', map: (row: Row) => R, brief: readonly (keyof B & string)[]) {
  const sql = diffWindowSql(table, brief);
  const n = async (text: string, params: unknown[]) => Number((await db.one(text, params))?.n ?? 0);
  const changedBetween = async (workspace: string, from: string, to: string, limit = -1) => (await db.all(sql.changed, [workspace, from, to, from, lim(limit)])).map(map);
  return {
    changedBetween,
    changedSince: changedBetween,
    addedBetween: async (workspace: string, from: string, to: string, limit = -1) => (await db.all(sql.added, [workspace, from, to, lim(limit)])) as unknown as B[],
    removedBefore: async (workspace: string, from: string, limit = -1) => (await db.all(sql.removed, [workspace, from, from, lim(limit)])) as unknown as B[],
    diffCounts: async (workspace: string, from: string, to: string) => ({
      added: await n(sql.countAdded, [workspace, from, to]),
      removed: await n(sql.countRemoved, [workspace, from, from]),
      changed: await n(sql.countChanged, [workspace, from, to, from]),
    }),
    oldestCreatedAt: async (workspace: string) => ((await db.one(sql.oldest, [workspace]))?.t as string | null | undefined) ?? undefined,
    history: async (workspace: string, from: string, to: string, limit = -1) => (await db.all(historySql(history), [workspace, from, to, lim(limit)])).map(mapHistory),
  };
}
