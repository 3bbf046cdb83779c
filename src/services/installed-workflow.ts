/**
 * Which workflow a stored run executes. A run row can come from an API client, a schedule, a
 * webhook, a distributed task or (before import cleaned it) a snapshot archive, so its workflow is
 * found by NAME inside the workflows folder — never from a path the row carries. The one exception
 * is the operator's own `osm run -f ./file.yaml`, whose workflow the CLI hands to the engine
 * in-process (see executeStoredRun), so no row ever needs to name a file outside the folder.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { errors, isOsmError } from '../errors.js';
import type { RunRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { isInside } from '../util/fs-safe.js';
import type { AppContext } from './context.js';
import { storedRunOptions } from './run-options.js';
import { resolveWorkflowFile } from './workflows.js';

/** The installed workflow of that name; 404 naming it when the workflows folder has none. */
export function installedWorkflow(app: AppContext, name: string): Workflow {
  let file: string;
  try {
    file = resolveWorkflowFile(app, name);
  } catch (err) {
    if (isOsmError(err) && (err.code === 'OSM_ERR_API_WORKFLOW_NOT_FOUND' || err.code === 'OSM_ERR_INVALID_WORKFLOW_NAME')) throw errors.runWorkflowMissing(name);
    throw err;
  }
  return app.loader.loadFile(file);
}

/**
 * The workflow a stored run executes: the file recorded when it was created if that file lies
 * inside the workflows folder and still carries the run's workflow name (a YAML `name:` may differ
 * from the file name), else the installed workflow of that name.
 */
export function storedRunWorkflow(app: AppContext, run: Pick<RunRecord, 'workflow_name' | 'options'>): Workflow {
  const recorded = storedRunOptions(run.options).workflow_path;
  if (recorded && isAbsolute(recorded) && isInside(resolve(app.settings().paths.workflows), resolve(recorded)) && isFile(recorded)) {
    try {
      const wf = app.loader.loadFile(recorded);
      if (wf.name === run.workflow_name) return wf;
    } catch {
      // An invalid or renamed file: the name decides.
    }
  }
  return installedWorkflow(app, run.workflow_name);
}

/**
 * Refuses a workflow named on the command line that the daemon would not find by name: queued
 * runs, schedules and webhook templates execute later, from the workflows folder only.
 */
export function assertInstalledWorkflow(app: AppContext, wf: Workflow, what: string): void {
  let installed: string | undefined;
  try {
    installed = resolveWorkflowFile(app, wf.name);
  } catch (err) {
    if (!isOsmError(err)) throw err;
  }
  if (!installed || resolve(installed) !== resolve(wf.file_path)) {
    throw errors.workflowNotInstalled(what, wf.name, wf.file_path, app.settings().paths.workflows);
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
