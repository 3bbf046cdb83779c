/**
 * The `assets` table on PostgreSQL: the merge rules of src/store/assets.ts, imported in bulk
 * (../bulk.ts), list totals from the trigger-kept counts (same queries as SQLite) and the
 * diff-window queries.
 */
import { errors } from '../../../errors.js';
import {
  assetBatch,
  assetListWhere,
  assetOne,
  assetParams,
  assetTotalSql,
  ASSET_BRIEF,
  ASSET_COLUMNS,
  ASSET_INSERT_SQL,
  ASSET_UPDATE_COLUMNS,
  mapAsset,
  mergeAsset,
  type AssetBrief,
  type AssetRecord,
  type AssetsRepo,
  type AssetValues,
} from '../../assets.js';
import type { Async } from '../../async.js';
import { nowIso } from '../../sql.js';
import { bulkUpsert, type BulkSpec } from '../bulk.js';
import type { PgDb } from '../db.js';
import { pgDiffWindowQueries } from '../diff-window.js';
import { pgListPage } from '../list.js';

/** The (asset_value, url) match key: the value's length keeps it unambiguous without encoding either string. */
const exactKey = (value: string, url: string) => `${value.length}:${value}${url}`;

function assetSpec(matchByValue: boolean): BulkSpec<AssetValues, AssetRecord> {
  return {
    table: 'assets',
    history: 'asset_history',
    columns: ASSET_COLUMNS,
    updateColumns: ASSET_UPDATE_COLUMNS,
    params: assetParams,
    pending: (v) => ({ ...v, id: 0, created_at: '', updated_at: '', last_seen_at: '' }),
    map: mapAsset,
    merge: mergeAsset,
    key: (v) => exactKey(v.asset_value, v.url),
    rowKey: (r) => exactKey(r.asset_value, r.url),
    // The reference's quick imports: no row with the same url → the oldest row of the value.
    fallbackKey: matchByValue ? (v) => v.asset_value : undefined,
    rowFallbackKey: (r) => r.asset_value,
    candidates: (db, workspace, values) => db.all('SELECT * FROM assets WHERE workspace = ? AND asset_value = ANY(?::text[])', [workspace, [...new Set(values.map((v) => v.asset_value))]]),
  };
}

export function createPgAssetsRepo(db: PgDb): Async<AssetsRepo> {
  const get = async (id: number) => {
    const row = await db.one('SELECT * FROM assets WHERE id = ?', [id]);
    return row ? mapAsset(row) : undefined;
  };
  return {
    async upsertMany(workspace, rows, now = nowIso(), opts = {}) {
      return bulkUpsert(db, assetSpec(Boolean(opts.matchByValue)), workspace, assetBatch(workspace, rows), now);
    },
    async insert(workspace, input, now = nowIso()) {
      const v = assetOne(workspace, input);
      return db.tx(async () => {
        if (await db.one('SELECT id FROM assets WHERE workspace = ? AND asset_value = ? AND url = ?', [workspace, v.asset_value, v.url])) {
          throw errors.conflict(`asset already exists: ${v.asset_value}${v.url ? ` (${v.url})` : ''}`);
        }
        const { rows } = await db.queryNamed(ASSET_INSERT_SQL, { ...assetParams(v), now });
        return (await get(Number(rows[0]!.id)))!;
      });
    },
    async touchedSince(workspace, since, limit, afterId = 0) {
      return (await db.all('SELECT * FROM assets WHERE id > ? AND workspace = ? AND (updated_at >= ? OR last_seen_at >= ?) ORDER BY id LIMIT ?', [afterId, workspace, since, since, limit])).map(mapAsset);
    },
    get,
    list(filter, page) {
      const t = assetTotalSql(filter);
      const total = t && (async () => Number((await db.one(t.sql, t.params))?.n ?? 0));
      return pgListPage(db, { table: 'assets', where: assetListWhere(filter, 'ILIKE'), orderBy: 'created_at DESC, id DESC', map: mapAsset, total }, page);
    },
    async delete(id) {
      return (await db.query('DELETE FROM assets WHERE id = ?', [id])).rowCount > 0;
    },
    ...pgDiffWindowQueries<AssetRecord, AssetBrief>(db, 'assets', 'asset_history', mapAsset, ASSET_BRIEF),
  };
}
