import type { Command } from 'commander';

/**
 * Every top-level command registers itself here. A command module imports only commander and
 * light types; its action imports the implementation lazily so `osm --help` stays fast.
 */
export type RegisterCommand = (program: Command) => void;

export const COMMAND_MODULES: RegisterCommand[] = [];
import { registerConfig } from './config.js'; COMMAND_MODULES.push(registerConfig);
import { registerRun } from './run.js'; COMMAND_MODULES.push(registerRun);
import { registerWorkflow } from './workflow.js'; COMMAND_MODULES.push(registerWorkflow);
import { registerServe } from './serve.js'; COMMAND_MODULES.push(registerServe);
import { registerFunc, registerEvalShorthand } from './func.js'; COMMAND_MODULES.push(registerFunc, registerEvalShorthand);
import { registerSchedule } from './schedule.js'; COMMAND_MODULES.push(registerSchedule);
import { registerSnapshot } from './snapshot.js'; COMMAND_MODULES.push(registerSnapshot);
import { registerAssets } from './assets.js'; COMMAND_MODULES.push(registerAssets);
import { registerVulns } from './vulns.js'; COMMAND_MODULES.push(registerVulns);
import { registerInstall } from './install.js'; COMMAND_MODULES.push(registerInstall);
import { registerWorker } from './worker.js'; COMMAND_MODULES.push(registerWorker);
import { registerHealth } from './health.js'; COMMAND_MODULES.push(registerHealth);
import { registerDb } from './db.js'; COMMAND_MODULES.push(registerDb);
import { registerWebhook } from './webhook.js'; COMMAND_MODULES.push(registerWebhook);
import { registerOrg } from './org.js'; COMMAND_MODULES.push(registerOrg);
import { registerQuery } from './query.js'; COMMAND_MODULES.push(registerQuery);
import { registerTeam } from './team.js'; COMMAND_MODULES.push(registerTeam);
import { registerImport } from './import.js'; COMMAND_MODULES.push(registerImport);
import { registerScope } from './scope.js'; COMMAND_MODULES.push(registerScope);
import { registerReport } from './report.js'; COMMAND_MODULES.push(registerReport);
import { registerCompletion } from './completion.js'; COMMAND_MODULES.push(registerCompletion);
import { registerAgent } from './agent.js'; COMMAND_MODULES.push(registerAgent);
import { registerLogs } from './logs.js'; COMMAND_MODULES.push(registerLogs);
import { registerStorage } from './storage.js'; COMMAND_MODULES.push(registerStorage);
