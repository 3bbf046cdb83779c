/** The `asset_diffs` table: stored results of a computed asset diff. */
import { listPage, nowIso, statementCache, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';

export interface AssetDiffRecord {
  id: number;
  workspace_name: string;
  from_time: string;
  to_time: string;
  total_added: number;
  total_removed: number;
  total_changed: number;
  /** JSON text with added, removed and changed. */
  diff_data: string;
  run_id: number;
  created_at: string;
}

export type AssetDiffInput = Omit<AssetDiffRecord, 'id' | 'created_at' | 'run_id'> & { run_id?: number };

export interface AssetDiffsRepo {
  /** Stores one diff snapshot. */
  insert(input: AssetDiffInput): AssetDiffRecord;
  /** Filtered page, newest first. */
  list(filter: { workspace?: string }, page: Page): ListResult<AssetDiffRecord>;
}

/**
 * The stored diff snapshot tables: `asset_diffs` (written when a run completes) and the
 * reference's `vuln_diffs` (same columns, never written by the reference). osm's schema has no
 * `vuln_diffs` table yet; it is read when a migration adds it and reads as empty until then.
 */
export type DiffSnapshotTable = 'asset_diffs' | 'vuln_diffs';

const mapSnapshot = (row: Row) => row as unknown as AssetDiffRecord;

/** True when the database has `table`. */
function hasTable(q: StatementCache, table: string): boolean {
  return q(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table) !== undefined;
}

/** A filtered page of one diff snapshot table, newest first (empty when the table does not exist). */
export function diffSnapshotPage(db: Db, q: StatementCache, table: DiffSnapshotTable, filter: { workspace?: string }, page: Page): ListResult<AssetDiffRecord> {
  if (table !== 'asset_diffs' && !hasTable(q, table)) return { data: [], total: 0 };
  const where = new Where().eq('workspace_name', filter.workspace);
  return listPage(db, q, { table, where, orderBy: 'created_at DESC, id DESC', map: mapSnapshot }, page);
}

/** Statement caches of connections that diff snapshot reads outside the repository use. */
const caches = new WeakMap<Db, StatementCache>();

/** Stored vulnerability diff snapshots (`vuln_diffs`), newest first; the same read as the asset diffs repository. */
export function listVulnDiffs(db: Db, filter: { workspace?: string }, page: Page): ListResult<AssetDiffRecord> {
  let q = caches.get(db);
  if (!q) {
    q = statementCache(db);
    caches.set(db, q);
  }
  return diffSnapshotPage(db, q, 'vuln_diffs', filter, page);
}

/** Creates the asset diffs repository on one connection. */
export function createAssetDiffsRepo(db: Db, q: StatementCache): AssetDiffsRepo {
  return {
    insert(input) {
      return q(
        `INSERT INTO asset_diffs (workspace_name, from_time, to_time, total_added, total_removed, total_changed, diff_data, run_id, created_at)
         VALUES (@workspace_name, @from_time, @to_time, @total_added, @total_removed, @total_changed, @diff_data, @run_id, @now)
         RETURNING *`,
      ).get({ ...input, run_id: input.run_id ?? 0, now: nowIso() }) as AssetDiffRecord;
    },

    list(filter, page) {
      return diffSnapshotPage(db, q, 'asset_diffs', filter, page);
    },
  };
}
