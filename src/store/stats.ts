/**
 * The numbers behind GET /stats. Assets and vulnerabilities come from the trigger-kept counters;
 * runs and schedules from GROUP BYs over indexed columns; never a count of a large table.
 */
import { Where, type Db, type Row, type StatementCache } from './sql.js';
import type { OrgFilter } from './org-constants.js';

export interface StatsSnapshot {
  /** pending counts pending and queued runs. */
  runs: { total: number; completed: number; running: number; failed: number; pending: number; cancelled: number };
  workspaces: { total: number };
  assets: { total: number };
  /** total is the sum over the five severities. */
  vulnerabilities: { total: number; critical: number; high: number; medium: number; low: number; info: number };
  schedules: { total: number; enabled: number };
}

export interface StatsRepo {
  /** A consistent snapshot of every counter shown by /stats (workflow counts come from the workflows repo). */
  snapshot(orgs?: OrgFilter): StatsSnapshot;
}

/** The queries of a stats snapshot (positional parameters: the org filter's), dialect-neutral. */
export function statsSql(orgs: OrgFilter | undefined) {
  const org = new Where().oneOf('org_uuid', orgs);
  return {
    params: org.params,
    runs: `SELECT status, COUNT(*) AS n FROM runs ${org} GROUP BY status`,
    /** Global counters (name, value rows) without an org filter; else one row of sums of the org's workspace counters. */
    counters:
      orgs === undefined
        ? 'SELECT name, value FROM counters'
        : `SELECT COALESCE(SUM(total_assets), 0) AS assets, COALESCE(SUM(vuln_critical), 0) AS critical, COALESCE(SUM(vuln_high), 0) AS high,
              COALESCE(SUM(vuln_medium), 0) AS medium, COALESCE(SUM(vuln_low), 0) AS low, COALESCE(SUM(vuln_info), 0) AS info FROM workspaces ${org}`,
    schedules: `SELECT COUNT(*) AS total, COALESCE(SUM(is_enabled), 0) AS enabled FROM schedules ${org}`,
    workspaces: `SELECT COUNT(*) AS n FROM workspaces ${org}`,
  };
}

/** The snapshot from the rows of the statsSql queries. */
export function toStatsSnapshot(orgs: OrgFilter | undefined, rows: { runs: Row[]; counters: Row[]; schedules: Row | undefined; workspaces: Row | undefined }): StatsSnapshot {
  const runs = Object.fromEntries(rows.runs.map((r) => [String(r.status), Number(r.n)])) as Record<string, number>;
  // One org set: the sums of its workspaces' counters (every row of a workspace shares its org).
  const c = rows.counters[0] ?? {};
  const counters: Record<string, number> =
    orgs === undefined
      ? Object.fromEntries(rows.counters.map((r) => [String(r.name), Number(r.value)]))
      : { 'assets.total': Number(c.assets), 'vulns.critical': Number(c.critical), 'vulns.high': Number(c.high), 'vulns.medium': Number(c.medium), 'vulns.low': Number(c.low), 'vulns.info': Number(c.info) };
  const sev = (s: string) => counters[`vulns.${s}`] ?? 0;
  const vulnerabilities = { critical: sev('critical'), high: sev('high'), medium: sev('medium'), low: sev('low'), info: sev('info') };
  const r = (s: string) => runs[s] ?? 0;
  return {
    runs: {
      total: Object.values(runs).reduce((a, b) => a + b, 0),
      completed: r('completed'),
      running: r('running'),
      failed: r('failed'),
      pending: r('pending') + r('queued'),
      cancelled: r('cancelled'),
    },
    workspaces: { total: Number(rows.workspaces?.n ?? 0) },
    assets: { total: counters['assets.total'] ?? 0 },
    vulnerabilities: { total: Object.values(vulnerabilities).reduce((a, b) => a + b, 0), ...vulnerabilities },
    schedules: { total: Number(rows.schedules?.total ?? 0), enabled: Number(rows.schedules?.enabled ?? 0) },
  };
}

/** Creates the stats repository on one connection. */
export function createStatsRepo(db: Db, q: StatementCache): StatsRepo {
  return {
    snapshot(orgs) {
      return db.transaction((): StatsSnapshot => {
        const sql = statsSql(orgs);
        return toStatsSnapshot(orgs, {
          runs: q(sql.runs).all(...sql.params) as Row[],
          counters: q(sql.counters).all(...(orgs === undefined ? [] : sql.params)) as Row[],
          schedules: q(sql.schedules).get(...sql.params) as Row | undefined,
          workspaces: q(sql.workspaces).get(...sql.params) as Row | undefined,
        });
      })();
    },
  };
}
