/**
 * The data of a workspace report, read from the store: a summary, the assets by type, the findings
 * by severity with their evidence, and the changes since a point in time (the asset and
 * vulnerability diffs, src/ingest/diff.ts). Lists are capped so a report of a million assets stays
 * a readable file; every count stays exact and says how many rows a list leaves out.
 */
import type { AssetRecord, RunRecord, Store, VulnRecord } from '../store/index.js';
import { SEVERITIES } from '../store/index.js';
import { assetDiffReads, vulnDiffReads, type AssetDiff, type VulnDiff } from '../ingest/diff.js';
import { read, runReadsSync, type Reads } from '../store/reads.js';

/** Rows listed per asset type, findings per severity and items per change list. */
export const REPORT_LIMITS = { assetsPerType: 1000, findingsPerSeverity: 1000, changes: 500 } as const;

export type ReportAsset = Pick<
  AssetRecord,
  'asset_value' | 'url' | 'status_code' | 'title' | 'tech' | 'host_ip' | 'open_ports' | 'remarks' | 'source' | 'tls' | 'last_seen_at'
>;
export type ReportFinding = Pick<
  VulnRecord,
  'vuln_info' | 'vuln_title' | 'vuln_desc' | 'vuln_poc' | 'severity' | 'confidence' | 'asset_value' | 'matcher_name' | 'tags' | 'created_at' | 'last_seen_at'
>;

export interface ReportData {
  workspace: string;
  generated_at: string;
  /** The newest run of the workspace, when it has one. */
  last_run?: Pick<RunRecord, 'run_uuid' | 'workflow_name' | 'target' | 'status' | 'started_at' | 'completed_at'>;
  summary: { assets: number; assets_by_type: Record<string, number>; findings: number; findings_by_severity: Record<string, number> };
  assets_by_type: { type: string; total: number; items: ReportAsset[] }[];
  findings_by_severity: { severity: string; total: number; items: ReportFinding[] }[];
  /** What changed from `since` until the report: added, removed (not seen since) and changed rows. */
  changes: { since: string; assets: AssetDiff; findings: VulnDiff };
}

export interface ReportOptions {
  /** Start of the change window (ISO); default: start of the newest run of the workspace. */
  since?: string;
  /** A run not to count as "the previous run" (the report module's own run). */
  excludeRunId?: number;
}

/** Start of the newest run of the workspace (other than `exclude`), else the workspace's beginning. */
export function* defaultSinceReads(workspace: string, exclude?: number): Reads<string> {
  const runs = (yield* read((s) => s.runs.list({ workspace }, { offset: 0, limit: 20 }))).data;
  const run = runs.find((r) => r.id !== exclude && r.started_at);
  if (run?.started_at) return run.started_at;
  const ws = yield* read((s) => s.workspaces.get(workspace));
  const firstAsset = yield* read((s) => s.assets.oldestCreatedAt(workspace));
  const firstVuln = yield* read((s) => s.vulns.oldestCreatedAt(workspace));
  const starts = [ws?.created_at, firstAsset, firstVuln].filter((t): t is string => Boolean(t));
  return starts.sort()[0] ?? new Date().toISOString();
}

/** defaultSinceReads on the synchronous store. */
export function defaultSince(store: Store, workspace: string, exclude?: number): string {
  return runReadsSync(defaultSinceReads(workspace, exclude), store);
}

function asset(a: AssetRecord): ReportAsset {
  return {
    asset_value: a.asset_value, url: a.url, status_code: a.status_code, title: a.title, tech: a.tech, host_ip: a.host_ip,
    open_ports: a.open_ports ?? [], remarks: a.remarks, source: a.source, tls: a.tls, last_seen_at: a.last_seen_at,
  };
}

function finding(v: VulnRecord): ReportFinding {
  return {
    vuln_info: v.vuln_info, vuln_title: v.vuln_title, vuln_desc: v.vuln_desc, vuln_poc: v.vuln_poc, severity: v.severity, confidence: v.confidence,
    asset_value: v.asset_value, matcher_name: v.matcher_name, tags: v.tags, created_at: v.created_at, last_seen_at: v.last_seen_at,
  };
}

/** Reads the report data of `workspace` (a read program: src/store/reads.ts). */
export function* reportDataReads(workspace: string, opts: ReportOptions = {}): Reads<ReportData> {
  const now = new Date().toISOString();
  const types = (yield* read((s) => s.assetStats.facets(workspace))).asset_types;
  const assetsByType: ReportData['assets_by_type'] = [];
  for (const type of types) {
    const page = yield* read((s) => s.assets.list({ workspace, asset_type: type }, { offset: 0, limit: REPORT_LIMITS.assetsPerType }));
    assetsByType.push({ type, total: page.total, items: page.data.map(asset).sort((a, b) => `${a.asset_value} ${a.url}`.localeCompare(`${b.asset_value} ${b.url}`)) });
  }
  const findings: ReportData['findings_by_severity'] = [];
  for (const severity of SEVERITIES) {
    const page = yield* read((s) => s.vulns.list({ workspace, severity: [severity] }, { offset: 0, limit: REPORT_LIMITS.findingsPerSeverity }));
    findings.push({ severity, total: page.total, items: page.data.map(finding).sort((a, b) => `${a.vuln_info} ${a.asset_value}`.localeCompare(`${b.vuln_info} ${b.asset_value}`)) });
  }
  const summary = yield* read((s) => s.vulns.summary(workspace));
  const since = opts.since ?? (yield* defaultSinceReads(workspace, opts.excludeRunId));
  const lastRun = (yield* read((s) => s.runs.list({ workspace }, { offset: 0, limit: 1 }))).data[0];
  const assetChanges = yield* assetDiffReads(workspace, since, now, REPORT_LIMITS.changes);
  const findingChanges = yield* vulnDiffReads(workspace, since, now, REPORT_LIMITS.changes);
  return {
    workspace,
    generated_at: now,
    ...(lastRun
      ? { last_run: { run_uuid: lastRun.run_uuid, workflow_name: lastRun.workflow_name, target: lastRun.target, status: lastRun.status, started_at: lastRun.started_at, completed_at: lastRun.completed_at } }
      : {}),
    summary: {
      assets: assetsByType.reduce((n, t) => n + t.total, 0),
      assets_by_type: Object.fromEntries(assetsByType.map((t) => [t.type, t.total])),
      findings: summary.total,
      findings_by_severity: Object.fromEntries(SEVERITIES.map((s) => [s, summary[s]])),
    },
    assets_by_type: assetsByType,
    findings_by_severity: findings,
    changes: { since, assets: assetChanges, findings: findingChanges },
  };
}

/** The report data on the synchronous store (workflow functions, tests). */
export function reportData(store: Store, workspace: string, opts: ReportOptions = {}): ReportData {
  return runReadsSync(reportDataReads(workspace, opts), store);
}
