import type { RegisterRoutes } from '../app.js';
import { registerHealthRoutes } from './health.js';
import { registerAuthRoutes } from './auth.js';

/** Every route module of the API. */
export const ROUTE_MODULES: RegisterRoutes[] = [registerHealthRoutes, registerAuthRoutes];
import { registerWorkflowRoutes } from './workflows.js'; ROUTE_MODULES.push(registerWorkflowRoutes);
import { registerRunRoutes } from './runs.js'; ROUTE_MODULES.push(registerRunRoutes);
import { registerJobRoutes } from './jobs.js'; ROUTE_MODULES.push(registerJobRoutes);
import { registerStepResultRoutes } from './step-results.js'; ROUTE_MODULES.push(registerStepResultRoutes);
import { registerEventLogRoutes } from './event-logs.js'; ROUTE_MODULES.push(registerEventLogRoutes);
import { registerStatsRoutes } from './stats.js'; ROUTE_MODULES.push(registerStatsRoutes);
import { registerUploadRoutes } from './uploads.js'; ROUTE_MODULES.push(registerUploadRoutes);
import { registerSettingsRoutes } from './settings.js'; ROUTE_MODULES.push(registerSettingsRoutes);
import { registerWorkspaceRoutes } from './workspaces.js'; ROUTE_MODULES.push(registerWorkspaceRoutes);
import { registerFunctionRoutes } from './functions.js'; ROUTE_MODULES.push(registerFunctionRoutes);
import { registerLlmRoutes } from './llm.js'; ROUTE_MODULES.push(registerLlmRoutes);
import { registerScheduleRoutes } from './schedules.js'; ROUTE_MODULES.push(registerScheduleRoutes);
import { registerEventRoutes } from './events.js'; ROUTE_MODULES.push(registerEventRoutes);
import { registerAssetRoutes } from './assets.js'; ROUTE_MODULES.push(registerAssetRoutes);
import { registerVulnRoutes } from './vulns.js'; ROUTE_MODULES.push(registerVulnRoutes);
import { registerSnapshotRoutes } from './snapshots.js'; ROUTE_MODULES.push(registerSnapshotRoutes);
import { registerRegistryRoutes } from './registry.js'; ROUTE_MODULES.push(registerRegistryRoutes);
import { registerDistributedRoutes } from './distributed.js'; ROUTE_MODULES.push(registerDistributedRoutes);
import { registerWebhookRunRoutes } from './webhook-runs.js'; ROUTE_MODULES.push(registerWebhookRunRoutes);
import { registerArtifactRoutes } from './artifacts.js'; ROUTE_MODULES.push(registerArtifactRoutes);
import { registerDatabaseRoutes } from './database.js'; ROUTE_MODULES.push(registerDatabaseRoutes);
import { registerReferenceReadRoutes } from './reference-reads.js'; ROUTE_MODULES.push(registerReferenceReadRoutes);
import { registerOrgRoutes } from './orgs.js'; ROUTE_MODULES.push(registerOrgRoutes);
