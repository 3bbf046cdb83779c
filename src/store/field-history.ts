/**
 * Field-level history shared by `asset_history` and `vuln_history` (migration 003): one row per
 * field whose value an import changed, with the old and new values as JSON text. Diffs read it
 * to report `{ field, old_value, new_value }`; the reference never filled `changes`.
 */
import { parseJson, type StatementCache } from './sql.js';

export interface FieldChange {
  field: string;
  old_value: unknown;
  new_value: unknown;
}

/** One stored change of one row. */
export interface HistoryRecord extends FieldChange {
  id: number;
  /** The asset or vulnerability id. */
  row_id: number;
  workspace: string;
  changed_at: string;
}

type HistoryTable = 'asset_history' | 'vuln_history';
const ID_COLUMN: Record<HistoryTable, string> = { asset_history: 'asset_id', vuln_history: 'vuln_id' };

/** Writes the changes of one row (nothing when the list is empty). */
export function recordChanges(q: StatementCache, table: HistoryTable, rowId: number, workspace: string, changes: FieldChange[], now: string): void {
  if (changes.length === 0) return;
  const stmt = q(`INSERT INTO ${table} (${ID_COLUMN[table]}, workspace, field, old_value, new_value, changed_at) VALUES (?, ?, ?, ?, ?, ?)`);
  for (const c of changes) stmt.run(rowId, workspace, c.field, JSON.stringify(c.old_value ?? null), JSON.stringify(c.new_value ?? null), now);
}

/** Every change of `workspace` recorded in [from, to], oldest first. */
export function historyBetween(q: StatementCache, table: HistoryTable, workspace: string, from: string, to: string, limit = -1): HistoryRecord[] {
  return (q(historySql(table)).all(workspace, from, to, limit) as Record<string, unknown>[]).map(mapHistory);
}

/** Compares two column values the way merges do (arrays by content). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** The SQL of the diff-window queries of `table` (positional parameters, as the argument lists below); dialect-neutral except the LIMIT value for "no limit" (-1 on SQLite). */
export function diffWindowSql(table: 'assets' | 'vulnerabilities', brief: readonly string[]) {
  const briefSql = brief.join(', ');
  const ADDED = `workspace = ? AND created_at >= ? AND created_at <= ?`;
  const CHANGED = `workspace = ? AND updated_at >= ? AND updated_at <= ? AND created_at < ?`;
  const REMOVED = `workspace = ? AND last_seen_at < ? AND last_seen_at <> '' AND created_at < ?`;
  return {
    /** (workspace, from, to, from, limit) */
    changed: `SELECT * FROM ${table} WHERE ${CHANGED} ORDER BY updated_at ASC, id ASC LIMIT ?`,
    /** (workspace, from, to, limit) */
    added: `SELECT ${briefSql} FROM ${table} WHERE ${ADDED} ORDER BY created_at ASC, id ASC LIMIT ?`,
    /** (workspace, from, from, limit) */
    removed: `SELECT ${briefSql} FROM ${table} WHERE ${REMOVED} ORDER BY last_seen_at ASC, id ASC LIMIT ?`,
    /** (workspace, from, to) */
    countAdded: `SELECT COUNT(*) AS n FROM ${table} WHERE ${ADDED}`,
    /** (workspace, from, from) */
    countRemoved: `SELECT COUNT(*) AS n FROM ${table} WHERE ${REMOVED}`,
    /** (workspace, from, to, from) */
    countChanged: `SELECT COUNT(*) AS n FROM ${table} WHERE ${CHANGED}`,
    /** (workspace) */
    oldest: `SELECT MIN(created_at) AS t FROM ${table} WHERE workspace = ?`,
  };
}

/** The SQL of historyBetween: (workspace, from, to, limit). */
export function historySql(table: HistoryTable): string {
  return `SELECT id, ${ID_COLUMN[table]} AS row_id, workspace, field, old_value, new_value, changed_at FROM ${table}
     WHERE workspace = ? AND changed_at >= ? AND changed_at <= ? ORDER BY changed_at ASC, id ASC LIMIT ?`;
}

/** A stored history row with its JSON values parsed. */
export function mapHistory(r: Record<string, unknown>): HistoryRecord {
  return { ...(r as unknown as HistoryRecord), old_value: parseJson<unknown>(r.old_value, null), new_value: parseJson<unknown>(r.new_value, null) };
}

/**
 * The diff-window queries of a table with created_at / updated_at / last_seen_at (assets and
 * vulnerabilities): added, changed and removed rows of a workspace around [from, to], their
 * counts, the oldest row's time and the field history. `map` turns a raw row into a record.
 */
export function diffWindowQueries<R, B>(q: StatementCache, table: 'assets' | 'vulnerabilities', history: HistoryTable, map: (row: never) => R, brief: readonly (keyof B & string)[]) {
  // Added and removed rows are listed with a few columns only: whole rows carry raw responses
  // and JSON blobs, and reading them made a large workspace's diff several times slower.
  const sql = diffWindowSql(table, brief);
  const briefOf = (text: string, ...params: unknown[]) => q(text).all(...params) as B[];
  const rowsOf = (text: string, ...params: unknown[]) => (q(text).all(...params) as never[]).map(map);
  const one = (text: string, ...params: unknown[]) => (q(text).get(...params) as { n: number }).n;
  const changedBetween = (workspace: string, from: string, to: string, limit = -1) => rowsOf(sql.changed, workspace, from, to, from, limit);
  return {
    changedBetween,
    changedSince: changedBetween,
    addedBetween: (workspace: string, from: string, to: string, limit = -1) => briefOf(sql.added, workspace, from, to, limit),
    removedBefore: (workspace: string, from: string, limit = -1) => briefOf(sql.removed, workspace, from, from, limit),
    diffCounts: (workspace: string, from: string, to: string) => ({
      added: one(sql.countAdded, workspace, from, to),
      removed: one(sql.countRemoved, workspace, from, from),
      changed: one(sql.countChanged, workspace, from, to, from),
    }),
    oldestCreatedAt: (workspace: string): string | undefined => (q(sql.oldest).get(workspace) as { t: string | null }).t ?? undefined,
    history: (workspace: string, from: string, to: string, limit = -1) => historyBetween(q, history, workspace, from, to, limit),
  };
}
