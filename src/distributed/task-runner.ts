/**
 * A worker's side of one task: the workflow is looked up by NAME in the worker's own workflows
 * folder (never a path from the queue), the run is recorded in the worker's own database as a
 * scratch copy (same run_uuid, trigger_type and run_mode `distributed`) and executed by the
 * engine exactly like a local run. What the engine recorded becomes the task's result.
 */
import { isOsmError, messageOf } from '../errors.js';
import type { AppContext } from '../services/context.js';
import { executeStoredRun, validateRunInputs } from '../services/runs.js';
import { resolveWorkflowFile } from '../services/workflows.js';
import { validateTarget } from '../workflow/target.js';
import { checkRunOptions } from '../services/run-options.js';
import { isSafeName } from '../util/fs-safe.js';
import { analyzeTarget } from '../workflow/heuristics.js';
import type { RunRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { boundResult, executionLogWithin, PROTOCOL_VERSION, RESULT_LIMITS, type TaskData, type TaskProgress, type TaskResult } from './protocol.js';
import { WORKER_POLL_MS } from './keys.js';

export interface TaskContext {
  workerId: string;
  hostname: string;
  /** The attempt number (fencing token) of this execution. */
  attempt?: number;
  /** Called when progress changed (at most every WORKER_POLL_MS). */
  onProgress?: (p: TaskProgress) => void;
}

/** The task cannot run on this worker (missing or mismatched workflow, invalid input). */
export class TaskRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskRejected';
  }
}

/** Loads the task's workflow from this worker's folder; a clear error when it is not there. */
function workflowFor(app: AppContext, data: TaskData, workerId: string) {
  let file: string;
  try {
    file = resolveWorkflowFile(app, data.workflow_name);
  } catch (err) {
    if (isOsmError(err) && err.status === 404) {
      throw new TaskRejected(`workflow not found on worker ${workerId}: ${data.workflow_name} (looked in ${app.settings().paths.workflows})`);
    }
    throw new TaskRejected(`invalid workflow name in task: ${messageOf(err)}`);
  }
  const wf = app.loader.loadFile(file);
  if (wf.kind !== data.workflow_kind) throw new TaskRejected(`workflow ${data.workflow_name} is a ${wf.kind} on worker ${workerId}, the task expects a ${data.workflow_kind}`);
  return wf;
}

/** The task's inputs checked again (they come out of Redis) and its workflow from this worker's folder. */
function checkTask(app: AppContext, data: TaskData, workerId: string) {
  let options: ReturnType<typeof checkRunOptions>;
  try {
    validateRunInputs([data.target], data.params, { emptyTarget: data.options.emptyTarget });
    options = checkRunOptions(data.options);
    if (options.dockerImage) validateTarget(options.dockerImage, 'docker_image');
    if (options.sshHost) validateTarget(options.sshHost, 'ssh_host');
    // Both name a folder under the workspaces folder: never a path.
    if (options.space && !isSafeName(options.space)) throw new TaskRejected(`options.space ${JSON.stringify(options.space)} is not a valid workspace name`);
    if (data.workspace && (/[/\\\u0000-\u001f\u007f]/.test(data.workspace) || /^\.+$/.test(data.workspace))) {
      throw new TaskRejected(`workspace ${JSON.stringify(data.workspace)} is not a valid workspace name`);
    }
  } catch (err) {
    throw new TaskRejected(messageOf(err));
  }
  return { wf: workflowFor(app, data, workerId), options };
}

/** Creates the scratch run row (replacing one left by an earlier attempt of the same task). */
async function scratchRun(app: AppContext, data: TaskData, workerId: string): Promise<{ run: RunRecord; wf: Workflow }> {
  const { wf, options } = checkTask(app, data, workerId);
  const earlier = await app.repos.runs.getByUuid(data.run_uuid);
  if (earlier) await app.repos.runs.delete(earlier.id);
  const run = await app.repos.runs.create({
    run_uuid: data.run_uuid,
    workflow_name: wf.name,
    workflow_kind: wf.kind,
    target: data.target,
    params: data.params,
    status: 'queued',
    workspace: data.workspace || analyzeTarget(data.target, { level: options.heuristics ?? 'basic', space: options.space }).targetSpace,
    trigger_type: 'distributed',
    trigger_name: workerId,
    priority: data.priority,
    run_mode: 'distributed',
    total_steps: app.loader.stepCount(wf),
    hooks_enabled: wf.hooks.pre_scan_steps.length + wf.hooks.post_scan_steps.length > 0,
    timeout_seconds: options.timeoutMs ? Math.round(options.timeoutMs / 1000) : 0,
    runner_type: options.runnerType ?? 'host',
    // Webhooks are the master's job (it knows when the result is recorded).
    options: { ...options, workflow_path: wf.file_path, disableNotification: true },
    owner_pid: process.pid,
  });
  return { run, wf };
}

/**
 * The master's own run row, for a worker writing straight into the master's database (`app` is
 * then the attempt's fenced store, which claimRun already gave to this attempt). Webhooks stay
 * the master's job: the notification is switched off for this execution only (not in the row).
 */
async function sharedRun(app: AppContext, data: TaskData, workerId: string): Promise<{ run: RunRecord; wf: Workflow }> {
  const { wf } = checkTask(app, data, workerId);
  const run = await app.repos.runs.getByUuid(data.run_uuid);
  if (!run) throw new TaskRejected(`run ${data.run_uuid} is not in the shared database`);
  if (run.workflow_name !== wf.name) throw new TaskRejected(`run ${data.run_uuid} is a run of ${run.workflow_name}, the task names ${wf.name}`);
  return { run: { ...run, options: { ...(run.options ?? {}), disableNotification: true } }, wf };
}

/**
 * A run's lines of its workspace's run-execution.log, kept for its result up to
 * RESULT_LIMITS.executionLog bytes (the first lines; the rest is counted and noted).
 */
export class ExecutionLines {
  private readonly parts: string[] = [];
  private bytes = 0;
  private omitted = 0;

  readonly add = (line: string): void => {
    const n = Buffer.byteLength(line);
    if (this.omitted === 0 && this.bytes + n <= RESULT_LIMITS.executionLog) {
      this.parts.push(line);
      this.bytes += n;
    } else {
      this.omitted += n;
    }
  };

  text(workerId: string): string {
    return executionLogWithin(this.parts.join(''), RESULT_LIMITS.executionLog, workerId, this.omitted);
  }
}

/** Progress of a run from the worker's database. */
async function progressOf(app: AppContext, run: RunRecord, workerId: string): Promise<TaskProgress> {
  const [cur, steps] = await Promise.all([app.repos.runs.get(run.id), app.repos.steps.listByRun(run.id)]);
  const running = [...steps].reverse().find((s) => s.status === 'running');
  return { worker_id: workerId, completed_steps: (cur ?? run).completed_steps, total_steps: (cur ?? run).total_steps, current_step: running?.step_name ?? '' };
}

/**
 * The run as recorded in the worker's database, bounded for the queue. A `direct` result (the run
 * was written straight into the master's database) carries no steps or events: they are there
 * already, and the master does not read them from the result.
 */
export async function collectResult(app: AppContext, runId: number, ctx: Pick<TaskContext, 'workerId' | 'hostname'>, direct = false, lines?: ExecutionLines): Promise<TaskResult> {
  const run = await app.repos.runs.get(runId);
  if (!run) throw new Error(`scratch run ${runId} disappeared`);
  const status = run.status === 'completed' || run.status === 'cancelled' ? run.status : 'failed';
  const [events, steps, artifacts] = await Promise.all([
    direct ? [] : app.repos.events.list({ run_id: run.run_uuid }, { offset: 0, limit: RESULT_LIMITS.maxEvents }).then((p) => p.data.reverse()), // awaited below
    direct ? [] : app.repos.steps.listByRun(run.id), // awaited below
    app.repos.artifacts.listByRun(run.id), // awaited below
  ]);
  return boundResult({
    v: PROTOCOL_VERSION,
    worker_id: ctx.workerId,
    hostname: ctx.hostname,
    run: {
      status,
      started_at: run.started_at,
      completed_at: run.completed_at,
      error_message: run.error_message || (status === 'failed' && run.status !== 'failed' ? `run ended in status ${run.status} on the worker` : ''),
      total_steps: run.total_steps,
      completed_steps: run.completed_steps,
      workspace: run.workspace,
    },
    steps: steps.map((s) => ({
      step_uuid: s.step_uuid,
      workspace: s.workspace,
      module_name: s.module_name,
      step_name: s.step_name,
      step_type: s.step_type,
      step_index: s.step_index,
      status: s.status,
      command: s.command,
      output: s.output,
      error_message: s.error_message,
      exports: s.exports ?? {},
      duration_ms: s.duration_ms,
      log_file: s.log_file,
      started_at: s.started_at,
      completed_at: s.completed_at,
      created_at: s.created_at,
    })),
    events: events.map((e) => ({
      topic: e.topic,
      event_id: e.event_id,
      name: e.name,
      source: e.source,
      source_type: e.source_type,
      data_type: e.data_type,
      data: e.data,
      workspace: e.workspace,
      workflow_name: e.workflow_name,
      processed: e.processed,
      error: e.error,
      created_at: e.created_at,
    })),
    artifacts: artifacts.map((a) => ({
      workspace: a.workspace,
      name: a.name,
      artifact_path: a.artifact_path,
      artifact_type: a.artifact_type,
      content_type: a.content_type,
      size_bytes: a.size_bytes,
      line_count: a.line_count,
      optional: a.optional,
      description: a.description,
    })),
    truncated: events.length >= RESULT_LIMITS.maxEvents,
    ...(direct ? { direct: true } : {}),
    ...(lines ? { execution_log: lines.text(ctx.workerId) } : {}),
  });
}

/**
 * Executes one task and returns its result. A workflow that fails is a result (status failed),
 * not an error: only a task this worker cannot run throws (TaskRejected). `cancelledBeforeStart`
 * short-cuts a task whose cancellation flag was already set.
 */
export async function runTask(app: AppContext, data: TaskData, ctx: TaskContext, opts: { cancelledBeforeStart?: boolean; direct?: boolean } = {}): Promise<{ result: TaskResult; run: RunRecord }> {
  const { run, wf } = opts.direct ? await sharedRun(app, data, ctx.workerId) : await scratchRun(app, data, ctx.workerId);
  if (opts.cancelledBeforeStart) {
    await app.repos.runs.transition(run.id, 'cancelled', { error_message: 'Cancelled by user' });
    return { result: await collectResult(app, run.id, ctx, opts.direct), run };
  }
  // The workspace's run-execution.log is shared by its runs: the result carries this run's lines.
  // Not for a run written straight into a shared database: the master then mirrors the folder the
  // workspace's row names (the worker's own), where these lines already are.
  const lines = opts.direct ? undefined : new ExecutionLines();
  let last = '';
  const report = async () => {
    if (!ctx.onProgress) return;
    const p = await progressOf(app, run, ctx.workerId);
    const key = JSON.stringify(p);
    if (key === last) return;
    last = key;
    ctx.onProgress(p);
  };
  // Progress is best effort (a read that fails is tried again at the next tick); one read at a time, in order.
  let reading: Promise<void> | undefined;
  const tick = (): Promise<void> =>
    (reading ??= report()
      .catch(() => undefined)
      .finally(() => {
        reading = undefined;
      }));
  // First report after one poll period: a run shorter than that reports nothing (its end record
  // carries the final counts, and the start record already made the master's run running).
  const timer = setInterval(() => void tick(), WORKER_POLL_MS);
  try {
    // The same path as a local run of the daemon (options carry disableNotification), with the
    // workflow checkTask loaded from this worker's folder (not loaded a second time).
    await executeStoredRun(app, run, { stdout: false, silent: true, color: false }, 'executor', {
      workflow: wf,
      ...(lines ? { executionLog: lines.add } : {}),
      // The run's diff snapshots are the master's (it holds the workspace's rows from every worker);
      // a worker writing into the shared database records them there itself.
      noDiff: !opts.direct,
    });
  } finally {
    clearInterval(timer);
  }
  await reading;
  return { result: await collectResult(app, run.id, ctx, opts.direct, lines), run };
}

/** A TaskRejected, or a catalogue error, as the job's failure message. */
export function rejectionMessage(err: unknown): string {
  return err instanceof TaskRejected || isOsmError(err) ? err.message : `worker error: ${messageOf(err)}`;
}

