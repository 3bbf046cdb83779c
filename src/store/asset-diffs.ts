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
  /**
   * A run's asset diff (into asset_diffs) and vulnerability diff (into vuln_diffs), written
   * together: both or neither (one statement on PostgreSQL), whichever table this repository reads.
   */
  insertRunPair(assets: DiffSnapshotInput, vulns: DiffSnapshotInput): { assets: DiffSnapshotRecord; vulns: DiffSnapshotRecord };
  /** Filtered page, newest first. */
  list(filter: { workspace?: string; org_uuid?: OrgFilter }, page: Page): ListResult<DiffSnapshotRecord>;
}

/** The asset diff names predate `vuln_diffs`; they are the same types. */
export type AssetDiffRecord = DiffSnapshotRecord;
export type AssetDiffInput = DiffSnapshotInput;
export type AssetDiffsRepo = DiffSnapshotsRepo;

export const mapSnapshot = (row: Row) => row as unknown as DiffSnapshotRecord;

/** The INSERT of `insert` into `table` (named parameters from snapshotValues); dialect-neutral. */
export function snapshotInsertSql(table: DiffSnapshotTable): string {
  return `INSERT INTO ${table} (workspace_name, from_time, to_time, total_added, total_removed, total_changed, diff_data, run_id, created_at)
     VALUES (@workspace_name, @from_time, @to_time, @total_added, @total_removed, @total_changed, @diff_data, @run_id, @now)
     RETURNING *`;
}

export function snapshotValues(input: DiffSnapshotInput): Record<string, unknown> {
  return {
    workspace_name: input.workspace_name,
    from_time: input.from_time,
    to_time: input.to_time,
    total_added: input.total_added,
    total_removed: input.total_removed,
    total_changed: input.total_changed,
    diff_data: input.diff_data,
    run_id: input.run_id ?? 0,
    now: nowIso(),
  };
}

/** The filters of `list` (dialect-neutral). */
export function snapshotListWhere(filter: { workspace?: string; org_uuid?: OrgFilter }): Where {
  const where = new Where().eq('workspace_name', filter.workspace);
  if (filter.org_uuid !== undefined) inWorkspacesOf(where, 'workspace_name', filter.org_uuid);
  return where;
}

/** Creates the repository of one diff snapshot table on one connection. */
export function createDiffSnapshotsRepo(db: Db, q: StatementCache, table: DiffSnapshotTable): DiffSnapshotsRepo {
  return {
    insert(input) {
      return q(snapshotInsertSql(table)).get(snapshotValues(input)) as DiffSnapshotRecord;
    },

    insertRunPair(assets, vulns) {
      return db
        .transaction(() => ({
          assets: q(snapshotInsertSql('asset_diffs')).get(snapshotValues(assets)) as DiffSnapshotRecord,
          vulns: q(snapshotInsertSql('vuln_diffs')).get(snapshotValues(vulns)) as DiffSnapshotRecord,
        }))
        .immediate();
    },

    list(filter, page) {
      return listPage(db, q, { table, where: snapshotListWhere(filter), orderBy: 'created_at DESC, id DESC', map: mapSnapshot }, page);
    },
  };
}
