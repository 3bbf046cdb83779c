/**
 * Distinct facet values of the assets (GET /asset-stats): technologies, sources, remarks and asset
 * types, each sorted bytewise (like the reference's Go sort) without empty values. Asset types come
 * from the trigger-kept `asset_type_counts` table (migration 004), so they never scan assets; the
 * other three have no facet table and read the assets of the workspace (or all assets).
 */
import { parseJson, statementCache, type Db, type StatementCache } from './sql.js';

export interface AssetFacets {
  technologies: string[];
  sources: string[];
  remarks: string[];
  asset_types: string[];
}

const caches = new WeakMap<Db, StatementCache>();

function cacheOf(db: Db): StatementCache {
  let q = caches.get(db);
  if (!q) {
    q = statementCache(db);
    caches.set(db, q);
  }
  return q;
}

/** Bytewise UTF-8 order (what SQLite's BINARY collation and Go's sort.Strings give). */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Labels of one `remarks` value: osm stores a comma list (httpx webserver and CDN name); rows
 * imported from elsewhere may hold a JSON array of strings.
 */
export function remarkLabels(value: string): string[] {
  const text = value.trim();
  if (text.startsWith('[')) {
    const items = parseJson<unknown[] | null>(text, null);
    if (Array.isArray(items)) return items.filter((v): v is string => typeof v === 'string').map((v) => v.trim()).filter(Boolean);
  }
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

/** The workspace/org terms of the facet queries: `wsTerm(column)` (AND …) and its parameters. */
export function facetScope(workspace: string | undefined, orgs: readonly string[] | undefined): { wsTerm: (col: string) => string; args: unknown[] } {
  const ws = workspace !== undefined;
  // Within some orgs (a bound credential): the workspace filter becomes "a workspace of these orgs".
  const inOrgs = orgs !== undefined ? `IN (SELECT name FROM workspaces WHERE org_uuid IN (${orgs.map(() => '?').join(', ') || 'NULL'}))` : '';
  return {
    wsTerm: (col: string) => `${ws ? ` AND ${col} = ?` : ''}${orgs !== undefined ? ` AND ${col} ${inOrgs}` : ''}`,
    args: [...(ws ? [workspace] : []), ...(orgs ?? [])],
  };
}

/** The facet values of the assets of `workspace` (every workspace when undefined). */
export function assetFacets(db: Db, workspace?: string, orgs?: readonly string[]): AssetFacets {
  const q = cacheOf(db);
  const { wsTerm, args } = facetScope(workspace, orgs);
  const col = (rows: unknown[]) => (rows as { v: string }[]).map((r) => r.v);
  // A corrupt or non-array tech column counts as no technologies (CASE evaluates lazily; json_each would fail on it).
  const techSource = `CASE WHEN json_valid(a.tech) THEN CASE WHEN json_type(a.tech) = 'array' THEN a.tech ELSE '[]' END ELSE '[]' END`;
  return db.transaction(() => {
    const technologies = col(
      q(
        `SELECT DISTINCT j.value AS v FROM assets a, json_each(${techSource}) j
         WHERE a.tech <> '[]' AND j.type = 'text' AND j.value <> ''${wsTerm('a.workspace')} ORDER BY v`,
      ).all(...args),
    );
    const sources = col(q(`SELECT DISTINCT source AS v FROM assets WHERE source <> ''${wsTerm('workspace')} ORDER BY v`).all(...args));
    const remarkValues = col(q(`SELECT DISTINCT remarks AS v FROM assets WHERE remarks <> ''${wsTerm('workspace')}`).all(...args));
    const remarks = [...new Set(remarkValues.flatMap(remarkLabels))].sort(byteOrder);
    const assetTypes = col(
      q(`SELECT DISTINCT asset_type AS v FROM asset_type_counts WHERE n > 0 AND asset_type <> ''${wsTerm('workspace')} ORDER BY v`).all(...args),
    );
    return { technologies, sources, remarks, asset_types: assetTypes };
  })();
}

/** Asset totals by type and by status code, from the trigger-kept facet tables (never a scan of assets). */
export interface AssetFacetTotals {
  byType: { k: string; n: number }[];
  byStatus: { k: number; n: number }[];
  total: number;
}

export interface AssetStatsRepo {
  /** Distinct facet values (GET /asset-stats, reports). */
  facets(workspace?: string, orgs?: readonly string[]): AssetFacets;
  /** Counts by type and status of one workspace and/or one org's workspaces (`osm assets --stats`). */
  totals(filter: { workspace?: string; org_uuid?: string }): AssetFacetTotals;
}

/** The queries of `totals` (by type, by status; positional parameters `params`), dialect-neutral. */
export function facetTotalsSql({ workspace, org_uuid }: { workspace?: string; org_uuid?: string }) {
  const conds = [...(workspace ? ['workspace = ?'] : []), ...(org_uuid ? ['workspace IN (SELECT name FROM workspaces WHERE org_uuid = ?)'] : [])];
  const where = conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : '';
  return {
    params: [...(workspace ? [workspace] : []), ...(org_uuid ? [org_uuid] : [])],
    byType: `SELECT asset_type AS k, SUM(n) AS n FROM asset_type_counts${where} GROUP BY asset_type HAVING SUM(n) > 0 ORDER BY n DESC, k`,
    byStatus: `SELECT status_code AS k, SUM(n) AS n FROM asset_status_counts${where} GROUP BY status_code HAVING SUM(n) > 0 ORDER BY n DESC, k`,
  };
}

/** The totals from the rows of facetTotalsSql (sums as numbers on both engines). */
export function toFacetTotals(byTypeRows: Record<string, unknown>[], byStatusRows: Record<string, unknown>[]): AssetFacetTotals {
  const byType = byTypeRows.map((r) => ({ k: String(r.k), n: Number(r.n) }));
  const byStatus = byStatusRows.map((r) => ({ k: Number(r.k), n: Number(r.n) }));
  return { byType, byStatus, total: byType.reduce((sum, r) => sum + r.n, 0) };
}

export function createAssetStatsRepo(db: Db): AssetStatsRepo {
  return {
    facets: (workspace, orgs) => assetFacets(db, workspace, orgs),
    totals: (filter) => {
      const sql = facetTotalsSql(filter);
      const q = cacheOf(db);
      return toFacetTotals(q(sql.byType).all(...sql.params) as Record<string, unknown>[], q(sql.byStatus).all(...sql.params) as Record<string, unknown>[]);
    },
  };
}
