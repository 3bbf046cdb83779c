/**
 * Asset and vulnerability diffs: the /diff endpoints' time parsing and computation, the stored
 * diff snapshots (asset_diffs, vuln_diffs), and `recordRunDiff`, which the engine calls when a run
 * completes to store both diffs of the run's workspace over the run's own window.
 */
import { errors } from '../errors.js';
import { assetDiffReads, computeAssetDiff, computeVulnDiff, vulnDiffReads, type AssetDiff, type VulnDiff } from '../ingest/diff.js';
import { runReads } from '../store/reads.js';
import type { AsyncStore, DiffSnapshotInput, DiffSnapshotRecord, RunRecord } from '../store/index.js';
import { requireWorkspaceInScope, UNRESTRICTED, type Scope } from '../auth/scope.js';

export { computeAssetDiff, computeVulnDiff, type AssetDiff, type VulnDiff };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const NAIVE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}:\d{2}))?$/;

/**
 * Parses a diff bound: RFC 3339, Unix seconds, `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS` or
 * `YYYY-MM-DDTHH:MM:SS` (naive times are UTC). Returns an ISO timestamp, or undefined when the
 * text is none of these (or names an impossible date such as Feb 30).
 */
export function parseDiffTime(text: string): string | undefined {
  const t = text.trim();
  let ms = NaN;
  let datePart = '';
  if (RFC3339.test(t)) {
    ms = Date.parse(t.replace(' ', 'T'));
  } else if (/^\d{1,12}$/.test(t)) {
    ms = Number(t) * 1000;
  } else {
    const m = NAIVE.exec(t);
    if (m) {
      datePart = m[1]!;
      ms = Date.parse(`${m[1]}T${m[2] ?? '00:00:00'}Z`);
    }
  }
  if (!Number.isFinite(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  // Date.parse rolls impossible days over (2026-02-30 → March 2); such input is an error.
  if (datePart && iso.slice(0, 10) !== datePart) return undefined;
  return iso;
}

export interface DiffQuery {
  workspace?: string;
  from?: string;
  to?: string;
}

/** Validates the /diff query in the reference's order: workspace, from, then both formats. */
export function diffWindow(q: DiffQuery, now = new Date()): { workspace: string; from: string; to: string } {
  const workspace = q.workspace?.trim() ?? '';
  if (!workspace) throw errors.workspaceParamRequired();
  if (!q.from?.trim()) throw errors.fromParamRequired();
  const from = parseDiffTime(q.from);
  if (!from) throw errors.invalidTimeFormat('from');
  let to = now.toISOString();
  if (q.to !== undefined && q.to.trim() !== '') {
    const parsed = parseDiffTime(q.to);
    if (!parsed) throw errors.invalidTimeFormat('to');
    to = parsed;
  }
  return { workspace, from, to };
}

/** GET /assets/diff. */
export async function assetDiff(app: { repos: AsyncStore }, q: DiffQuery, scope: Scope = UNRESTRICTED): Promise<AssetDiff> {
  const w = diffWindow(q);
  await requireWorkspaceInScope(app.repos, scope, w.workspace);
  return runReads(assetDiffReads(w.workspace, w.from, w.to), app.repos);
}

/** GET /vulnerabilities/diff. */
export async function vulnDiff(app: { repos: AsyncStore }, q: DiffQuery, scope: Scope = UNRESTRICTED): Promise<VulnDiff> {
  const w = diffWindow(q);
  await requireWorkspaceInScope(app.repos, scope, w.workspace);
  return runReads(vulnDiffReads(w.workspace, w.from, w.to), app.repos);
}

/** GET /assets/diffs: stored diff snapshots, newest first. */
export function listAssetDiffs(app: { repos: AsyncStore }, filter: { workspace?: string }, page: { offset: number; limit: number }, scope: Scope = UNRESTRICTED) {
  return app.repos.assetDiffs.list({ workspace: filter.workspace || undefined, org_uuid: scope.orgs ?? undefined }, page);
}

/** The stored form of a computed diff; `truncated` is kept when the lists were cut (the totals stay exact). */
function snapshotOf(diff: AssetDiff | VulnDiff, runId: number): DiffSnapshotInput {
  const { added, removed, changed, truncated } = diff;
  return {
    workspace_name: diff.workspace_name,
    from_time: diff.from_time,
    to_time: diff.to_time,
    total_added: diff.summary.total_added,
    total_removed: diff.summary.total_removed,
    total_changed: diff.summary.total_changed,
    diff_data: JSON.stringify({ added, removed, changed, ...(truncated ? { truncated } : {}) }),
    run_id: runId,
  };
}

/** The two snapshots stored for a completed run. */
export interface RunDiffSnapshots {
  assets: DiffSnapshotRecord;
  vulns: DiffSnapshotRecord;
}

/**
 * Stores the asset and the vulnerability diff of a run's workspace over [started_at, completed_at]
 * (now while it still runs) as an asset_diffs and a vuln_diffs row linked to the run. Both diffs are
 * bounded (DIFF_ITEM_LIMIT items per list, exact totals) and computed before the write
 * transaction, which only inserts the two rows. (The diffs are read programs of src/ingest/diff.ts,
 * run on the async store.) Returns undefined for runs without a workspace or
 * that never started. Meant to be called by the engine right after a run completes, with the
 * run's row as its terminal write returned it (`known`; read when absent).
 *
 * A workspace holding no row of a kind (its trigger-kept counter is 0) has nothing added, removed
 * or changed of that kind: its diff is the empty one, stored without reading the table.
 */
export async function recordRunDiff(app: { repos: AsyncStore }, runId: number, known?: RunRecord, until?: string): Promise<RunDiffSnapshots | undefined> {
  const run = known?.id === runId ? known : await app.repos.runs.get(runId);
  if (!run) throw errors.runNotFound();
  if (!run.workspace || !run.started_at) return undefined;
  // `until`: a later end of the window (a master recording a worker's run, whose rows arrived
  // after the worker's completed_at).
  const end = run.completed_at ?? new Date().toISOString();
  const to = until && until > end ? until : end;
  const ws = await app.repos.workspaces.get(run.workspace);
  const empty = { workspace_name: run.workspace, from_time: run.started_at, to_time: to, added: [], removed: [], changed: [], summary: { total_added: 0, total_removed: 0, total_changed: 0 } };
  const assets = snapshotOf(ws?.total_assets === 0 ? empty : await runReads(assetDiffReads(run.workspace, run.started_at, to), app.repos), run.id);
  const vulns = snapshotOf(ws?.total_vulns === 0 ? empty : await runReads(vulnDiffReads(run.workspace, run.started_at, to), app.repos), run.id);
  return app.repos.assetDiffs.insertRunPair(assets, vulns);
}
