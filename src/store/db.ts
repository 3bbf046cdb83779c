/**
 * Opens the SQLite store: pragmas, migrations, and one repository per table sharing a
 * per-connection statement cache. One connection per process; SQLite serialises writers.
 * Write transactions are IMMEDIATE: a deferred one that reads first cannot wait for a concurrent
 * writer from another process (it fails with SQLITE_BUSY_SNAPSHOT instead of honouring busy_timeout).
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { errors } from '../errors.js';
import { applyMigrations, latestVersion, schemaVersion } from './migrate.js';
import { statementCache, type Db } from './sql.js';
import { createRunsRepo, type RunsRepo } from './runs.js';
import { createStepsRepo, type StepsRepo } from './steps.js';
import { createArtifactsRepo, type ArtifactsRepo } from './artifacts.js';
import { createAssetsRepo, type AssetsRepo } from './assets.js';
import { createDiffSnapshotsRepo, type DiffSnapshotsRepo } from './asset-diffs.js';
import { createVulnsRepo, type VulnsRepo } from './vulns.js';
import { createEventsRepo, type EventsRepo } from './events.js';
import { createSchedulesRepo, type SchedulesRepo } from './schedules.js';
import { createWorkflowsRepo, type WorkflowsRepo } from './workflows.js';
import { createWorkspacesRepo, type WorkspacesRepo } from './workspaces.js';
import { createStatsRepo, type StatsRepo } from './stats.js';
import { createOrgsRepo, type OrgsRepo } from './orgs.js';
import { createWebhookRunsRepo, type WebhookRunsRepo } from './webhook-runs.js';
import { createAccessRepo, type AccessRepo } from './access.js';
import { createMaintenanceRepo, type MaintenanceRepo } from './maintenance.js';
import { createAssetStatsRepo, type AssetStatsRepo } from './asset-stats.js';
import { createAttemptsRepo, type AttemptsRepo } from './attempts.js';
import { createLeasesRepo, type LeasesRepo } from './leases.js';

export interface Store {
  db: Database.Database;
  /** The database file path as given (':memory:' for an in-memory store). */
  path: string;
  runs: RunsRepo;
  steps: StepsRepo;
  artifacts: ArtifactsRepo;
  assets: AssetsRepo;
  /** Asset diff snapshots, one per completed run. */
  assetDiffs: DiffSnapshotsRepo;
  /** Vulnerability diff snapshots (migration 008), one per completed run next to the asset one. */
  vulnDiffs: DiffSnapshotsRepo;
  vulns: VulnsRepo;
  events: EventsRepo;
  schedules: SchedulesRepo;
  workflows: WorkflowsRepo;
  workspaces: WorkspacesRepo;
  stats: StatsRepo;
  /** Webhook run templates (`osm run --as-webhook`). */
  webhookRuns: WebhookRunsRepo;
  /** Organizations (migration 007). */
  orgs: OrgsRepo;
  /** Users, API tokens, JWT versions and the audit log (migration 011). */
  access: AccessRepo;
  /** Liveness, integrity, tables and schema version (maintenance commands, health). */
  maintenance: MaintenanceRepo;
  /** Asset facets and the trigger-kept facet counts (asset_status_counts, asset_type_counts). */
  assetStats: AssetStatsRepo;
  /** Attempts of distributed runs (migration 016). */
  attempts: AttemptsRepo;
  /** Named expiring leases (migration 017): the scheduler leader among daemons sharing a database. */
  leases: LeasesRepo;
  /** Runs `fn` in an IMMEDIATE transaction (a savepoint when already inside one). */
  tx<T>(fn: () => T): T;
  /** Whether a transaction is open on the connection. */
  inTransaction(): boolean;
  /** Rolls back a transaction left open (a script cut off mid-import); false when none was. */
  rollbackOpen(): boolean;
  close(): void;
}

export interface OpenOptions {
  /** Open without write access: no migrations, and the schema must already be current. */
  readonly?: boolean;
}

/** Opens (creating and migrating when needed) the store at `path`; ':memory:' gives a private in-memory store. */
export function openStore(path: string, opts: OpenOptions = {}): Store {
  const memory = path === ':memory:' || path === '';
  if (!memory && !opts.readonly) {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    createPrivate(path);
  }
  const db = new Database(memory ? ':memory:' : path, { readonly: Boolean(opts.readonly), fileMustExist: Boolean(opts.readonly) });
  try {
    applyPragmas(db, Boolean(opts.readonly));
    if (!memory && !opts.readonly) tightenModes(path);
    if (opts.readonly) {
      const version = schemaVersion(db);
      if (version !== latestVersion()) {
        throw errors.unavailable(`database schema is at version ${version}, expected ${latestVersion()}; open it once without readonly to migrate`);
      }
    } else {
      applyMigrations(db);
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return buildStore(db, memory ? ':memory:' : path);
}

/**
 * Creates the database file 0600 before SQLite opens it: SQLite gives the -wal and -shm files
 * the mode of the database file, so all three are private from the start, whatever the umask.
 */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Brings the database, -wal and -shm files of an older install (or a loose umask) to 0600. */
function tightenModes(path: string): void {
  if (process.platform === 'win32') return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if (statSync(file).mode & 0o077) chmodSync(file, 0o600);
    } catch {
      // missing (no WAL yet) or not ours to change: SQLite reports real problems itself
    }
  }
}

function applyPragmas(db: Db, readonly: boolean): void {
  // journal_mode needs write access; a read-only connection uses whatever the file already has.
  if (!readonly) db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  // 32 MB of page cache (default 2 MB): the asset and vulnerability indexes of a million-row
  // workspace stop paying page reads on every insert and deep list page.
  db.pragma('cache_size = -32000');
}

function buildStore(db: Db, path: string): Store {
  const q = statementCache(db);
  const runs = createRunsRepo(db, q);
  const steps = createStepsRepo(db, q);
  const artifacts = createArtifactsRepo(db, q);
  const assets = createAssetsRepo(db, q);
  const assetDiffs = createDiffSnapshotsRepo(db, q, 'asset_diffs');
  const vulnDiffs = createDiffSnapshotsRepo(db, q, 'vuln_diffs');
  const vulns = createVulnsRepo(db, q);
  const events = createEventsRepo(db, q);
  const schedules = createSchedulesRepo(db, q);
  const workflows = createWorkflowsRepo(db, q);
  const workspaces = createWorkspacesRepo(db, q);
  const stats = createStatsRepo(db, q);
  const orgs = createOrgsRepo(db, q);
  const webhookRuns = createWebhookRunsRepo(db, q);
  const access = createAccessRepo(db, q);
  const maintenance = createMaintenanceRepo(db);
  const assetStats = createAssetStatsRepo(db);
  const attempts = createAttemptsRepo(db, q);
  const leases = createLeasesRepo(db, q);
  return {
    db,
    path,
    runs,
    steps,
    artifacts,
    assets,
    assetDiffs,
    vulnDiffs,
    vulns,
    events,
    schedules,
    workflows,
    workspaces,
    stats,
    webhookRuns,
    orgs,
    access,
    maintenance,
    assetStats,
    attempts,
    leases,
    tx: <T>(fn: () => T): T => db.transaction(fn).immediate(),
    inTransaction: () => db.open && db.inTransaction,
    rollbackOpen: () => {
      if (!db.open || !db.inTransaction) return false;
      try {
        db.exec('ROLLBACK');
        return true;
      } catch {
        return false; // closed by SQLite already
      }
    },
    close: () => {
      if (db.open) db.close();
    },
  };
}
