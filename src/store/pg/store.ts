/**
 * The PostgreSQL runtime store: a pool, the migrations applied on open (as openStore does for
 * SQLite), and the PostgreSQL repositories behind the AsyncStore interface of ../async.ts.
 * Every repository has one (a missing one is a compile error).
 */
import { errors } from '../../errors.js';
import { REPO_NAMES, type AsyncRepos, type AsyncStore, type RepoName } from '../async.js';
import { hostPort, pgTarget, type PgTarget } from './config.js';
import { isConnectionError, pgDb, type PgDb } from './db.js';
import { applyPgMigrations } from './migrate.js';
import { checkout, describePgError, openPgPool } from './pool.js';
import { createPgRunsRepo } from './repos/runs.js';
import { createPgStepsRepo } from './repos/steps.js';
import { createPgEventsRepo } from './repos/events.js';
import { createPgArtifactsRepo } from './repos/artifacts.js';
import { createPgAttemptsRepo } from './repos/attempts.js';
import { createPgLeasesRepo } from './repos/leases.js';
import { createPgOrgsRepo } from './repos/orgs.js';
import { createPgWorkflowsRepo } from './repos/workflows.js';
import { createPgWorkspacesRepo } from './repos/workspaces.js';
import { createPgSchedulesRepo } from './repos/schedules.js';
import { createPgWebhookRunsRepo } from './repos/webhook-runs.js';
import { createPgAssetsRepo } from './repos/assets.js';
import { createPgVulnsRepo } from './repos/vulns.js';
import { createPgAccessRepo } from './repos/access.js';
import { createPgMaintenanceRepo } from './repos/maintenance.js';
import { createPgAssetStatsRepo, createPgDiffSnapshotsRepo, createPgStatsRepo } from './repos/reports.js';

/** Every repository's PostgreSQL implementation (the mapped type makes a missing one a compile error). */
const FACTORIES: { [K in RepoName]: (db: PgDb) => AsyncRepos[K] } = {
  runs: createPgRunsRepo,
  steps: createPgStepsRepo,
  events: createPgEventsRepo,
  artifacts: createPgArtifactsRepo,
  attempts: createPgAttemptsRepo,
  leases: createPgLeasesRepo,
  orgs: createPgOrgsRepo,
  workflows: createPgWorkflowsRepo,
  workspaces: createPgWorkspacesRepo,
  schedules: createPgSchedulesRepo,
  webhookRuns: createPgWebhookRunsRepo,
  assets: createPgAssetsRepo,
  vulns: createPgVulnsRepo,
  assetDiffs: (db) => createPgDiffSnapshotsRepo(db, 'asset_diffs'),
  vulnDiffs: (db) => createPgDiffSnapshotsRepo(db, 'vuln_diffs'),
  stats: createPgStatsRepo,
  assetStats: createPgAssetStatsRepo,
  access: createPgAccessRepo,
  maintenance: createPgMaintenanceRepo,
};

export interface PgStoreOptions {
  /** Pool size (default 10). */
  max?: number;
  /** Apply pending migrations on open (default true, like openStore). */
  migrate?: boolean;
}

/** Opens the PostgreSQL store at `target` (a postgres:// URL or a parsed target). */
export async function openPgStore(target: string | PgTarget, opts: PgStoreOptions = {}): Promise<AsyncStore> {
  const t = typeof target === 'string' ? pgTarget(target) : target;
  const max = opts.max ?? 10;
  const pool = openPgPool(t, { max });
  const db = pgDb(pool, hostPort(t));
  try {
    if (opts.migrate !== false) await applyPgMigrations(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (isConnectionError(err)) throw errors.unavailable(`PostgreSQL at ${hostPort(t)} is unavailable: ${describePgError(err)}`);
    throw err;
  }
  const repos = Object.fromEntries(REPO_NAMES.map((name) => [name, FACTORIES[name](db)])) as AsyncRepos;
  let closed = false;
  return {
    ...repos,
    engine: 'postgresql',
    tx: (fn) => db.tx(fn),
    async warm(connections) {
      // Checked out together, so each is a connection of its own; released to the pool as idle.
      const n = Math.max(0, Math.min(Math.trunc(connections), max));
      const held = await Promise.allSettled(Array.from({ length: n }, () => checkout(pool)));
      for (const h of held) if (h.status === 'fulfilled') h.value.release();
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
