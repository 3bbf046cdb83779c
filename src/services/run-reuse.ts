/**
 * The use cases that turn a stored run into new work: duplicate, resume and start. A stored row is
 * not trusted because it is stored (it may have been inserted by any client, or restored from an
 * archive before import cleaned it): its target and params are validated exactly like a new run's,
 * its workflow is the installed one of its name, and its options are read through the allowlist.
 */
import { ownedOnOtherHost } from '../store/owner.js';
import { errors } from '../errors.js';
import type { RunRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { isAlive } from '../engine/process-registry.js';
import type { RunQueue } from '../engine/queue.js';
import type { AppContext } from './context.js';
import { findRun } from './run-control.js';
import { validateRunInputs } from './runs.js';
import { installedWorkflow, storedRunWorkflow } from './installed-workflow.js';
import { requestOptionsOf, type RunOptions } from './run-options.js';
import { UNRESTRICTED, type Scope } from '../auth/scope.js';

/** What a copy of `run` gets: its options (allowlisted), its workflow by name, checked inputs. */
function copyBasis(app: AppContext, run: RunRecord, opts: { operator: boolean; workflow?: Workflow }): { options: RunOptions; workflow: Workflow } {
  const options = requestOptionsOf(run.options, { operator: opts.operator });
  validateRunInputs([run.target], run.params ?? {}, { emptyTarget: options.emptyTarget });
  const workflow = opts.workflow ?? installedWorkflow(app, run.workflow_name);
  if (workflow.name !== run.workflow_name) {
    throw errors.validation(`the run's workflow is '${run.workflow_name}'; ${workflow.file_path} defines '${workflow.name}'`);
  }
  return { options, workflow };
}

/** Row fields a copy takes from its workflow and options rather than from the original row. */
function copyFields(app: AppContext, workflow: Workflow, options: RunOptions) {
  return {
    workflow_name: workflow.name,
    workflow_kind: workflow.kind,
    total_steps: app.loader.stepCount(workflow),
    hooks_enabled: workflow.hooks.pre_scan_steps.length + workflow.hooks.post_scan_steps.length > 0,
    timeout_seconds: options.timeoutMs ? Math.round(options.timeoutMs / 1000) : 0,
    runner_type: options.runnerType ?? 'host',
  };
}

/**
 * POST /runs/{id}/duplicate: a pending copy (same workflow, target, params, options, priority),
 * never executed by itself. Options only the operator's command line sets (-W, -T) are not copied.
 */
export async function duplicateRun(app: AppContext, idOrUuid: string, scope: Scope = UNRESTRICTED) {
  const run = await findRun(app, idOrUuid, scope);
  const { options, workflow } = copyBasis(app, run, { operator: false });
  const copy = await app.repos.runs.create({
    ...copyFields(app, workflow, options),
    target: run.target,
    params: run.params,
    status: 'pending',
    workspace: run.workspace,
    trigger_type: 'api',
    trigger_name: '',
    schedule_id: '',
    run_group_id: '',
    priority: run.priority,
    run_mode: run.run_mode,
    options: { ...options, workflow_path: workflow.file_path },
  });
  // The reference's fields (its web UI reads run_uuid) next to the spec's.
  return {
    message: 'Run duplicated',
    original_run_id: run.id,
    original_run_uuid: run.run_uuid,
    new_run_uuid: copy.run_uuid,
    run_uuid: copy.run_uuid,
    workflow: copy.workflow_name,
    target: copy.target,
    status: 'pending' as const,
  };
}

export interface ResumeOptions {
  status: 'queued' | 'pending';
  ownerPid?: number;
  /** `cli` for `osm run --resume` (the operator keeps the original's -W/-T); default `api`. */
  triggerType?: string;
  /** `osm run --resume X -f file`: the operator's own file for a workflow that is not installed. */
  workflow?: Workflow;
}

/**
 * Resume (POST /runs/{id}/resume, `osm run --resume`): a failed or cancelled run continues in a
 * NEW run (terminal statuses are never reopened) that reuses the original's completed steps and
 * their exports up to the first step that did not complete. Returns the new run and the names of
 * the steps that will be reused.
 */
export async function resumeRun(app: AppContext, idOrUuid: string, opts: ResumeOptions, scope: Scope = UNRESTRICTED) {
  const run = await findRun(app, idOrUuid, scope);
  if (run.status !== 'failed' && run.status !== 'cancelled') {
    throw errors.runState(`Cannot resume run with status '${run.status}'. Only failed or cancelled runs can be resumed.`);
  }
  const triggerType = opts.triggerType ?? 'api';
  const { options, workflow } = copyBasis(app, run, { operator: triggerType === 'cli', workflow: opts.workflow });
  const reused = (await app.repos.steps.listByRun(run.id)).filter((s) => s.status === 'completed').map((s) => (s.module_name && s.module_name !== run.workflow_name ? `${s.module_name}/${s.step_name}` : s.step_name));
  const copy = await app.repos.runs.create({
    ...copyFields(app, workflow, options),
    target: run.target,
    params: run.params,
    status: opts.status,
    workspace: run.workspace,
    trigger_type: triggerType,
    trigger_name: `resume:${run.run_uuid}`,
    run_group_id: run.run_group_id,
    priority: run.priority,
    run_mode: run.run_mode,
    options: { ...options, workflow_path: workflow.file_path, resume_of: run.id },
    owner_pid: opts.ownerPid ?? 0,
  });
  return { original: run, run: copy, workflow, reused };
}

/**
 * POST /runs/{id}/start: pending → queued; the queue starts it under the global limit. The row is
 * checked first like a new run (target, params, installed workflow), so a bad row is a 400/404
 * here rather than a failed run later.
 */
export async function startRun(app: AppContext, idOrUuid: string, queue?: RunQueue, scope: Scope = UNRESTRICTED) {
  const run = await findRun(app, idOrUuid, scope);
  if (run.status !== 'pending') throw errors.cannotStartRun(run.status);
  if (ownedOnOtherHost(run)) throw errors.runState(`Run is managed by an osm process on ${run.owner_host} (pid ${run.owner_pid}); start it there`);
  if (run.owner_pid && run.owner_pid !== process.pid && isAlive(run.owner_pid)) {
    throw errors.runState(`Run is managed by another osm process (pid ${run.owner_pid}); start it there`);
  }
  const options = requestOptionsOf(run.options, { operator: true });
  validateRunInputs([run.target], run.params ?? {}, { emptyTarget: options.emptyTarget });
  storedRunWorkflow(app, run);
  const queued = await app.repos.runs.transition(run.id, 'queued');
  if (!queued) throw errors.cannotStartRun((await app.repos.runs.get(run.id))?.status ?? run.status);
  queue?.kick();
  const now = (await app.repos.runs.get(run.id)) ?? queued;
  return { message: 'Run started', run_uuid: run.run_uuid, status: now.status };
}
