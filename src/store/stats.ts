/**
 * The numbers behind GET /stats. Assets and vulnerabilities come from the trigger-kept counters;
 * runs and schedules from GROUP BYs over indexed columns; never a count of a large table.
 */
import { Where, type Db, type StatementCache } from './sql.js';
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

/** Creates the stats repository on one connection. */
export function createStatsRepo(db: Db, q: StatementCache): StatsRepo {
  const orgCounters = (org: Where): Record<string, number> => {
    const row = q(
      `SELECT COALESCE(SUM(total_assets), 0) AS assets, COALESCE(SUM(vuln_critical), 0) AS critical, COALESCE(SUM(vuln_high), 0) AS high,
              COALESCE(SUM(vuln_medium), 0) AS medium, COALESCE(SUM(vuln_low), 0) AS low, COALESCE(SUM(vuln_info), 0) AS info FROM workspaces ${org}`,
    ).get(...org.params) as Record<string, number>;
    return { 'assets.total': row.assets!, 'vulns.critical': row.critical!, 'vulns.high': row.high!, 'vulns.medium': row.medium!, 'vulns.low': row.low!, 'vulns.info': row.info! };
  };
  return {
    snapshot(orgs) {
      return db.transaction((): StatsSnapshot => {
        const org = new Where().oneOf('org_uuid', orgs);
        const runs = Object.fromEntries(
          (q(`SELECT status, COUNT(*) AS n FROM runs ${org} GROUP BY status`).all(...org.params) as { status: string; n: number }[]).map((r) => [r.status, r.n]),
        ) as Record<string, number>;
        // One org set: the sums of its workspaces' counters (every row of a workspace shares its org).
        const counters = orgs === undefined
          ? (Object.fromEntries((q('SELECT name, value FROM counters').all() as { name: string; value: number }[]).map((r) => [r.name, r.value])) as Record<string, number>)
          : orgCounters(org);
        const schedules = q(`SELECT COUNT(*) AS total, COALESCE(SUM(is_enabled), 0) AS enabled FROM schedules ${org}`).get(...org.params) as {
          total: number;
          enabled: number;
        };
        const workspaces = q(`SELECT COUNT(*) AS n FROM workspaces ${org}`).get(...org.params) as { n: number };
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
          workspaces: { total: workspaces.n },
          assets: { total: counters['assets.total'] ?? 0 },
          vulnerabilities: { total: Object.values(vulnerabilities).reduce((a, b) => a + b, 0), ...vulnerabilities },
          schedules: { total: schedules.total, enabled: schedules.enabled },
        };
      })();
    },
  };
}
