/** The `asset_diffs` table: stored results of a computed asset diff. */
import { listPage, nowIso, Where, type Db, type Row, type StatementCache } from './sql.js';
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

/** Creates the asset diffs repository on one connection. */
export function createAssetDiffsRepo(db: Db, q: StatementCache): AssetDiffsRepo {
  const map = (row: Row) => row as unknown as AssetDiffRecord;
  return {
    insert(input) {
      return q(
        `INSERT INTO asset_diffs (workspace_name, from_time, to_time, total_added, total_removed, total_changed, diff_data, run_id, created_at)
         VALUES (@workspace_name, @from_time, @to_time, @total_added, @total_removed, @total_changed, @diff_data, @run_id, @now)
         RETURNING *`,
      ).get({ ...input, run_id: input.run_id ?? 0, now: nowIso() }) as AssetDiffRecord;
    },

    list(filter, page) {
      const where = new Where().eq('workspace_name', filter.workspace);
      return listPage(db, q, { table: 'asset_diffs', where, orderBy: 'created_at DESC, id DESC', map }, page);
    },
  };
}
