/**
 * The read-mostly report repositories on PostgreSQL: diff snapshots (asset_diffs, vuln_diffs),
 * the /stats snapshot and the asset facets, with the SQL of their SQLite twins where it is
 * dialect-neutral. Facet values sort bytewise (COLLATE "C") like SQLite's BINARY collation; the
 * tech column is read with jsonb functions (osm always writes it as a JSON array).
 */
import { facetScope, facetTotalsSql, remarkLabels, byteOrder, toFacetTotals, type AssetStatsRepo } from '../../asset-stats.js';
import { mapSnapshot, snapshotInsertSql, snapshotListWhere, snapshotValues, type DiffSnapshotsRepo, type DiffSnapshotTable } from '../../asset-diffs.js';
import type { Async } from '../../async.js';
import { statsSql, toStatsSnapshot, type StatsRepo } from '../../stats.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';
import { prefixed } from '../cte.js';

export function createPgDiffSnapshotsRepo(db: PgDb, table: DiffSnapshotTable): Async<DiffSnapshotsRepo> {
  return {
    async insert(input) {
      return mapSnapshot((await db.queryNamed(snapshotInsertSql(table), snapshotValues(input))).rows[0]!);
    },
    async insertRunPair(assets, vulns) {
      // Both INSERTs in one statement: atomic, one round trip, no BEGIN/COMMIT.
      const a = prefixed({ sql: snapshotInsertSql('asset_diffs'), values: snapshotValues(assets) }, 'a_');
      const v = prefixed({ sql: snapshotInsertSql('vuln_diffs'), values: snapshotValues(vulns) }, 'v_');
      const { rows } = await db.queryNamed(`WITH a AS (${a.sql}), v AS (${v.sql}) SELECT 'a' AS pair_side, a.* FROM a UNION ALL SELECT 'v' AS pair_side, v.* FROM v`, { ...a.values, ...v.values });
      const side = (k: string) => {
        const { pair_side: _k, ...row } = rows.find((r) => r.pair_side === k)!;
        return mapSnapshot(row);
      };
      return { assets: side('a'), vulns: side('v') };
    },
    list(filter, page) {
      return pgListPage(db, { table, where: snapshotListWhere(filter), orderBy: 'created_at DESC, id DESC', map: mapSnapshot }, page);
    },
  };
}

export function createPgStatsRepo(db: PgDb): Async<StatsRepo> {
  return {
    snapshot(orgs) {
      return db.tx(
        async () => {
          const sql = statsSql(orgs);
          return toStatsSnapshot(orgs, {
            runs: await db.all(sql.runs, sql.params),
            counters: await db.all(sql.counters, orgs === undefined ? [] : sql.params),
            schedules: await db.one(sql.schedules, sql.params),
            workspaces: await db.one(sql.workspaces, sql.params),
          });
        },
        { readOnlySnapshot: true },
      );
    },
  };
}

/**
 * The non-empty string items of one tech column value; a corrupt (not JSON) or non-array value
 * counts as none, as on SQLite. Parsed here, not with `::jsonb` in SQL: that cast fails the whole
 * query on one corrupt row (PostgreSQL 15 has no pg_input_is_valid to guard it).
 */
function techItems(value: string): string[] {
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string' && v !== '') : [];
  } catch {
    return [];
  }
}

export function createPgAssetStatsRepo(db: PgDb): Async<AssetStatsRepo> {
  const col = (rows: Record<string, unknown>[]) => rows.map((r) => String(r.v));
  return {
    facets(workspace, orgs) {
      const { wsTerm, args } = facetScope(workspace, orgs);
      return db.tx(
        async () => {
          const techValues = col(await db.all(`SELECT DISTINCT tech AS v FROM assets WHERE tech <> '[]'${wsTerm('workspace')}`, args));
          const technologies = [...new Set(techValues.flatMap(techItems))].sort(byteOrder);
          const sources = col(await db.all(`SELECT DISTINCT source COLLATE "C" AS v FROM assets WHERE source <> ''${wsTerm('workspace')} ORDER BY v`, args));
          const remarkValues = col(await db.all(`SELECT DISTINCT remarks AS v FROM assets WHERE remarks <> ''${wsTerm('workspace')}`, args));
          const remarks = [...new Set(remarkValues.flatMap(remarkLabels))].sort(byteOrder);
          const assetTypes = col(await db.all(`SELECT DISTINCT asset_type COLLATE "C" AS v FROM asset_type_counts WHERE n > 0 AND asset_type <> ''${wsTerm('workspace')} ORDER BY v`, args));
          return { technologies, sources, remarks, asset_types: assetTypes };
        },
        { readOnlySnapshot: true },
      );
    },
    async totals(filter) {
      const sql = facetTotalsSql(filter);
      return toFacetTotals(await db.all(sql.byType, sql.params), await db.all(sql.byStatus, sql.params));
    },
  };
}
