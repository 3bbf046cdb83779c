/**
 * The `vulnerabilities` table. POST /vulnerabilities inserts plainly; imports dedupe on a
 * fingerprint of (workspace, template or vuln id, asset, matcher), so re-importing the same
 * scanner output adds nothing. Severity counters are kept by triggers (migration 002).
 */
import { createHash } from 'node:crypto';
import { errors } from '../errors.js';
import {
  inTransaction,
  likeContains,
  listPage,
  nowIso,
  parseStringArray,
  toStringArray,
  toText,
  Where,
  type Db,
  type Row,
  type StatementCache,
} from './sql.js';
import { SEVERITIES, type ListResult, type Page, type Severity, type UpsertResult } from './types.js';
import { diffWindowQueries, recordChanges, sameValue, type FieldChange, type HistoryRecord } from './field-history.js';
import { orgCondition, orgOfWorkspaceSql } from './org-constants.js';
import type { OrgFilter } from './org-constants.js';

export interface VulnRecord {
  id: number;
  workspace: string;
  vuln_info: string;
  vuln_title: string;
  vuln_desc: string;
  vuln_poc: string;
  severity: Severity;
  confidence: string;
  asset_type: string;
  asset_value: string;
  template_id: string;
  matcher_name: string;
  tags: string[];
  detail_http_request: string;
  detail_http_response: string;
  raw_vuln_json: string;
  fingerprint: string | null;
  created_at: string;
  updated_at: string;
  last_seen_at: string;
  /** The org of the finding's workspace (migration 007). */
  org_uuid?: string;
}

/** A vulnerability as callers and importers provide it; values are coerced (they often come from tool output). */
export type VulnInput = Partial<
  Omit<VulnRecord, 'id' | 'workspace' | 'severity' | 'fingerprint' | 'created_at' | 'updated_at' | 'last_seen_at' | 'org_uuid'>
> & { severity?: string };

export interface VulnListFilter {
  workspace?: string;
  /** Any of these severities. */
  severity?: string[];
  confidence?: string;
  /** Substring of asset_value. */
  asset_value?: string;
  /** Only rows of this org (uuid). */
  org_uuid?: OrgFilter;
}

export interface VulnSummary {
  critical: number;
  high: number;
  medium: number;
  low: number;
  info: number;
  total: number;
}

/** The columns of a finding that a diff lists as added or removed. */
export type VulnBrief = Pick<VulnRecord, 'id' | 'vuln_info' | 'asset_value' | 'severity' | 'template_id' | 'created_at' | 'last_seen_at'>;
export const VULN_BRIEF = ['id', 'vuln_info', 'asset_value', 'severity', 'template_id', 'created_at', 'last_seen_at'] as const;

export interface VulnsRepo {
  /** Plain insert (no dedupe): severity lower-cased (default info), confidence default 'Certain'. */
  create(input: VulnInput & { workspace: string }): VulnRecord;
  /** Inserts or merges rows by fingerprint in one transaction. */
  upsertMany(workspace: string, rows: VulnInput[], now?: string): UpsertResult;
  get(id: number): VulnRecord | undefined;
  /** Like the assets' touchedSince: a page of the rows a worker ships, by id, after `afterId`. */
  touchedSince(workspace: string, since: string, limit: number, afterId?: number): VulnRecord[];
  delete(id: number): boolean;
  /** Filtered page, newest first (created_at DESC, id DESC). */
  list(filter: VulnListFilter, page: Page): ListResult<VulnRecord>;
  /** Per-severity counts of one workspace or of all (within one org when `orgUuid` is given), read from the counters. */
  summary(workspace?: string, orgUuid?: OrgFilter): VulnSummary;
  /** Rows of `workspace` created in [from, to] (the columns a diff lists). */
  addedBetween(workspace: string, from: string, to: string, limit?: number): VulnBrief[];
  /** Rows of `workspace` created before `from` whose updated_at lies in [from, to]. */
  changedBetween(workspace: string, from: string, to: string, limit?: number): VulnRecord[];
  /** Alias of changedBetween, named like the asset query. */
  changedSince(workspace: string, from: string, to: string, limit?: number): VulnRecord[];
  /** Rows of `workspace` created and last seen before `from` (the columns a diff lists). */
  removedBefore(workspace: string, from: string, limit?: number): VulnBrief[];
  /** Exact sizes of the three diff sets (indexed counts), for bounded diff listings. */
  diffCounts(workspace: string, from: string, to: string): { added: number; removed: number; changed: number };
  /** created_at of the workspace's oldest row, or undefined when it has none. */
  oldestCreatedAt(workspace: string): string | undefined;
  /** Field changes of `workspace` recorded in [from, to], oldest first (row_id = vulnerability id). */
  history(workspace: string, from: string, to: string, limit?: number): HistoryRecord[];
}

const TEXT_FIELDS = ['vuln_info', 'vuln_title', 'vuln_desc', 'vuln_poc', 'confidence', 'asset_type', 'asset_value', 'template_id', 'matcher_name'] as const;
/** Refreshed on import but not a "change": requests, responses and raw JSON carry dates and nonces. */
const VOLATILE_FIELDS = ['detail_http_request', 'detail_http_response', 'raw_vuln_json'] as const;
export const VULN_COLUMNS = ['workspace', 'severity', 'tags', 'fingerprint', ...TEXT_FIELDS, ...VOLATILE_FIELDS] as const;
const SEVERITY_ALIASES: Readonly<Record<string, Severity>> = { informational: 'info', moderate: 'medium', crit: 'critical' };

export type VulnValues = Omit<VulnRecord, 'id' | 'created_at' | 'updated_at' | 'last_seen_at' | 'org_uuid'>;

/** Lower-cases a severity; unknown values (e.g. nuclei's "unknown") count as info so severities always sum to the total. */
export function normalizeSeverity(value: unknown): Severity {
  const s = toText(value).trim().toLowerCase();
  if ((SEVERITIES as readonly string[]).includes(s)) return s as Severity;
  return SEVERITY_ALIASES[s] ?? 'info';
}

/** The dedupe key of an imported finding. */
export function vulnFingerprint(workspace: string, v: { template_id?: string; vuln_info?: string; asset_value?: string; matcher_name?: string }): string {
  const key = [workspace, v.template_id || v.vuln_info || '', v.asset_value ?? '', v.matcher_name ?? ''].join('\0');
  return createHash('sha256').update(key).digest('hex');
}

/** Maps a vulnerabilities row to its record. */
export function mapVuln(row: Row): VulnRecord {
  return { ...(row as unknown as VulnRecord), tags: parseStringArray(row.tags) };
}

/** Coerces one untrusted row; severity and confidence stay '' when not given, so a merge can tell. */
export function normalizeVuln(workspace: string, input: VulnInput, fingerprint: boolean): VulnValues {
  const src = input as Record<string, unknown>;
  const given = toText(src.severity).trim() !== '';
  const out: Record<string, unknown> = { workspace, severity: given ? normalizeSeverity(src.severity) : '', tags: toStringArray(src.tags) };
  for (const k of [...TEXT_FIELDS, ...VOLATILE_FIELDS]) out[k] = toText(src[k]);
  out.fingerprint = fingerprint ? vulnFingerprint(workspace, out as VulnInput) : null;
  return out as unknown as VulnValues;
}

/** Fills the defaults of a new row. */
export function vulnWithDefaults(v: VulnValues): VulnValues {
  return { ...v, severity: v.severity || 'info', confidence: v.confidence || 'Certain' };
}

/** Merges `incoming` over `existing` (non-empty values win); lists meaningful changes, flags volatile ones. */
export function mergeVuln(existing: VulnRecord, incoming: VulnValues): { merged: VulnValues; changes: FieldChange[]; volatileChanged: boolean } {
  const old = existing as unknown as Record<string, unknown>;
  const inc = incoming as unknown as Record<string, unknown>;
  const merged: Record<string, unknown> = { ...incoming };
  const changes: FieldChange[] = [];
  let volatileChanged = false;
  for (const k of ['severity', ...TEXT_FIELDS, ...VOLATILE_FIELDS]) {
    merged[k] = inc[k] !== '' ? inc[k] : old[k];
    if (sameValue(merged[k], old[k])) continue;
    if ((VOLATILE_FIELDS as readonly string[]).includes(k)) volatileChanged = true;
    else changes.push({ field: k, old_value: old[k], new_value: merged[k] });
  }
  merged.tags = incoming.tags.length > 0 ? incoming.tags : existing.tags;
  if (!sameValue(merged.tags, existing.tags)) changes.push({ field: 'tags', old_value: existing.tags, new_value: merged.tags });
  return { merged: merged as unknown as VulnValues, changes, volatileChanged };
}

export function vulnParams(v: VulnValues): Record<string, unknown> {
  return { ...v, tags: JSON.stringify(v.tags) };
}

/** A new row's values in VULN_COLUMNS order as positional parameters (defaults applied, tags as JSON), without an intermediate object. */
export function vulnPositional(v: VulnValues): unknown[] {
  const src = v as unknown as Record<string, unknown>;
  const out: unknown[] = new Array(VULN_COLUMNS.length);
  for (let i = 0; i < VULN_COLUMNS.length; i++) {
    const c = VULN_COLUMNS[i]!;
    out[i] = c === 'tags' ? JSON.stringify(v.tags) : c === 'severity' ? v.severity || 'info' : c === 'confidence' ? v.confidence || 'Certain' : src[c];
  }
  return out;
}

/** New rows take their workspace's org (migration 007): one indexed lookup inside the INSERT. Named parameters: vulnParams + now. */
export const VULN_INSERT_SQL = `INSERT INTO vulnerabilities (${VULN_COLUMNS.join(', ')}, created_at, updated_at, last_seen_at, org_uuid)
  VALUES (${VULN_COLUMNS.map((c) => `@${c}`).join(', ')}, @now, @now, @now, ${orgOfWorkspaceSql('@workspace')}) RETURNING *`;

/** The columns a merge rewrites. */
export const VULN_UPDATE_COLUMNS: readonly string[] = ['severity', 'tags', ...TEXT_FIELDS, ...VOLATILE_FIELDS];

/** The normalised rows of an import, or a validation error naming every row without an identifier. */
export function vulnBatch(workspace: string, rows: VulnInput[]): VulnValues[] {
  if (!workspace) throw errors.workspaceRequired();
  const values = rows.map((r) => normalizeVuln(workspace, r, true));
  // Without an identifier every finding on an asset would collapse into one fingerprint.
  const issues = values.flatMap((v, i) => (v.template_id === '' && v.vuln_info === '' ? [`rows[${i}].vuln_info: required (or template_id)`] : []));
  if (issues.length > 0) throw errors.validation(issues.join('; '));
  return values;
}

const sevList = (filter: VulnListFilter) => [...new Set(filter.severity?.map((s) => s.trim().toLowerCase()).filter(Boolean))];

/** The filters of `list`; `like` is the engine's case-insensitive LIKE. */
export function vulnListWhere(filter: VulnListFilter, like: 'LIKE' | 'ILIKE'): Where {
  const where = new Where().eq('workspace', filter.workspace).in('severity', sevList(filter)).eq('confidence', filter.confidence);
  if (filter.org_uuid !== undefined) {
    const org = orgCondition(filter.org_uuid, filter.workspace !== undefined);
    where.add(org.clause, ...org.params);
  }
  if (filter.asset_value) where.add(`asset_value ${like} ? ESCAPE '\\'`, likeContains(filter.asset_value));
  return where;
}

/**
 * The query of a list's exact total (one row, column n) from the trigger-kept counters, or
 * undefined when it must be counted (confidence or asset filters): counting 50,000 index entries
 * per request cost 10-30 ms at a million findings. Within an org: sums of the counters of the
 * org's workspaces (their rows share the org).
 */
export function vulnTotalSql(filter: VulnListFilter): { sql: string; params: unknown[] } | undefined {
  if (filter.confidence !== undefined || filter.asset_value) return undefined;
  const severities = sevList(filter);
  const known = severities.filter((s) => (SEVERITIES as readonly string[]).includes(s));
  if (severities.length > 0 && known.length === 0) return { sql: 'SELECT 0 AS n', params: [] };
  const sum = severities.length === 0 ? 'total_vulns' : known.map((s) => `vuln_${s}`).join(' + ');
  if (filter.org_uuid !== undefined) {
    const where = new Where().oneOf('org_uuid', filter.org_uuid).eq('name', filter.workspace);
    return { sql: `SELECT SUM(${sum}) AS n FROM workspaces ${where}`, params: where.params };
  }
  if (filter.workspace !== undefined) return { sql: `SELECT ${sum} AS n FROM workspaces WHERE name = ?`, params: [filter.workspace] };
  const names = severities.length === 0 ? ['vulns.total'] : known.map((s) => `vulns.${s}`);
  return { sql: `SELECT SUM(value) AS n FROM counters WHERE name IN (${names.map(() => '?').join(', ')})`, params: names };
}

/** The query of `summary`: per-severity sums (one row) or the global counters (name, value rows). */
export function vulnSummarySql(workspace: string | undefined, org: OrgFilter | undefined): { sql: string; params: unknown[]; shape: 'row' | 'counters' } {
  const cols = 'SUM(vuln_critical) AS critical, SUM(vuln_high) AS high, SUM(vuln_medium) AS medium, SUM(vuln_low) AS low, SUM(vuln_info) AS info, SUM(total_vulns) AS total';
  if (org !== undefined || workspace !== undefined) {
    const where = new Where().oneOf('org_uuid', org).eq('name', workspace);
    return { sql: `SELECT ${cols} FROM workspaces ${where}`, params: where.params, shape: 'row' };
  }
  return { sql: `SELECT name, value FROM counters WHERE name LIKE 'vulns.%'`, params: [], shape: 'counters' };
}

/** The summary from the rows of vulnSummarySql. */
export function toVulnSummary(shape: 'row' | 'counters', rows: Row[]): VulnSummary {
  const by: Record<string, unknown> = shape === 'row' ? (rows[0] ?? {}) : Object.fromEntries(rows.map((r) => [String(r.name).slice('vulns.'.length), r.value]));
  const n = (k: string) => Number(by[k] ?? 0);
  return { critical: n('critical'), high: n('high'), medium: n('medium'), low: n('low'), info: n('info'), total: n('total') };
}

/** Creates the vulnerabilities repository on one connection. */
export function createVulnsRepo(db: Db, q: StatementCache): VulnsRepo {
  const insertSql = VULN_INSERT_SQL;
  // The batch insert: positional parameters (VULN_COLUMNS, then created/updated/last seen and the
  // org, looked up once per batch) and only the id back.
  const batchInsertSql = `INSERT INTO vulnerabilities (${VULN_COLUMNS.join(', ')}, created_at, updated_at, last_seen_at, org_uuid)
    VALUES (${VULN_COLUMNS.map(() => '?').join(', ')}, ?, ?, ?, ?) RETURNING id`;
  const updateSql = `UPDATE vulnerabilities SET ${VULN_UPDATE_COLUMNS.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @updated_at, last_seen_at = @now WHERE id = @id`;
  const one = (t: { sql: string; params: unknown[] }) => q(t.sql).get(...t.params) as Row | undefined;
  const all = (t: { sql: string; params: unknown[] }) => q(t.sql).all(...t.params) as Row[];

  return {
    create(input) {
      if (!input.workspace || typeof input.workspace !== 'string') throw errors.workspaceRequired();
      const row = q(insertSql).get({ ...vulnParams(vulnWithDefaults(normalizeVuln(input.workspace, input, false))), now: nowIso() }) as Row;
      return mapVuln(row);
    },

    upsertMany(workspace, rows, now = nowIso()) {
      const values = vulnBatch(workspace, rows);
      const result: UpsertResult = { new: 0, updated: 0, unchanged: 0, ids: [], newIds: [], updatedIds: [] };
      const seen = new Set<number>();
      inTransaction(db, () => {
        // The org of new rows, read inside the write transaction (as the single insert's subquery does).
        const org = (q(`SELECT ${orgOfWorkspaceSql('?')} AS org`).get(workspace) as { org: string }).org;
        const insert = q(batchInsertSql);
        for (const v of values) {
          const row = q('SELECT * FROM vulnerabilities WHERE fingerprint = ?').get(v.fingerprint) as Row | undefined;
          if (!row) {
            const p = vulnPositional(v);
            p.push(now, now, now, org);
            const { id } = insert.get(p) as { id: number };
            result.new++;
            result.ids.push(id);
            result.newIds.push(id);
            seen.add(id);
            continue;
          }
          const old = mapVuln(row);
          const { merged, changes, volatileChanged } = mergeVuln(old, v);
          const changed = changes.length > 0;
          result.ids.push(old.id);
          if (changed || volatileChanged) {
            q(updateSql).run({ ...vulnParams(merged), id: old.id, now, updated_at: changed ? now : old.updated_at });
            recordChanges(q, 'vuln_history', old.id, workspace, changes, now);
          } else {
            q('UPDATE vulnerabilities SET last_seen_at = ? WHERE id = ?').run(now, old.id);
          }
          if (changed && !seen.has(old.id)) {
            result.updated++;
            result.updatedIds.push(old.id);
            seen.add(old.id);
          } else {
            result.unchanged++;
          }
        }
      });
      return result;
    },

    touchedSince(workspace, since, limit, afterId = 0) {
      const rows = q('SELECT * FROM vulnerabilities WHERE id > ? AND workspace = ? AND (updated_at >= ? OR last_seen_at >= ?) ORDER BY id LIMIT ?').all(afterId, workspace, since, since, limit) as Row[];
      return rows.map(mapVuln);
    },

    get(id) {
      const row = q('SELECT * FROM vulnerabilities WHERE id = ?').get(id) as Row | undefined;
      return row ? mapVuln(row) : undefined;
    },

    delete(id) {
      return q('DELETE FROM vulnerabilities WHERE id = ?').run(id).changes > 0;
    },

    list(filter, page) {
      const t = vulnTotalSql(filter);
      const total = t && (() => Number(one(t)?.n ?? 0));
      return listPage(db, q, { table: 'vulnerabilities', where: vulnListWhere(filter, 'LIKE'), orderBy: 'created_at DESC, id DESC', map: mapVuln, total }, page);
    },

    summary(workspace, orgUuid) {
      const t = vulnSummarySql(workspace, orgUuid);
      return toVulnSummary(t.shape, all(t));
    },

    ...diffWindowQueries<VulnRecord, VulnBrief>(q, 'vulnerabilities', 'vuln_history', mapVuln, VULN_BRIEF),

  };
}
