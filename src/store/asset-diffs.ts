/**
 * The stored diff snapshot tables: `asset_diffs` (migration 001) and `vuln_diffs` (migration 008).
 * Both have the same columns and indexes and one repository implementation, parameterised by
 * table; a row of each is written when a run completes (services/diffs.ts `recordRunDiff`).
 */
import { listPage, nowIso, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';
import { inWorkspacesOf, type OrgFilter } from './org-constants.js';

/** The diff snapshot tables, which every deletion and maintenance path handles alike. */
export const DIFF_SNAPSHOT_TABLES = ['asset_diffs', 'vuln_diffs'] as const;
export type DiffSnapshotTable = (typeof DIFF_SNAPSHOT_TABLES)[number];

export interface DiffSnapshotRecord {
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

export type DiffSnapshotInput = Omit<DiffSnapshotRecord, 'id' | 'created_at' | 'run_id'> & { run_id?: number };

export interface DiffSnapshotsRepo {
  /** Stores one diff snapshot. */
  insert(input: DiffSnapshotInput): DiffSnapshotRecord;
  /** Filtered page, newest first. */
  list(filter: { workspace?: string; org_uuid?: OrgFilter }, page: Page): ListResult<DiffSnapshotRecord>;
}

/** The asset diff names predate `vuln_diffs`; they are the same types. */
export type AssetDiffRecord = DiffSnapshotRecord;
export type AssetDiffInput = DiffSnapshotInput;
export type AssetDiffsRepo = DiffSnapshotsRepo;

const mapSnapshot = (row: Row) => row as unknown as DiffSnapshotRecord;

/** Creates the repository of one diff snapshot table on one connection. */
export function createDiffSnapshotsRepo(db: Db, q: StatementCache, table: DiffSnapshotTable): DiffSnapshotsRepo {
  return {
    insert(input) {
      return q(
        `INSERT INTO ${table} (workspace_name, from_time, to_time, total_added, total_removed, total_changed, diff_data, run_id, created_at)
         VALUES (@workspace_name, @from_time, @to_time, @total_added, @total_removed, @total_changed, @diff_data, @run_id, @now)
         RETURNING *`,
      ).get({ ...input, run_id: input.run_id ?? 0, now: nowIso() }) as DiffSnapshotRecord;
    },

    list(filter, page) {
      const where = new Where().eq('workspace_name', filter.workspace);
      if (filter.org_uuid !== undefined) inWorkspacesOf(where, 'workspace_name', filter.org_uuid);
      return listPage(db, q, { table, where, orderBy: 'created_at DESC, id DESC', map: mapSnapshot }, page);
    },
  };
}
