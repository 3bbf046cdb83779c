/**
 * Asset and vulnerability diffs of a workspace over a window [from, to] (reference §3.10), with
 * field-level changes taken from the history tables: each changed row lists
 * `{ field, old_value, new_value }` — the value before the first change in the window and after
 * the last one; a field that changed and changed back is not listed.
 *
 * added   = rows created in the window;
 * removed = rows created before `from` and not seen since (last_seen_at < from);
 * changed = rows created before `from` with a recorded change in the window (or, for rows older
 *           than the history tables, an updated_at in the window).
 */
import type { AssetRecord, Store, VulnRecord } from '../store/index.js';
import { read, runReadsSync, type Reads } from '../store/reads.js';
import type { FieldChange, HistoryRecord } from '../store/field-history.js';

export interface AssetDiff {
  workspace_name: string;
  from_time: string;
  to_time: string;
  added: { id: number; asset_value: string; asset_type: string; url: string; status_code: number; created_at: string }[];
  removed: { id: number; asset_value: string; asset_type: string; url: string; last_seen_at: string }[];
  changed: { asset_id: number; asset_value: string; url: string; changes: FieldChange[] }[];
  summary: { total_added: number; total_removed: number; total_changed: number };
  /** Set when a list was cut at the item limit (the summary's totals stay exact). */
  truncated?: boolean;
}

export interface VulnDiff {
  workspace_name: string;
  from_time: string;
  to_time: string;
  added: { id: number; vuln_info: string; asset_value: string; severity: string; template_id: string; created_at: string }[];
  removed: { id: number; vuln_info: string; asset_value: string; severity: string; template_id: string; last_seen_at: string }[];
  changed: { vuln_id: number; vuln_info: string; asset_value: string; changes: FieldChange[] }[];
  summary: { total_added: number; total_removed: number; total_changed: number };
  /** Set when a list was cut at the item limit (the summary's totals stay exact). */
  truncated?: boolean;
}

/** Net change per field of each row: first old value, last new value; unchanged fields dropped. */
function netChanges(history: HistoryRecord[]): Map<number, FieldChange[]> {
  const perRow = new Map<number, Map<string, FieldChange>>();
  for (const h of history) {
    let fields = perRow.get(h.row_id);
    if (!fields) perRow.set(h.row_id, (fields = new Map()));
    const seen = fields.get(h.field);
    if (seen) seen.new_value = h.new_value;
    else fields.set(h.field, { field: h.field, old_value: h.old_value, new_value: h.new_value });
  }
  const out = new Map<number, FieldChange[]>();
  for (const [id, fields] of perRow) {
    out.set(id, [...fields.values()].filter((c) => JSON.stringify(c.old_value) !== JSON.stringify(c.new_value)));
  }
  return out;
}

/** Items listed per diff set; totals stay exact (indexed counts) and `truncated` says so. */
export const DIFF_ITEM_LIMIT = 10_000;

/**
 * Adds the summary. Within the limit the totals are the list lengths (a field that changed and
 * changed back is not a change); beyond it the lists are cut and the totals come from the counts.
 */
function withSummary<T extends { added: unknown[]; removed: unknown[]; changed: unknown[] }>(
  diff: T & { workspace_name: string; from_time: string; to_time: string },
  counts: { added: number; removed: number; changed: number },
  limit: number,
): T & { summary: { total_added: number; total_removed: number; total_changed: number }; truncated?: boolean } {
  const truncated = counts.added > limit || counts.removed > limit || counts.changed > limit;
  return {
    ...diff,
    summary: truncated
      ? { total_added: counts.added, total_removed: counts.removed, total_changed: counts.changed }
      : { total_added: diff.added.length, total_removed: diff.removed.length, total_changed: diff.changed.length },
    ...(truncated ? { truncated: true } : {}),
  };
}

/** Rows changed in the window: those with history (created before `from`) and legacy rows without history. */
function* changedRows<R extends { id: number; created_at: string }>(
  byUpdate: R[],
  history: HistoryRecord[],
  from: string,
  get: (id: number) => Reads<R | undefined>,
): Reads<{ row: R; changes: FieldChange[] }[]> {
  const net = netChanges(history);
  const rows = new Map<number, R>(byUpdate.map((r) => [r.id, r]));
  for (const id of net.keys()) {
    if (rows.has(id)) continue;
    const r = yield* get(id);
    if (r && r.created_at < from) rows.set(id, r);
  }
  const out: { row: R; changes: FieldChange[] }[] = [];
  for (const r of [...rows.values()].sort((a, b) => a.id - b.id)) {
    const changes = net.get(r.id);
    if (changes === undefined) out.push({ row: r, changes: [] });
    else if (changes.length > 0) out.push({ row: r, changes });
  }
  return out;
}

/** The asset diff of `workspace` over [from, to] (ISO timestamps), as a read program (src/store/reads.ts). */
export function* assetDiffReads(workspace: string, from: string, to: string, limit = DIFF_ITEM_LIMIT): Reads<AssetDiff> {
  const counts = yield* read((s) => s.assets.diffCounts(workspace, from, to));
  const added = (yield* read((s) => s.assets.addedBetween(workspace, from, to, limit))).map((a) => ({
    id: a.id, asset_value: a.asset_value, asset_type: a.asset_type, url: a.url, status_code: a.status_code, created_at: a.created_at,
  }));
  const removed = (yield* read((s) => s.assets.removedBefore(workspace, from, limit))).map((a) => ({
    id: a.id, asset_value: a.asset_value, asset_type: a.asset_type, url: a.url, last_seen_at: a.last_seen_at,
  }));
  const byUpdate = yield* read((s) => s.assets.changedBetween(workspace, from, to, limit));
  const history = yield* read((s) => s.assets.history(workspace, from, to, limit * 10));
  const changed = (yield* changedRows(byUpdate, history, from, (id) => read((s) => s.assets.get(id)))).map(({ row, changes }) => ({
    asset_id: row.id, asset_value: row.asset_value, url: row.url, changes,
  }));
  return withSummary({ workspace_name: workspace, from_time: from, to_time: to, added, removed, changed }, counts, limit);
}

/** The vulnerability diff of `workspace` over [from, to] (ISO timestamps), as a read program. */
export function* vulnDiffReads(workspace: string, from: string, to: string, limit = DIFF_ITEM_LIMIT): Reads<VulnDiff> {
  const counts = yield* read((s) => s.vulns.diffCounts(workspace, from, to));
  const added = (yield* read((s) => s.vulns.addedBetween(workspace, from, to, limit))).map((v) => ({
    id: v.id, vuln_info: v.vuln_info, asset_value: v.asset_value, severity: v.severity, template_id: v.template_id, created_at: v.created_at,
  }));
  const removed = (yield* read((s) => s.vulns.removedBefore(workspace, from, limit))).map((v) => ({
    id: v.id, vuln_info: v.vuln_info, asset_value: v.asset_value, severity: v.severity, template_id: v.template_id, last_seen_at: v.last_seen_at,
  }));
  const byUpdate = yield* read((s) => s.vulns.changedBetween(workspace, from, to, limit));
  const history = yield* read((s) => s.vulns.history(workspace, from, to, limit * 10));
  const changed = (yield* changedRows(byUpdate, history, from, (id) => read((s) => s.vulns.get(id)))).map(({ row, changes }) => ({
    vuln_id: row.id, vuln_info: row.vuln_info, asset_value: row.asset_value, changes,
  }));
  return withSummary({ workspace_name: workspace, from_time: from, to_time: to, added, removed, changed }, counts, limit);
}

/** The asset diff on the synchronous store (workflow functions, tests). */
export function computeAssetDiff(store: Store, workspace: string, from: string, to: string, limit = DIFF_ITEM_LIMIT): AssetDiff {
  return runReadsSync(assetDiffReads(workspace, from, to, limit), store);
}

/** The vulnerability diff on the synchronous store (workflow functions, tests). */
export function computeVulnDiff(store: Store, workspace: string, from: string, to: string, limit = DIFF_ITEM_LIMIT): VulnDiff {
  return runReadsSync(vulnDiffReads(workspace, from, to, limit), store);
}
