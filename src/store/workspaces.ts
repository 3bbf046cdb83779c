/**
 * The `workspaces` table. Its asset and vulnerability counters are maintained by triggers
 * (migration 002), so this repository never writes them.
 */
import { errors } from '../errors.js';
import { DIFF_SNAPSHOT_TABLES } from './asset-diffs.js';
import { likeContains, listPage, nowIso, Where, type Db, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';
import { dumpPage, restoreDump, type DumpPage, type DumpSource, type DumpTable, type RestoreCounts, type RestoreOptions } from './workspace-dump.js';
import type { OrgFilter } from './org-constants.js';

export interface WorkspaceRecord {
  id: number;
  name: string;
  data_source: string;
  local_path: string;
  state_execution_log: string;
  state_completed_file: string;
  state_workflow_file: string;
  total_assets: number;
  total_subdomains: number;
  total_urls: number;
  total_ips: number;
  total_links: number;
  total_content: number;
  total_archive: number;
  total_vulns: number;
  vuln_critical: number;
  vuln_high: number;
  vuln_medium: number;
  vuln_low: number;
  vuln_info: number;
  risk_score: number;
  last_run: string | null;
  run_workflow: string;
  created_at: string;
  updated_at: string;
  /** The workspace's org (migration 007); its assets, vulnerabilities and runs share it. */
  org_uuid?: string;
}

export interface WorkspaceRunInfo {
  name: string;
  local_path: string;
  /** Defaults to 'local' for a new row; an existing row keeps its value unless given. */
  data_source?: string;
  state_execution_log?: string;
  state_completed_file?: string;
  state_workflow_file?: string;
  last_run?: string;
  run_workflow?: string;
  /** The org of a NEW row (the org of the run creating it); an existing row keeps its org. */
  org_uuid?: string;
}

export interface WorkspaceListFilter {
  data_source?: string;
  /** Substring of the name. */
  search?: string;
  /** Only workspaces of this org (uuid). */
  org_uuid?: OrgFilter;
}

export interface WorkspaceDeleteCounts {
  assets: number;
  vulns: number;
  runs: number;
}

/** Counters that only workflows write (db_total_* functions add file line counts to them). */
export const FILE_COUNTERS = ['total_subdomains', 'total_urls', 'total_ips', 'total_links', 'total_content', 'total_archive'] as const;
/** Counters kept exact from the assets and vulnerabilities tables by triggers (migration 002). */
export const EXACT_COUNTERS = ['total_assets', 'total_vulns', 'vuln_critical', 'vuln_high', 'vuln_medium', 'vuln_low', 'vuln_info'] as const;
export type FileCounter = (typeof FILE_COUNTERS)[number];
export type WorkspaceCounter = FileCounter | (typeof EXACT_COUNTERS)[number];

export interface WorkspacesRepo {
  /** Creates or updates the row of a workspace with run information; counters untouched. */
  upsertRunInfo(input: WorkspaceRunInfo): WorkspaceRecord;
  get(name: string): WorkspaceRecord | undefined;
  /** Filtered page by name. */
  list(filter: WorkspaceListFilter, page: Page): ListResult<WorkspaceRecord>;
  /** Deletes the workspace row and all its data (see deleteData); false when there was no row. */
  delete(name: string): boolean;
  setDataSource(name: string, dataSource: string): boolean;
  /** Every workspace name, sorted. */
  names(): string[];
  /** Deletes the workspace's assets, vulnerabilities, diffs, runs (with steps and artifacts) and events, in one transaction. */
  deleteData(name: string): WorkspaceDeleteCounts;
  /** Adds `amount` to a file counter (or sets it to 0 when `reset`), creating the row when missing; returns the new value. */
  addToCounter(name: string, counter: FileCounter, amount: number, reset?: boolean): number;
  /** One counter of a workspace (0 when the workspace has no row). */
  counter(name: string, counter: WorkspaceCounter): number;
  /**
   * Recomputes every counter of the workspace from its rows: assets and vulnerabilities by
   * severity, subdomains (asset_type subdomain or domain), URLs (url, http, web) and IPs (ip).
   * Links, content and archive have no table behind them and are left as they are.
   */
  recomputeCounters(name: string): WorkspaceRecord | undefined;
  /** One page of the workspace's rows of `table` (snapshot export); `after` is the previous page's `last`. */
  dumpPage(name: string, table: DumpTable, after: number, limit: number): DumpPage;
  /** Restores dumped rows as workspace `name` in one transaction (snapshot import); see workspace-dump.ts. */
  restoreDump(name: string, source: DumpSource, opts: RestoreOptions): RestoreCounts;
}

const OPTIONAL_FIELDS = ['data_source', 'state_execution_log', 'state_completed_file', 'state_workflow_file', 'last_run', 'run_workflow'] as const;

/** The filters of `list`; `like` is the engine's case-insensitive LIKE. */
export function workspaceListWhere(filter: WorkspaceListFilter, like: 'LIKE' | 'ILIKE'): Where {
  const where = new Where().eq('data_source', filter.data_source).oneOf('org_uuid', filter.org_uuid);
  if (filter.search) where.add(`name ${like} ? ESCAPE '\\'`, likeContains(filter.search));
  return where;
}

/** The statements of deleteData, in order (each binds the workspace name to every `?`); dialect-neutral. */
export const WORKSPACE_DELETE_DATA: readonly string[] = [
  'DELETE FROM assets WHERE workspace = ?',
  'DELETE FROM vulnerabilities WHERE workspace = ?',
  ...DIFF_SNAPSHOT_TABLES.map((diffs) => `DELETE FROM ${diffs} WHERE workspace_name = ?`),
  'DELETE FROM artifacts WHERE workspace = ? OR run_id IN (SELECT id FROM runs WHERE workspace = ?)',
  'DELETE FROM step_results WHERE workspace = ?',
  // Remaining steps of these runs go through ON DELETE CASCADE.
  'DELETE FROM runs WHERE workspace = ?',
  'DELETE FROM event_logs WHERE workspace = ?',
];

/** The counts of deleteData from the changes of each WORKSPACE_DELETE_DATA statement. */
export function deleteCounts(changes: number[]): WorkspaceDeleteCounts {
  return { assets: changes[0]!, vulns: changes[1]!, runs: changes[WORKSPACE_DELETE_DATA.indexOf('DELETE FROM runs WHERE workspace = ?')]! };
}

/** The upsert of upsertRunInfo: only the given optional fields overwrite an existing row. */
export function workspaceUpsert(input: WorkspaceRunInfo): { sql: string; values: Record<string, unknown> } {
  const given = OPTIONAL_FIELDS.filter((k) => input[k] !== undefined);
  const columns = ['name', 'local_path', ...given, ...(input.org_uuid ? ['org_uuid'] : [])];
  const values: Record<string, unknown> = { name: input.name, local_path: input.local_path, now: nowIso() };
  for (const k of given) values[k] = input[k];
  if (input.org_uuid) values.org_uuid = input.org_uuid;
  const sql = `INSERT INTO workspaces (${columns.join(', ')}, created_at, updated_at)
     VALUES (${columns.map((c) => `@${c}`).join(', ')}, @now, @now)
     ON CONFLICT (name) DO UPDATE SET
       ${['local_path', ...given].map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = excluded.updated_at
     RETURNING *`;
  return { sql, values };
}

/** The UPDATE of addToCounter (a validated file counter; named parameters name, amount, reset, now). */
export function addToCounterSql(counter: FileCounter): string {
  return `UPDATE workspaces SET ${counter} = CASE WHEN @reset = 1 THEN 0 ELSE ${counter} + @amount END, updated_at = @now
     WHERE name = @name RETURNING ${counter} AS value`;
}

const sev = (s: string) => `vuln_${s} = (SELECT COUNT(*) FROM vulnerabilities WHERE workspace = @name AND severity = '${s}')`;
const ofTypes = (types: string[]) => `(SELECT COUNT(*) FROM assets WHERE workspace = @name AND asset_type IN (${types.map((t) => `'${t}'`).join(', ')}))`;

/** The UPDATE … RETURNING of recomputeCounters (named parameters name, now). */
export const RECOMPUTE_COUNTERS_SQL = `UPDATE workspaces SET
     total_assets = (SELECT COUNT(*) FROM assets WHERE workspace = @name),
     total_subdomains = ${ofTypes(['subdomain', 'domain'])},
     total_urls = ${ofTypes(['url', 'http', 'web'])},
     total_ips = ${ofTypes(['ip'])},
     total_vulns = (SELECT COUNT(*) FROM vulnerabilities WHERE workspace = @name),
     ${['critical', 'high', 'medium', 'low', 'info'].map(sev).join(',\n     ')},
     updated_at = @now
   WHERE name = @name RETURNING *`;

/** Throws unless `counter` is a file counter (the only ones addToCounter writes). */
export function checkFileCounter(counter: string): void {
  if (!(FILE_COUNTERS as readonly string[]).includes(counter)) throw errors.validation(`unknown workspace counter: ${String(counter)}`);
}

/** Throws unless `counter` is a workspace counter. */
export function checkCounter(counter: string): void {
  if (![...FILE_COUNTERS, ...EXACT_COUNTERS].includes(counter as WorkspaceCounter)) throw errors.validation(`unknown workspace counter: ${String(counter)}`);
}

/** Creates the workspaces repository on one connection. */
export function createWorkspacesRepo(db: Db, q: StatementCache): WorkspacesRepo {
  const get = (name: string): WorkspaceRecord | undefined => q('SELECT * FROM workspaces WHERE name = ?').get(name) as WorkspaceRecord | undefined;

  const deleteData = (name: string): WorkspaceDeleteCounts =>
    db.transaction(() => {
      const n = WORKSPACE_DELETE_DATA.map((sql) => q(sql).run(...sql.split('?').slice(1).map(() => name)).changes);
      return deleteCounts(n);
    }).immediate();

  return {
    upsertRunInfo(input) {
      const u = workspaceUpsert(input);
      return q(u.sql).get(u.values) as WorkspaceRecord;
    },

    get,

    list(filter, page) {
      const where = workspaceListWhere(filter, 'LIKE');
      return listPage(db, q, { table: 'workspaces', where, orderBy: 'name ASC', map: (r) => r as unknown as WorkspaceRecord }, page);
    },

    delete(name) {
      return db.transaction(() => {
        deleteData(name);
        return q('DELETE FROM workspaces WHERE name = ?').run(name).changes > 0;
      }).immediate();
    },

    setDataSource(name, dataSource) {
      return q('UPDATE workspaces SET data_source = ?, updated_at = ? WHERE name = ?').run(dataSource, nowIso(), name).changes > 0;
    },

    names() {
      return (q('SELECT name FROM workspaces ORDER BY name ASC').all() as { name: string }[]).map((r) => r.name);
    },

    deleteData,

    addToCounter(name, counter, amount, reset = false) {
      checkFileCounter(counter);
      const now = nowIso();
      return db.transaction(() => {
        q(`INSERT INTO workspaces (name, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`).run(name, now, now);
        const row = q(addToCounterSql(counter)).get({ name, amount: Math.trunc(amount), reset: reset ? 1 : 0, now }) as { value: number };
        return row.value;
      }).immediate();
    },

    counter(name, counter) {
      checkCounter(counter);
      const row = q(`SELECT ${counter} AS value FROM workspaces WHERE name = ?`).get(name) as { value: number } | undefined;
      return row?.value ?? 0;
    },

    recomputeCounters(name) {
      return q(RECOMPUTE_COUNTERS_SQL).get({ name, now: nowIso() }) as WorkspaceRecord | undefined;
    },

    dumpPage(name, table, after, limit) {
      return dumpPage(q, name, table, after, limit);
    },

    restoreDump(name, source, opts) {
      return restoreDump(db, q, name, source, opts, (n) => void deleteData(n));
    },
  };
}
