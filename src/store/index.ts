/** The SQLite store: open it with openStore; every table is reached through its repository. */
export { openStore, type Store, type OpenOptions } from './db.js';
export { applyMigrations, schemaVersion, latestVersion } from './migrate.js';
export { migrations, type Migration } from './migrations/index.js';
export * from './types.js';
export type { RunRecord, RunCreateInput, RunListFilter, RunPatch, RunsRepo } from './runs.js';
export type { StepRecord, StepCreateInput, StepPatch, StepListFilter, StepsRepo } from './steps.js';
export type { ArtifactRecord, ArtifactInput, ArtifactListFilter, ArtifactsRepo } from './artifacts.js';
export type { AssetRecord, AssetInput, AssetListFilter, AssetsRepo } from './assets.js';
export type { AssetDiffRecord, AssetDiffInput, AssetDiffsRepo } from './asset-diffs.js';
export { normalizeSeverity, vulnFingerprint } from './vulns.js';
export type { VulnRecord, VulnInput, VulnListFilter, VulnSummary, VulnsRepo } from './vulns.js';
export type { EventRecord, EventInput, EventListFilter, EventsRepo } from './events.js';
export type { ScheduleRecord, ScheduleInput, SchedulePatch, SchedulesRepo } from './schedules.js';
export type { WorkflowRow, WorkflowParamRow, WorkflowListFilter, WorkflowsRepo } from './workflows.js';
export type { WorkspaceRecord, WorkspaceRunInfo, WorkspaceListFilter, WorkspaceDeleteCounts, WorkspacesRepo } from './workspaces.js';
export type { StatsSnapshot, StatsRepo } from './stats.js';
