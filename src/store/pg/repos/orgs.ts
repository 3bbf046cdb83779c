/**
 * The `orgs` table on PostgreSQL (statements shared with src/store/orgs.ts where
 * dialect-neutral). Name lookups are case-insensitive through the column's osm_nocase collation;
 * lists of names are bound as text arrays instead of SQLite's json_each.
 */
import { errors } from '../../../errors.js';
import { DIFF_SNAPSHOT_TABLES } from '../../asset-diffs.js';
import type { Async } from '../../async.js';
import { DEFAULT_ORG_UUID, NOT_DEFAULT_ORG } from '../../org-constants.js';
import { mapOrg, MAX_STAT_WORKSPACES, orgInsertValues, orgStatsOf, orgUpdate, ORG_INSERT_SQL, type OrgRowCounts, type OrgsRepo, type OrgStats } from '../../orgs.js';
import { nowIso } from '../../sql.js';
import type { PgDb } from '../db.js';

export function createPgOrgsRepo(db: PgDb): Async<OrgsRepo> {
  const get = async (uuid: string) => {
    const row = await db.one('SELECT * FROM orgs WHERE uuid = ?', [uuid]);
    return row ? mapOrg(row) : undefined;
  };
  const count = async (sql: string, params: unknown[]) => Number((await db.one(sql, params))?.n ?? 0);
  const names = async (uuid: string) =>
    (await db.all('SELECT name FROM workspaces WHERE org_uuid = ? ORDER BY name COLLATE "C" LIMIT ?', [uuid, MAX_STAT_WORKSPACES])).map((r) => r.name as string);
  const changes = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount;

  return {
    async list() {
      // SQLite: NOCASE (ASCII case folded) then binary order.
      const rows = await db.all(`SELECT * FROM orgs ORDER BY (uuid = ?) DESC, LOWER(name COLLATE "C") ASC, name COLLATE "C" ASC`, [DEFAULT_ORG_UUID]);
      return rows.map(mapOrg);
    },
    get,
    async getByName(name) {
      const row = await db.one('SELECT * FROM orgs WHERE name = ?', [name]);
      return row ? mapOrg(row) : undefined;
    },
    async create(input) {
      const { rows } = await db.queryNamed(ORG_INSERT_SQL, orgInsertValues(input));
      return mapOrg(rows[0]!);
    },
    async update(uuid, patch) {
      const u = orgUpdate(uuid, patch);
      if (!u) return get(uuid);
      const { rows } = await db.queryNamed(u.sql, u.values);
      return rows[0] ? mapOrg(rows[0]) : undefined;
    },
    assign(uuid, workspaces) {
      const list = [...new Set(workspaces)];
      return db.tx(async () => {
        const known = new Set((await db.all('SELECT name FROM workspaces WHERE name = ANY(?::text[])', [list])).map((r) => r.name as string));
        // Only rows not already in the org are written: re-assigning a big workspace costs nothing.
        const move = (table: string) => changes(`UPDATE ${table} SET org_uuid = ? WHERE workspace = ANY(?::text[]) AND org_uuid <> ?`, [uuid, list, uuid]);
        const counts: OrgRowCounts = {
          workspaces: await changes('UPDATE workspaces SET org_uuid = ?, updated_at = ? WHERE name = ANY(?::text[]) AND org_uuid <> ?', [uuid, nowIso(), list, uuid]),
          assets: await move('assets'),
          vulnerabilities: await move('vulnerabilities'),
          runs: await move('runs'),
        };
        return { counts, missing: list.filter((w) => !known.has(w)) };
      });
    },
    async remove(uuid, purge) {
      if (uuid === DEFAULT_ORG_UUID) throw errors.defaultOrgProtected();
      return db.tx(async (): Promise<OrgRowCounts> => {
        let counts: OrgRowCounts;
        if (purge) {
          const purged = (await db.all('SELECT name FROM workspaces WHERE org_uuid = ?', [uuid])).map((r) => r.name as string);
          const assets = await changes(`DELETE FROM assets WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`, [uuid]);
          const vulnerabilities = await changes(`DELETE FROM vulnerabilities WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`, [uuid]);
          await db.query('DELETE FROM artifacts WHERE run_id IN (SELECT id FROM runs WHERE org_uuid = ?)', [uuid]);
          const runs = await changes('DELETE FROM runs WHERE org_uuid = ?', [uuid]);
          for (const diffs of DIFF_SNAPSHOT_TABLES) await db.query(`DELETE FROM ${diffs} WHERE workspace_name = ANY(?::text[])`, [purged]);
          await db.query('DELETE FROM event_logs WHERE workspace = ANY(?::text[])', [purged]);
          await db.query('DELETE FROM artifacts WHERE workspace = ANY(?::text[])', [purged]);
          const ws = await changes('DELETE FROM workspaces WHERE org_uuid = ?', [uuid]);
          counts = { workspaces: ws, assets, vulnerabilities, runs };
        } else {
          const move = (table: string) => changes(`UPDATE ${table} SET org_uuid = ? WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`, [DEFAULT_ORG_UUID, uuid]);
          counts = { workspaces: await move('workspaces'), assets: await move('assets'), vulnerabilities: await move('vulnerabilities'), runs: await move('runs') };
        }
        await db.query('DELETE FROM orgs WHERE uuid = ?', [uuid]);
        return counts;
      });
    },
    stats(org) {
      return db.tx(
        async () => {
          const ws = await db.one('SELECT COUNT(*) AS n, COALESCE(SUM(total_assets), 0) AS a, COALESCE(SUM(total_vulns), 0) AS v FROM workspaces WHERE org_uuid = ?', [org.uuid]);
          return orgStatsOf(org, ws as { n: unknown; a: unknown; v: unknown }, await count('SELECT COUNT(*) AS n FROM runs WHERE org_uuid = ?', [org.uuid]), await names(org.uuid));
        },
        { readOnlySnapshot: true },
      );
    },
    statsAll(orgs) {
      return db.tx(
        async () => {
          const ws = new Map(
            (await db.all('SELECT org_uuid, COUNT(*) AS n, COALESCE(SUM(total_assets), 0) AS a, COALESCE(SUM(total_vulns), 0) AS v FROM workspaces GROUP BY org_uuid')).map((r) => [
              r.org_uuid as string,
              r as { n: unknown; a: unknown; v: unknown },
            ]),
          );
          const runs = new Map((await db.all('SELECT org_uuid, COUNT(*) AS n FROM runs GROUP BY org_uuid')).map((r) => [r.org_uuid as string, r.n]));
          const out = new Map<string, OrgStats>();
          for (const org of orgs) {
            const w = ws.get(org.uuid);
            out.set(org.uuid, orgStatsOf(org, w, runs.get(org.uuid), w ? await names(org.uuid) : []));
          }
          return out;
        },
        { readOnlySnapshot: true },
      );
    },
    async orgOfWorkspace(workspace) {
      return ((await db.one('SELECT org_uuid FROM workspaces WHERE name = ?', [workspace]))?.org_uuid as string | undefined) ?? DEFAULT_ORG_UUID;
    },
    activeRuns(uuid) {
      return count(`SELECT COUNT(*) AS n FROM runs WHERE org_uuid = ? AND status IN ('pending', 'queued', 'running')`, [uuid]);
    },
  };
}
