/** Assets use cases shared by GET /assets* and `osm assets`. */
import { errors } from '../errors.js';
import type { AssetListFilter, AssetRecord, AsyncStore, ListResult, Page } from '../store/index.js';
import { inScope, UNRESTRICTED, type Scope } from '../auth/scope.js';

/** A list item: the asset without its heavy raw JSON (GET /assets/{id} has it). */
export type AssetListItem = Omit<AssetRecord, 'raw_json_data'>;

/** Parses a numeric id from a path segment; anything else is `invalid`. */
export function parseNumericId(text: string, invalid: () => Error): number {
  const t = String(text).trim();
  if (!/^-?\d{1,15}$/.test(t)) throw invalid();
  return Number(t);
}

/** Filtered page of assets, newest first, without raw_json_data. */
export async function listAssets(app: { repos: AsyncStore }, filter: AssetListFilter, page: Page): Promise<ListResult<AssetListItem>> {
  const clean: AssetListFilter = {
    workspace: filter.workspace || undefined,
    asset_type: filter.asset_type || undefined,
    status_code: filter.status_code || undefined,
    search: filter.search || undefined,
    org_uuid: filter.org_uuid || undefined,
  };
  const r = await app.repos.assets.list(clean, page);
  return { data: r.data.map(({ raw_json_data: _raw, ...rest }) => rest), total: r.total };
}

/** One asset by id (from the path); 400 Invalid asset ID, 404 Asset not found. */
export async function getAsset(app: { repos: AsyncStore }, idText: string, scope: Scope = UNRESTRICTED): Promise<AssetRecord> {
  const id = parseNumericId(idText, errors.invalidAssetId);
  const asset = await app.repos.assets.get(id);
  if (!asset || !inScope(scope, asset.org_uuid)) throw errors.assetNotFound();
  return asset;
}
