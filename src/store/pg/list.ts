/**
 * The PostgreSQL list-with-total query: the COUNT and the page read in one REPEATABLE READ
 * snapshot (the SQLite listPage does both in one read transaction), with the same Where filters.
 * Deep pages use a deferred join as SQLite's listPage does: the ids of the page are found on the
 * index alone (an index-only scan), then only those rows are read — `OFFSET 19980` with `SELECT *`
 * read 20,000 heap rows (benchmark 11: p50 22–25 ms at page 1,000 even on a bare `pg` server).
 */
import { DEFERRED_JOIN_OFFSET, normalizePage, type ListSpec, type Row } from '../sql.js';
import type { ListResult, Page } from '../types.js';
import type { PgDb } from './db.js';

export interface PgListSpec<T> extends Omit<ListSpec<T>, 'total'> {
  /** A cheaper exact total; used when given. */
  total?: () => Promise<number>;
}

export async function pgListPage<T>(db: PgDb, spec: PgListSpec<T>, page: Page): Promise<ListResult<T>> {
  const { offset, limit } = normalizePage(page);
  const where = spec.where.toString();
  return db.tx(
    async () => {
      const total = spec.total ? await spec.total() : Number((await db.one(`SELECT COUNT(*) AS n FROM ${spec.table} ${where}`, spec.where.params))?.n ?? 0);
      const sql =
        offset >= DEFERRED_JOIN_OFFSET
          ? `SELECT * FROM ${spec.table} WHERE id IN (SELECT id FROM ${spec.table} ${where} ORDER BY ${spec.orderBy} LIMIT ? OFFSET ?) ORDER BY ${spec.orderBy}`
          : `SELECT * FROM ${spec.table} ${where} ORDER BY ${spec.orderBy} LIMIT ? OFFSET ?`;
      const rows: Row[] = limit === 0 ? [] : await db.all(sql, [...spec.where.params, limit, offset]);
      return { data: rows.map(spec.map), total };
    },
    { readOnlySnapshot: true },
  );
}
