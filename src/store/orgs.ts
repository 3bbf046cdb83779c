/**
 * The `orgs` table (migration 007) and the org-scoped columns of workspaces, assets,
 * vulnerabilities and runs. Rows always move between orgs a whole workspace at a time (assign,
 * delete), and new rows take their workspace's org, so every row of a workspace shares the org of
 * the workspace's row: per-org asset and vulnerability totals are sums of the trigger-kept
 * workspace counters, never counts of the big tables.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../errors.js';
import { DIFF_SNAPSHOT_TABLES } from './asset-diffs.js';
import { nowIso, parseStringArray, type Db, type Row, type StatementCache } from './sql.js';
import { DEFAULT_ORG_UUID, NOT_DEFAULT_ORG } from './org-constants.js';

export { DEFAULT_ORG_NAME, DEFAULT_ORG_UUID, orgOfWorkspaceSql } from './org-constants.js';

export interface OrgRecord {
  uuid: string;
  name: string;
  description: string;
  tags: string[];
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

export interface OrgStats {
  org_uuid: string;
  org_name: string;
  total_workspaces: number;
  total_assets: number;
  total_vulns: number;
  total_runs: number;
  /** Workspace names, sorted (at most MAX_STAT_WORKSPACES). */
  workspaces: string[];
}

/** Rows that changed org (assign) or were moved / deleted (delete), per org-scoped table. */
export interface OrgRowCounts {
  workspaces: number;
  assets: number;
  vulnerabilities: number;
  runs: number;
}

export interface OrgCreateInput {
  name: string;
  description?: string;
  tags?: string[];
  /** Explicit uuid (lower-case); a random one when absent. */
  uuid?: string;
}

export interface OrgPatch {
  name?: string;
  description?: string;
  tags?: string[];
}

/** Workspace names listed in one OrgStats; the counts are always complete. */
export const MAX_STAT_WORKSPACES = 10_000;

export interface OrgsRepo {
  /** Every org, the default org first, then by name (case-insensitive). */
  list(): OrgRecord[];
  get(uuid: string): OrgRecord | undefined;
  /** By name, case-insensitively. */
  getByName(name: string): OrgRecord | undefined;
  /** Inserts an org; a duplicate name or uuid raises SQLite's constraint error (callers check first). */
  create(input: OrgCreateInput): OrgRecord;
  /** Changes the given fields; returns the updated org (undefined when it does not exist). */
  update(uuid: string, patch: OrgPatch): OrgRecord | undefined;
  /**
   * Moves workspaces (by name) with their assets, vulnerabilities and runs into the org, in one
   * transaction; returns how many rows changed org, and the names without a workspaces row.
   */
  assign(uuid: string, workspaces: string[]): { counts: OrgRowCounts; missing: string[] };
  /**
   * Deletes the org in one transaction: its rows move to the default org, or with `purge` are
   * deleted (with the runs' steps and artifacts, the workspaces' diffs and events).
   */
  remove(uuid: string, purge: boolean): OrgRowCounts;
  /** Stats of one org. */
  stats(org: OrgRecord): OrgStats;
  /** Stats of every org, keyed by uuid (a few grouped queries). */
  statsAll(orgs: OrgRecord[]): Map<string, OrgStats>;
  /** The org of a workspace's row (the default org when it has none). */
  orgOfWorkspace(workspace: string): string;
  /** Queued, pending or running runs of the org. */
  activeRuns(uuid: string): number;
}

/** Maps an orgs row to its record. */
export function mapOrg(row: Row): OrgRecord {
  return {
    uuid: String(row.uuid),
    name: String(row.name),
    description: String(row.description ?? ''),
    tags: parseStringArray(row.tags),
    is_default: row.uuid === DEFAULT_ORG_UUID,
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
  };
}

export const ORG_INSERT_SQL = `INSERT INTO orgs (uuid, name, description, tags, created_at, updated_at) VALUES (@uuid, @name, @description, @tags, @now, @now) RETURNING *`;

export function orgInsertValues(input: OrgCreateInput): Record<string, unknown> {
  return { uuid: input.uuid ?? randomUUID(), name: input.name, description: input.description ?? '', tags: JSON.stringify(input.tags ?? []), now: nowIso() };
}

/** The UPDATE … RETURNING of `update` (named parameters), or undefined when the patch is empty. */
export function orgUpdate(uuid: string, patch: OrgPatch): { sql: string; values: Record<string, unknown> } | undefined {
  const sets: string[] = [];
  const values: Record<string, unknown> = { uuid, now: nowIso() };
  if (patch.name !== undefined) {
    sets.push('name = @name');
    values.name = patch.name;
  }
  if (patch.description !== undefined) {
    sets.push('description = @description');
    values.description = patch.description;
  }
  if (patch.tags !== undefined) {
    sets.push('tags = @tags');
    values.tags = JSON.stringify(patch.tags);
  }
  if (sets.length === 0) return undefined;
  return { sql: `UPDATE orgs SET ${sets.join(', ')}, updated_at = @now WHERE uuid = @uuid RETURNING *`, values };
}

/** OrgStats from the grouped workspace row (count, asset and vuln sums), the run count and the names. */
export function orgStatsOf(org: OrgRecord, ws: { n: unknown; a: unknown; v: unknown } | undefined, runs: unknown, names: string[]): OrgStats {
  return {
    org_uuid: org.uuid,
    org_name: org.name,
    total_workspaces: Number(ws?.n ?? 0),
    total_assets: Number(ws?.a ?? 0),
    total_vulns: Number(ws?.v ?? 0),
    total_runs: Number(runs ?? 0),
    workspaces: names,
  };
}

/** Creates the orgs repository on one connection. */
export function createOrgsRepo(db: Db, q: StatementCache): OrgsRepo {
  const get = (uuid: string): OrgRecord | undefined => {
    const row = q('SELECT * FROM orgs WHERE uuid = ?').get(uuid) as Row | undefined;
    return row ? mapOrg(row) : undefined;
  };
  const n = (sql: string, ...params: unknown[]) => Number((q(sql).get(...params) as { n: number | null } | undefined)?.n ?? 0);
  const names = (uuid: string) =>
    (q('SELECT name FROM workspaces WHERE org_uuid = ? ORDER BY name LIMIT ?').all(uuid, MAX_STAT_WORKSPACES) as { name: string }[]).map((r) => r.name);

  return {
    list() {
      const rows = q(`SELECT * FROM orgs ORDER BY (uuid = '${DEFAULT_ORG_UUID}') DESC, name COLLATE NOCASE ASC, name ASC`).all() as Row[];
      return rows.map(mapOrg);
    },

    get,

    getByName(name) {
      const row = q('SELECT * FROM orgs WHERE name = ? COLLATE NOCASE').get(name) as Row | undefined;
      return row ? mapOrg(row) : undefined;
    },

    create(input) {
      return mapOrg(q(ORG_INSERT_SQL).get(orgInsertValues(input)) as Row);
    },

    update(uuid, patch) {
      const u = orgUpdate(uuid, patch);
      if (!u) return get(uuid);
      const row = q(u.sql).get(u.values) as Row | undefined;
      return row ? mapOrg(row) : undefined;
    },
    assign(uuid, workspaces) {
      const list = JSON.stringify([...new Set(workspaces)]);
      return db.transaction(() => {
        const known = new Set(
          (q('SELECT name FROM workspaces WHERE name IN (SELECT value FROM json_each(?))').all(list) as { name: string }[]).map((r) => r.name),
        );
        // Only rows not already in the org are written: re-assigning a big workspace costs nothing.
        const move = (table: string, column: string) =>
          q(`UPDATE ${table} SET org_uuid = ? WHERE ${column} IN (SELECT value FROM json_each(?)) AND org_uuid <> ?`).run(uuid, list, uuid).changes;
        const counts: OrgRowCounts = {
          workspaces: q(`UPDATE workspaces SET org_uuid = @uuid, updated_at = @now WHERE name IN (SELECT value FROM json_each(@list)) AND org_uuid <> @uuid`).run({
            uuid,
            list,
            now: nowIso(),
          }).changes,
          assets: move('assets', 'workspace'),
          vulnerabilities: move('vulnerabilities', 'workspace'),
          runs: move('runs', 'workspace'),
        };
        return { counts, missing: [...new Set(workspaces)].filter((w) => !known.has(w)) };
      }).immediate();
    },

    remove(uuid, purge) {
      if (uuid === DEFAULT_ORG_UUID) throw errors.defaultOrgProtected();
      return db.transaction((): OrgRowCounts => {
        let counts: OrgRowCounts;
        if (purge) {
          const purged = (q('SELECT name FROM workspaces WHERE org_uuid = ?').all(uuid) as { name: string }[]).map((r) => r.name);
          // The extra term lets SQLite use the partial org indexes (migration 007); uuid is never the default org.
          const assets = q(`DELETE FROM assets WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`).run(uuid).changes;
          const vulnerabilities = q(`DELETE FROM vulnerabilities WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`).run(uuid).changes;
          // Steps go with their run (ON DELETE CASCADE); artifacts carry no foreign key.
          q('DELETE FROM artifacts WHERE run_id IN (SELECT id FROM runs WHERE org_uuid = ?)').run(uuid);
          const runs = q('DELETE FROM runs WHERE org_uuid = ?').run(uuid).changes;
          const names = JSON.stringify(purged);
          for (const diffs of DIFF_SNAPSHOT_TABLES) q(`DELETE FROM ${diffs} WHERE workspace_name IN (SELECT value FROM json_each(?))`).run(names);
          q('DELETE FROM event_logs WHERE workspace IN (SELECT value FROM json_each(?))').run(names);
          q('DELETE FROM artifacts WHERE workspace IN (SELECT value FROM json_each(?))').run(names);
          const ws = q('DELETE FROM workspaces WHERE org_uuid = ?').run(uuid).changes;
          counts = { workspaces: ws, assets, vulnerabilities, runs };
        } else {
          const move = (table: string) => q(`UPDATE ${table} SET org_uuid = ? WHERE org_uuid = ? AND ${NOT_DEFAULT_ORG}`).run(DEFAULT_ORG_UUID, uuid).changes;
          counts = { workspaces: move('workspaces'), assets: move('assets'), vulnerabilities: move('vulnerabilities'), runs: move('runs') };
        }
        q('DELETE FROM orgs WHERE uuid = ?').run(uuid);
        return counts;
      }).immediate();
    },

    stats(org) {
      return db.transaction((): OrgStats => {
        const ws = q('SELECT COUNT(*) AS n, COALESCE(SUM(total_assets), 0) AS a, COALESCE(SUM(total_vulns), 0) AS v FROM workspaces WHERE org_uuid = ?').get(
          org.uuid,
        ) as { n: number; a: number; v: number };
        return orgStatsOf(org, ws, n('SELECT COUNT(*) AS n FROM runs WHERE org_uuid = ?', org.uuid), names(org.uuid));
      })();
    },

    statsAll(orgs) {
      return db.transaction(() => {
        const ws = new Map(
          (
            q('SELECT org_uuid, COUNT(*) AS n, COALESCE(SUM(total_assets), 0) AS a, COALESCE(SUM(total_vulns), 0) AS v FROM workspaces GROUP BY org_uuid').all() as {
              org_uuid: string;
              n: number;
              a: number;
              v: number;
            }[]
          ).map((r) => [r.org_uuid, r]),
        );
        const runs = new Map((q('SELECT org_uuid, COUNT(*) AS n FROM runs GROUP BY org_uuid').all() as { org_uuid: string; n: number }[]).map((r) => [r.org_uuid, r.n]));
        const out = new Map<string, OrgStats>();
        for (const org of orgs) {
          const w = ws.get(org.uuid);
          out.set(org.uuid, orgStatsOf(org, w, runs.get(org.uuid), w ? names(org.uuid) : []));
        }
        return out;
      })();
    },

    orgOfWorkspace(workspace) {
      const row = q('SELECT org_uuid FROM workspaces WHERE name = ?').get(workspace) as { org_uuid: string } | undefined;
      return row?.org_uuid ?? DEFAULT_ORG_UUID;
    },

    activeRuns(uuid) {
      return n(`SELECT COUNT(*) AS n FROM runs WHERE org_uuid = ? AND status IN ('pending', 'queued', 'running')`, uuid);
    },
  };
}
