/** The SQLite store: open it with openStore; every table is reached through its repository. */
export { openStore, type Store, type OpenOptions } from './db.js';
/** The async repository interface over both engines (PostgreSQL: src/store/pg/store.ts openPgStore). */
export { asyncSqlite, REPO_NAMES, type Async, type AsyncRepos, type AsyncStore, type RepoName } from './async.js';
export { applyMigrations, schemaVersion, latestVersion } from './migrate.js';
export { migrations, type Migration } from './migrations/index.js';
export * from './types.js';
export type { RunRecord, RunCreateInput, RunListFilter, RunPatch, RunsRepo, RunScopeLayer, RunScopeStats } from './runs.js';
export type { StepRecord, StepCreateInput, StepPatch, StepListFilter, StepsRepo } from './steps.js';
export type { ArtifactRecord, ArtifactInput, ArtifactListFilter, ArtifactsRepo } from './artifacts.js';
export type { AssetRecord, AssetInput, AssetListFilter, AssetsRepo } from './assets.js';
export { DIFF_SNAPSHOT_TABLES } from './asset-diffs.js';
export type { DiffSnapshotRecord, DiffSnapshotInput, DiffSnapshotsRepo, DiffSnapshotTable, AssetDiffRecord, AssetDiffInput, AssetDiffsRepo } from './asset-diffs.js';
export { normalizeSeverity, vulnFingerprint } from './vulns.js';
export type { VulnRecord, VulnInput, VulnListFilter, VulnSummary, VulnsRepo } from './vulns.js';
export type { EventRecord, EventInput, EventListFilter, EventsRepo } from './events.js';
export type { ScheduleRecord, ScheduleInput, SchedulePatch, SchedulesRepo } from './schedules.js';
export type { WorkflowRow, WorkflowParamRow, WorkflowListFilter, WorkflowsRepo } from './workflows.js';
export type { WorkspaceRecord, WorkspaceRunInfo, WorkspaceListFilter, WorkspaceDeleteCounts, WorkspacesRepo } from './workspaces.js';
export type { StatsSnapshot, StatsRepo } from './stats.js';
export type { WebhookRunRecord, WebhookRunInput, WebhookRunsRepo } from './webhook-runs.js';
export { DEFAULT_ORG_UUID, DEFAULT_ORG_NAME } from './orgs.js';
export type { OrgRecord, OrgStats, OrgRowCounts, OrgCreateInput, OrgPatch, OrgsRepo } from './orgs.js';
export { ROLES } from './access.js';
export type { Role, UserRecord, TokenRecord, AuditRecord, AuditInput, AuditFilter, AccessRepo } from './access.js';
