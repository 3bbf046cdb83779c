/**
 * The data of a workspace report, read from the store: a summary, the assets by type, the findings
 * by severity with their evidence, and the changes since a point in time (the asset and
 * vulnerability diffs, src/ingest/diff.ts). Lists are capped so a report of a million assets stays
 * a readable file; every count stays exact and says how many rows a list leaves out.
 */
import type { AssetRecord, RunRecord, Store, VulnRecord } from '../store/index.js';
import { SEVERITIES } from '../store/index.js';
import { computeAssetDiff, computeVulnDiff, type AssetDiff, type VulnDiff } from '../ingest/diff.js';

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
export function defaultSince(store: Store, workspace: string, exclude?: number): string {
  const runs = store.runs.list({ workspace }, { offset: 0, limit: 20 }).data;
  const run = runs.find((r) => r.id !== exclude && r.started_at);
  if (run?.started_at) return run.started_at;
  const starts = [store.workspaces.get(workspace)?.created_at, store.assets.oldestCreatedAt(workspace), store.vulns.oldestCreatedAt(workspace)].filter(
    (t): t is string => Boolean(t),
  );
  return starts.sort()[0] ?? new Date().toISOString();
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

/** Reads the report data of `workspace`. */
export function reportData(store: Store, workspace: string, opts: ReportOptions = {}): ReportData {
  const now = new Date().toISOString();
  const types = store.assetStats.facets(workspace).asset_types;
  const assetsByType = types.map((type) => {
    const page = store.assets.list({ workspace, asset_type: type }, { offset: 0, limit: REPORT_LIMITS.assetsPerType });
    return { type, total: page.total, items: page.data.map(asset).sort((a, b) => `${a.asset_value} ${a.url}`.localeCompare(`${b.asset_value} ${b.url}`)) };
  });
  const findings = SEVERITIES.map((severity) => {
    const page = store.vulns.list({ workspace, severity: [severity] }, { offset: 0, limit: REPORT_LIMITS.findingsPerSeverity });
    return { severity, total: page.total, items: page.data.map(finding).sort((a, b) => `${a.vuln_info} ${a.asset_value}`.localeCompare(`${b.vuln_info} ${b.asset_value}`)) };
  });
  const summary = store.vulns.summary(workspace);
  const since = opts.since ?? defaultSince(store, workspace, opts.excludeRunId);
  const lastRun = store.runs.list({ workspace }, { offset: 0, limit: 1 }).data[0];
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
    changes: {
      since,
      assets: computeAssetDiff(store, workspace, since, now, REPORT_LIMITS.changes),
      findings: computeVulnDiff(store, workspace, since, now, REPORT_LIMITS.changes),
    },
  };
}
