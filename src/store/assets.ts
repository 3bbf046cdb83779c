/**
 * The `assets` table. Imports merge into the row with the same (workspace, asset_value, url):
 * incoming non-empty strings, non-zero numbers and non-empty arrays win, booleans are OR-ed, and
 * updated_at only moves when a meaningful field changed, which is what asset diffs rely on.
 */
import { errors } from '../errors.js';
import {
  bit,
  inTransaction,
  likeContains,
  listPage,
  nowIso,
  parseStringArray,
  toInt,
  toStringArray,
  toText,
  Where,
  type Db,
  type Row,
  type StatementCache,
} from './sql.js';
import type { ListResult, Page, UpsertResult } from './types.js';
import { diffWindowQueries, recordChanges, sameValue, type FieldChange, type HistoryRecord } from './field-history.js';
import { orgCondition, orgOfWorkspaceSql } from './org-constants.js';
import type { OrgFilter } from './org-constants.js';

export interface AssetRecord {
  id: number;
  workspace: string;
  asset_value: string;
  url: string;
  input: string;
  scheme: string;
  method: string;
  path: string;
  status_code: number;
  content_type: string;
  content_length: number;
  title: string;
  words: number;
  lines: number;
  host_ip: string;
  a: string[];
  tls: string;
  asset_type: string;
  tech: string[];
  time: string;
  remarks: string;
  source: string;
  is_cdn: boolean;
  is_cloud: boolean;
  is_waf: boolean;
  raw_json_data: string;
  /** Open ports as `port/proto` (migration 013). */
  open_ports: string[];
  /** Service details of a port-scan record, JSON text (migration 013). */
  port_json_data: string;
  created_at: string;
  updated_at: string;
  last_seen_at: string;
  /** The org of the asset's workspace (migration 007). */
  org_uuid?: string;
}

/** An asset as importers and callers provide it; values are coerced, since they often come from tool output. */
export type AssetInput = { asset_value: string } & Partial<
  Omit<AssetRecord, 'id' | 'workspace' | 'asset_value' | 'created_at' | 'updated_at' | 'last_seen_at' | 'org_uuid'>
>;

export interface AssetListFilter {
  workspace?: string;
  asset_type?: string;
  status_code?: number;
  /** Substring of asset_value, url, title or host_ip. */
  search?: string;
  /** Only rows of this org (uuid). */
  org_uuid?: OrgFilter;
}

export interface AssetUpsertOptions {
  /**
   * Match on (workspace, asset_value) when no row has the same url too (the reference's quick and
   * partial imports): the input merges into the oldest row of that value, keeping its url.
   */
  matchByValue?: boolean;
}

/** The columns of an asset that a diff lists as added or removed. */
export type AssetBrief = Pick<AssetRecord, 'id' | 'asset_value' | 'asset_type' | 'url' | 'status_code' | 'created_at' | 'last_seen_at'>;
export const ASSET_BRIEF = ['id', 'asset_value', 'asset_type', 'url', 'status_code', 'created_at', 'last_seen_at'] as const;

export interface AssetsRepo {
  /**
   * Inserts or merges rows in one transaction; see the module comment for the merge rules. Every
   * meaningful field a merge changes is recorded in asset_history (old and new value).
   */
  upsertMany(workspace: string, rows: AssetInput[], now?: string, opts?: AssetUpsertOptions): UpsertResult;
  /** Plain insert (no merge); throws a conflict error when (workspace, asset_value, url) exists. */
  insert(workspace: string, row: AssetInput, now?: string): AssetRecord;
  get(id: number): AssetRecord | undefined;
  /**
   * Rows of `workspace` updated or last seen at or after `since` (ISO time), by id, at most
   * `limit`, with an id above `afterId` (the next page; results a worker ships).
   */
  touchedSince(workspace: string, since: string, limit: number, afterId?: number): AssetRecord[];
  /** Filtered page, newest first (created_at DESC, id DESC). */
  list(filter: AssetListFilter, page: Page): ListResult<AssetRecord>;
  delete(id: number): boolean;
  /** Rows of `workspace` created before `from` whose updated_at lies in [from, to]. */
  changedSince(workspace: string, from: string, to: string, limit?: number): AssetRecord[];
  /** Alias of changedSince, named like the vulnerability query. */
  changedBetween(workspace: string, from: string, to: string, limit?: number): AssetRecord[];
  /** Rows of `workspace` created in [from, to] (the columns a diff lists). */
  addedBetween(workspace: string, from: string, to: string, limit?: number): AssetBrief[];
  /** Rows of `workspace` created and last seen before `from` (the columns a diff lists). */
  removedBefore(workspace: string, from: string, limit?: number): AssetBrief[];
  /** Exact sizes of the three diff sets (indexed counts), for bounded diff listings. */
  diffCounts(workspace: string, from: string, to: string): { added: number; removed: number; changed: number };
  /** created_at of the workspace's oldest row, or undefined when it has none. */
  oldestCreatedAt(workspace: string): string | undefined;
  /** Field changes of `workspace` recorded in [from, to], oldest first (row_id = asset id). */
  history(workspace: string, from: string, to: string, limit?: number): HistoryRecord[];
}

const STRING_FIELDS = ['input', 'scheme', 'method', 'path', 'content_type', 'title', 'host_ip', 'tls', 'asset_type', 'remarks', 'source', 'port_json_data'] as const;
const NUMBER_FIELDS = ['status_code', 'content_length', 'words', 'lines'] as const;
const ARRAY_FIELDS = ['a', 'tech', 'open_ports'] as const;
const BOOL_FIELDS = ['is_cdn', 'is_cloud', 'is_waf'] as const;
/** Refreshed on every import but not a "change": response time and raw JSON differ on every scan. */
const VOLATILE_FIELDS = ['time', 'raw_json_data'] as const;

export type AssetValues = Omit<AssetRecord, 'id' | 'created_at' | 'updated_at' | 'last_seen_at' | 'org_uuid'>;
export const ASSET_COLUMNS = [
  'workspace', 'asset_value', 'url', ...STRING_FIELDS, ...NUMBER_FIELDS, ...ARRAY_FIELDS, ...BOOL_FIELDS, ...VOLATILE_FIELDS,
] as const;

/** Maps an assets row to its record. */
export function mapAsset(row: Row): AssetRecord {
  return {
    ...(row as unknown as AssetRecord),
    a: parseStringArray(row.a),
    tech: parseStringArray(row.tech),
    open_ports: parseStringArray(row.open_ports),
    is_cdn: row.is_cdn === 1,
    is_cloud: row.is_cloud === 1,
    is_waf: row.is_waf === 1,
  };
}

/** Coerces one untrusted input row into column values. */
export function normalizeAsset(workspace: string, input: AssetInput): AssetValues {
  const out = { workspace, asset_value: toText(input.asset_value).trim(), url: toText(input.url).trim() } as AssetValues;
  const src = input as Record<string, unknown>;
  const dst = out as unknown as Record<string, unknown>;
  for (const k of [...STRING_FIELDS, ...VOLATILE_FIELDS]) dst[k] = toText(src[k]);
  for (const k of NUMBER_FIELDS) dst[k] = toInt(src[k]);
  for (const k of ARRAY_FIELDS) dst[k] = toStringArray(src[k]);
  dst.open_ports = portUnion([], dst.open_ports as string[]);
  for (const k of BOOL_FIELDS) dst[k] = src[k] === true || src[k] === 1 || src[k] === 'true';
  return out;
}

/** Merges `incoming` over `existing`; lists the meaningful fields that changed and whether a volatile one did. */
export function mergeAsset(existing: AssetRecord, incoming: AssetValues): { merged: AssetValues; changes: FieldChange[]; volatileChanged: boolean } {
  const merged = { ...incoming, url: existing.url } as unknown as Record<string, unknown>;
  const old = existing as unknown as Record<string, unknown>;
  const inc = incoming as unknown as Record<string, unknown>;
  const changes: FieldChange[] = [];
  let volatileChanged = false;
  const note = (k: string) => {
    if (sameValue(merged[k], old[k])) return;
    if ((VOLATILE_FIELDS as readonly string[]).includes(k)) volatileChanged = true;
    else changes.push({ field: k, old_value: old[k], new_value: merged[k] });
  };
  for (const k of [...STRING_FIELDS, ...VOLATILE_FIELDS]) {
    merged[k] = inc[k] !== '' ? inc[k] : old[k];
    note(k);
  }
  for (const k of NUMBER_FIELDS) {
    merged[k] = inc[k] !== 0 ? inc[k] : old[k];
    note(k);
  }
  for (const k of ARRAY_FIELDS) {
    merged[k] = (inc[k] as string[]).length > 0 ? inc[k] : old[k];
    if (k === 'open_ports') merged[k] = portUnion(old[k] as string[], inc[k] as string[]);
    note(k);
  }
  for (const k of BOOL_FIELDS) {
    merged[k] = Boolean(inc[k]) || Boolean(old[k]);
    note(k);
  }
  return { merged: merged as unknown as AssetValues, changes, volatileChanged };
}

/**
 * Open ports accumulate: scanners report one port per record (masscan, naabu) or a subset of ports
 * per run, so a later record must not drop the ports an earlier one found. The per-port assets
 * (asset_type `port`) carry last_seen_at, which is what tells a port that closed.
 */
function portUnion(old: string[], incoming: string[]): string[] {
  const all = [...new Set([...old, ...incoming])];
  return all.sort((a, b) => parseInt(a, 10) - parseInt(b, 10) || a.localeCompare(b));
}

/** Column values as bound parameters (JSON arrays, 0/1 booleans). */
export function assetParams(v: AssetValues): Record<string, unknown> {
  const p: Record<string, unknown> = { ...v };
  for (const k of ARRAY_FIELDS) p[k] = JSON.stringify(v[k]);
  for (const k of BOOL_FIELDS) p[k] = bit(v[k]);
  return p;
}

/** Column values in ASSET_COLUMNS order as positional parameters (JSON arrays, 0/1 booleans), without an intermediate object. */
export function assetPositional(v: AssetValues): unknown[] {
  const src = v as unknown as Record<string, unknown>;
  const out: unknown[] = new Array(ASSET_COLUMNS.length);
  for (let i = 0; i < ASSET_COLUMNS.length; i++) {
    const c = ASSET_COLUMNS[i]!;
    const x = src[c];
    out[i] = COLUMN_KIND[i] === 1 ? JSON.stringify(x) : COLUMN_KIND[i] === 2 ? bit(x as boolean) : x;
  }
  return out;
}

/** Per column of ASSET_COLUMNS: 0 stored as is, 1 a JSON array, 2 a 0/1 boolean. */
const COLUMN_KIND: readonly number[] = ASSET_COLUMNS.map((c) =>
  (ARRAY_FIELDS as readonly string[]).includes(c) ? 1 : (BOOL_FIELDS as readonly string[]).includes(c) ? 2 : 0,
);

/** New rows take their workspace's org (migration 007): one indexed lookup inside the INSERT. Named parameters: assetParams + now. */
export const ASSET_INSERT_SQL = `INSERT INTO assets (${ASSET_COLUMNS.join(', ')}, created_at, updated_at, last_seen_at, org_uuid)
  VALUES (${ASSET_COLUMNS.map((c) => `@${c}`).join(', ')}, @now, @now, @now, ${orgOfWorkspaceSql('@workspace')}) RETURNING id`;

/** The columns a merge rewrites (all but the identity of the row). */
export const ASSET_UPDATE_COLUMNS: readonly string[] = ASSET_COLUMNS.filter((c) => !['workspace', 'asset_value', 'url'].includes(c));

/** The normalised rows of an import, or a validation error naming every row without a value. */
export function assetBatch(workspace: string, rows: AssetInput[]): AssetValues[] {
  if (!workspace) throw errors.workspaceRequired();
  const values = rows.map((r) => normalizeAsset(workspace, r));
  const issues = values.flatMap((v, i) => (v.asset_value === '' ? [`rows[${i}].asset_value: required`] : []));
  if (issues.length > 0) throw errors.validation(issues.join('; '));
  return values;
}

/** One normalised row of a plain insert. */
export function assetOne(workspace: string, input: AssetInput): AssetValues {
  if (!workspace) throw errors.workspaceRequired();
  const v = normalizeAsset(workspace, input);
  if (v.asset_value === '') throw errors.validation('asset_value: required');
  return v;
}

/** The filters of `list`; `like` is the engine's case-insensitive LIKE (SQLite LIKE, PostgreSQL ILIKE). */
export function assetListWhere(filter: AssetListFilter, like: 'LIKE' | 'ILIKE'): Where {
  const where = new Where().eq('workspace', filter.workspace).eq('asset_type', filter.asset_type).eq('status_code', filter.status_code);
  if (filter.org_uuid !== undefined) {
    const org = orgCondition(filter.org_uuid, filter.workspace !== undefined);
    where.add(org.clause, ...org.params);
  }
  if (filter.search) {
    const p = likeContains(filter.search);
    where.add(`(${['asset_value', 'url', 'title', 'host_ip'].map((c) => `${c} ${like} ? ESCAPE '\\'`).join(' OR ')})`, p, p, p, p);
  }
  return where;
}

/**
 * The query of a list's exact total from the trigger-kept counts (migrations 002 and 004), so
 * listing never counts a large table; undefined when the total must be counted (a search). Only
 * the rare status_code + asset_type combination is counted (through its covering index). Within
 * an org the totals are sums of the per-workspace counts of the org's workspaces (every row of a
 * workspace shares the org of its workspaces row, src/store/orgs.ts).
 */
export function assetTotalSql(f: AssetListFilter): { sql: string; params: unknown[] } | undefined {
  if (f.search) return undefined;
  const ws = f.workspace;
  const hasStatus = f.status_code !== undefined && f.status_code !== null;
  const hasType = f.asset_type !== undefined && f.asset_type !== null;
  const t = (sql: string, ...params: unknown[]) => ({ sql, params });
  if (f.org_uuid !== undefined) {
    if (hasStatus && hasType) return undefined;
    const where = new Where().oneOf('w.org_uuid', f.org_uuid).eq('w.name', ws);
    if (hasStatus) {
      where.eq('c.status_code', f.status_code);
      return t(`SELECT SUM(c.n) AS n FROM asset_status_counts c JOIN workspaces w ON w.name = c.workspace ${where}`, ...where.params);
    }
    if (hasType) {
      where.eq('c.asset_type', f.asset_type);
      return t(`SELECT SUM(c.n) AS n FROM asset_type_counts c JOIN workspaces w ON w.name = c.workspace ${where}`, ...where.params);
    }
    return t(`SELECT SUM(w.total_assets) AS n FROM workspaces w ${where}`, ...where.params);
  }
  if (hasStatus && hasType) {
    const where = new Where().eq('workspace', ws).eq('asset_type', f.asset_type).eq('status_code', f.status_code);
    return t(`SELECT COUNT(*) AS n FROM assets ${where}`, ...where.params);
  }
  if (hasStatus) {
    return ws === undefined
      ? t('SELECT SUM(n) AS n FROM asset_status_counts WHERE status_code = ?', f.status_code)
      : t('SELECT n FROM asset_status_counts WHERE workspace = ? AND status_code = ?', ws, f.status_code);
  }
  if (hasType) {
    return ws === undefined
      ? t('SELECT SUM(n) AS n FROM asset_type_counts WHERE asset_type = ?', f.asset_type)
      : t('SELECT n FROM asset_type_counts WHERE workspace = ? AND asset_type = ?', ws, f.asset_type);
  }
  return ws === undefined ? t(`SELECT value AS n FROM counters WHERE name = 'assets.total'`) : t('SELECT total_assets AS n FROM workspaces WHERE name = ?', ws);
}

/** Creates the assets repository on one connection. */
export function createAssetsRepo(db: Db, q: StatementCache): AssetsRepo {
  const insertSql = ASSET_INSERT_SQL;
  // The batch insert: positional parameters (ASSET_COLUMNS, then created/updated/last seen and the
  // org, looked up once per batch), which better-sqlite3 binds faster than named ones.
  const batchInsertSql = `INSERT INTO assets (${ASSET_COLUMNS.join(', ')}, created_at, updated_at, last_seen_at, org_uuid)
    VALUES (${ASSET_COLUMNS.map(() => '?').join(', ')}, ?, ?, ?, ?) RETURNING id`;
  const updateSql = `UPDATE assets SET ${ASSET_UPDATE_COLUMNS.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @updated_at, last_seen_at = @now WHERE id = @id`;

  const one = (t: { sql: string; params: unknown[] }) => Number((q(t.sql).get(...t.params) as { n: number | null } | undefined)?.n ?? 0);

  return {
    upsertMany(workspace, rows, now = nowIso(), opts = {}) {
      const values = assetBatch(workspace, rows);
      const result: UpsertResult = { new: 0, updated: 0, unchanged: 0, ids: [], newIds: [], updatedIds: [] };
      // A row repeated within one batch stays "new" (one discovered event), later copies count as unchanged.
      const seen = new Set<number>();
      inTransaction(db, () => {
        // The org of new rows, read inside the write transaction (as the single insert's subquery does).
        const org = (q(`SELECT ${orgOfWorkspaceSql('?')} AS org`).get(workspace) as { org: string }).org;
        const insert = q(batchInsertSql);
        for (const v of values) {
          let row = q('SELECT * FROM assets WHERE workspace = ? AND asset_value = ? AND url = ?').get(workspace, v.asset_value, v.url) as
            | Row
            | undefined;
          if (!row && opts.matchByValue) {
            row = q('SELECT * FROM assets WHERE workspace = ? AND asset_value = ? ORDER BY id ASC LIMIT 1').get(workspace, v.asset_value) as Row | undefined;
          }
          if (!row) {
            const p = assetPositional(v);
            p.push(now, now, now, org);
            const { id } = insert.get(p) as { id: number };
            result.new++;
            result.ids.push(id);
            result.newIds.push(id);
            seen.add(id);
            continue;
          }
          const existing = mapAsset(row);
          const { merged, changes, volatileChanged } = mergeAsset(existing, v);
          const changed = changes.length > 0;
          if (changed || volatileChanged) {
            q(updateSql).run({ ...assetParams(merged), id: existing.id, now, updated_at: changed ? now : existing.updated_at });
            recordChanges(q, 'asset_history', existing.id, workspace, changes, now);
          } else {
            q('UPDATE assets SET last_seen_at = ? WHERE id = ?').run(now, existing.id);
          }
          if (changed && !seen.has(existing.id)) {
            result.updated++;
            result.updatedIds.push(existing.id);
            seen.add(existing.id);
          } else {
            result.unchanged++;
          }
          result.ids.push(existing.id);
        }
      });
      return result;
    },

    insert(workspace, input, now = nowIso()) {
      const v = assetOne(workspace, input);
      const exists = q('SELECT id FROM assets WHERE workspace = ? AND asset_value = ? AND url = ?').get(workspace, v.asset_value, v.url);
      if (exists) throw errors.conflict(`asset already exists: ${v.asset_value}${v.url ? ` (${v.url})` : ''}`);
      const { id } = q(insertSql).get({ ...assetParams(v), now }) as { id: number };
      return mapAsset(q('SELECT * FROM assets WHERE id = ?').get(id) as Row);
    },

    touchedSince(workspace, since, limit, afterId = 0) {
      const rows = q('SELECT * FROM assets WHERE id > ? AND workspace = ? AND (updated_at >= ? OR last_seen_at >= ?) ORDER BY id LIMIT ?').all(afterId, workspace, since, since, limit) as Row[];
      return rows.map(mapAsset);
    },

    get(id) {
      const row = q('SELECT * FROM assets WHERE id = ?').get(id) as Row | undefined;
      return row ? mapAsset(row) : undefined;
    },

    list(filter, page) {
      const t = assetTotalSql(filter);
      return listPage(db, q, { table: 'assets', where: assetListWhere(filter, 'LIKE'), orderBy: 'created_at DESC, id DESC', map: mapAsset, total: t && (() => one(t)) }, page);
    },

    delete(id) {
      return q('DELETE FROM assets WHERE id = ?').run(id).changes > 0;
    },

    ...diffWindowQueries<AssetRecord, AssetBrief>(q, 'assets', 'asset_history', mapAsset, ASSET_BRIEF),

  };
}
