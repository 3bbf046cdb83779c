/**
 * Small reads the reference's API and web UI use: workspace names, asset facet values and the
 * stored vulnerability diff snapshots (the same read as GET /assets/diffs, on `vuln_diffs`).
 */
import type { AssetFacets } from '../store/asset-stats.js';
import type { DiffSnapshotRecord, ListResult } from '../store/index.js';
import type { AppContext } from './context.js';
import { UNRESTRICTED, workspaceInScope, type Scope } from '../auth/scope.js';

/** GET /workspace-names: every workspace row's name, ascending ([] when there is none). */
export async function workspaceNames(app: AppContext, scope: Scope = UNRESTRICTED): Promise<string[]> {
  const names = await app.repos.workspaces.names();
  if (scope.orgs === null) return names;
  const visible: string[] = [];
  for (const n of names) if (await workspaceInScope(app.repos, scope, n)) visible.push(n);
  return visible;
}

/** GET /asset-stats: distinct technologies, sources, remarks and asset types (one workspace or all). */
export function assetStats(app: AppContext, workspace?: string, scope: Scope = UNRESTRICTED): Promise<AssetFacets> {
  return app.repos.assetStats.facets(workspace || undefined, scope.orgs ?? undefined);
}

/** GET /vulnerabilities/diffs: stored snapshots, newest first. */
export function listStoredVulnDiffs(app: AppContext, filter: { workspace?: string }, page: { offset: number; limit: number }, scope: Scope = UNRESTRICTED): Promise<ListResult<DiffSnapshotRecord>> {
  return app.repos.vulnDiffs.list({ workspace: filter.workspace || undefined, org_uuid: scope.orgs ?? undefined }, page);
}
