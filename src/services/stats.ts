/**
 * GET /stats: the system statistics object of the spec, from counters (never a COUNT over a large
 * table). Workflow numbers come from the index (total = flows + modules); vulnerability `total`
 * is the sum of critical, high, medium and low, as the spec defines it, with `info` reported
 * next to it; run `pending` includes queued runs and `cancelled` is added.
 */
import type { AppContext } from './context.js';
import { UNRESTRICTED, type Scope } from '../auth/scope.js';

export interface SystemStats {
  workflows: { total: number; flows: number; modules: number };
  runs: { total: number; completed: number; running: number; failed: number; pending: number; cancelled: number };
  workspaces: { total: number };
  assets: { total: number };
  vulnerabilities: { total: number; critical: number; high: number; medium: number; low: number; info: number };
  schedules: { total: number; enabled: number };
}

/** One consistent snapshot of every counter shown by GET /stats. */
export async function systemStats(app: AppContext, scope: Scope = UNRESTRICTED): Promise<SystemStats> {
  // A credential bound to orgs counts only its orgs' rows (workflows are shared by everyone).
  const snap = await app.repos.stats.snapshot(scope.orgs ?? undefined);
  const wf = await app.repos.workflows.countByKind();
  const v = snap.vulnerabilities;
  return {
    workflows: { total: wf.flows + wf.modules, flows: wf.flows, modules: wf.modules },
    runs: { ...snap.runs },
    workspaces: { total: snap.workspaces.total },
    assets: { total: snap.assets.total },
    vulnerabilities: { total: v.critical + v.high + v.medium + v.low, critical: v.critical, high: v.high, medium: v.medium, low: v.low, info: v.info },
    schedules: { total: snap.schedules.total, enabled: snap.schedules.enabled },
  };
}
