/**
 * Run use cases after creation: the API shapes of runs, steps and artifacts, lookups, cancel and
 * job progress (duplicate, resume and start live in run-reuse.ts). Status changes go through
 * `store.runs.transition` (sticky terminal states), and a cancel is written BEFORE any process is
 * killed so the engine, seeing its processes die, finds the run already cancelled and cannot turn
 * it into `failed`.
 */
import { errors } from '../errors.js';
import type { ArtifactRecord, Page, RunRecord, RunStatus, StepRecord, StepStatus } from '../store/index.js';
import { abortRun } from '../engine/executor.js';
import { isAlive, killGroupAndWait, sameProcess } from '../engine/process-registry.js';
import { isSecretKey, maskSecrets, REDACTED, redactVariables, secretValues } from '../workflow/tpl-redact.js';
import { settingsSecretValues } from '../settings/redact.js';
import { inScope, UNRESTRICTED, type Scope } from '../auth/scope.js';
import type { OrgFilter } from '../store/org-constants.js';
import type { AppContext } from './context.js';

/** A run as the API shows it (spec "Run"): exactly these fields. */
export interface RunApi {
  id: number;
  run_uuid: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params: Record<string, string>;
  status: RunStatus;
  workspace: string;
  started_at: string | null;
  completed_at: string | null;
  error_message: string;
  schedule_id: string;
  trigger_type: string;
  trigger_name: string;
  run_group_id: string;
  priority: string;
  total_steps: number;
  completed_steps: number;
  current_pid: number;
  created_at: string;
  updated_at: string;
}

/** The one record → API mapping of a run; secret-looking params are shown as [REDACTED]. */
export function runToApi(run: RunRecord): RunApi {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(run.params ?? {})) params[k] = isSecretKey(k) && v !== '' ? REDACTED : v;
  return {
    id: run.id,
    run_uuid: run.run_uuid,
    workflow_name: run.workflow_name,
    workflow_kind: run.workflow_kind,
    target: run.target,
    params,
    status: run.status,
    workspace: run.workspace,
    started_at: run.started_at,
    completed_at: run.completed_at,
    error_message: run.error_message ?? '',
    schedule_id: run.schedule_id ?? '',
    trigger_type: run.trigger_type,
    trigger_name: run.trigger_name ?? '',
    run_group_id: run.run_group_id ?? '',
    priority: run.priority,
    total_steps: run.total_steps,
    completed_steps: run.completed_steps,
    current_pid: run.current_pid || 0,
    created_at: run.created_at,
    updated_at: run.updated_at,
  };
}

/** Values that must never be shown: secret-looking params of the run, secret global vars and every secret of the settings. */
export function secretsOf(app: AppContext, run?: RunRecord): string[] {
  const settings = app.settings().settings;
  const globals = (settings.global_vars ?? {}) as Record<string, unknown>;
  return [...new Set([...secretValues(run?.params ?? {}), ...secretValues(globals), ...settingsSecretValues(settings)])].sort((a, b) => b.length - a.length);
}

function maskDeep(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') return maskSecrets(value, secrets);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, secrets, depth + 1));
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskDeep(v, secrets, depth + 1)]));
}

/**
 * A step result as the API shows it (spec "Step result"). In a run's step listing `id` is the
 * step's UUID; in GET /step-results it is the integer id and `workspace` is added.
 */
export function stepToApi(step: StepRecord, listing: 'run' | 'results', secrets: readonly string[] = []) {
  const base = {
    id: listing === 'run' ? step.step_uuid : step.id,
    run_id: step.run_id,
    step_name: step.step_name,
    step_type: step.step_type,
    status: step.status,
    command: maskSecrets(step.command, secrets),
    output: maskSecrets(step.output, secrets),
    error_message: maskSecrets(step.error_message, secrets),
    exports: redactVariables(maskDeep(step.exports ?? {}, secrets) as Record<string, unknown>),
    duration_ms: step.duration_ms,
    log_file: step.log_file,
    started_at: step.started_at,
    completed_at: step.completed_at,
    created_at: step.created_at,
  };
  return listing === 'results' ? { ...base, workspace: step.workspace } : base;
}

/** An artifact as the API shows it (spec "Artifact"). */
export function artifactToApi(a: ArtifactRecord) {
  return {
    id: a.id,
    run_id: a.run_id,
    workspace: a.workspace,
    name: a.name,
    artifact_path: a.artifact_path,
    artifact_type: a.artifact_type,
    content_type: a.content_type,
    size_bytes: a.size_bytes,
    line_count: a.line_count,
    description: a.description,
    created_at: a.created_at,
  };
}

/** A run by numeric id or run_uuid; 404 `Run not found` otherwise, also when it is outside the caller's orgs. */
export async function findRun(app: AppContext, idOrUuid: string | number, scope: Scope = UNRESTRICTED): Promise<RunRecord> {
  const run = await app.repos.runs.find(idOrUuid);
  if (!run || !inScope(scope, run.org_uuid)) throw errors.runNotFound();
  return run;
}

export interface RunListQuery {
  status?: RunStatus;
  workflow_name?: string;
  target?: string;
  workspace?: string;
  /** Only runs of this org (uuid) or these orgs. */
  org_uuid?: OrgFilter;
}

/** GET /runs: newest first. */
export async function listRuns(app: AppContext, filter: RunListQuery, page: Page): Promise<{ data: RunApi[]; total: number }> {
  const r = await app.repos.runs.list(filter, page);
  return { data: r.data.map(runToApi), total: r.total };
}

/** GET /runs/{id} with optional steps and artifacts. */
export async function getRun(app: AppContext, idOrUuid: string, include: { steps?: boolean; artifacts?: boolean } = {}, scope: Scope = UNRESTRICTED) {
  const run = await findRun(app, idOrUuid, scope);
  const running = run.status === 'running' ? await app.repos.steps.runningNames(run.id) : [];
  // Which step is running now (the spec's fields already say how many are done).
  // Attempts of a distributed run (issue 15): which worker ran it, every execution and why.
  const attempts = await app.repos.attempts.listByRun(run.run_uuid);
  const out: RunApi & { current_step: string; running_steps: string[]; worker: string; attempts: unknown[]; steps?: unknown[]; artifacts?: unknown[]; scope?: unknown } = {
    ...runToApi(run),
    current_step: running[0] ?? '',
    running_steps: running,
    worker: attempts.length > 0 ? attempts[attempts.length - 1]!.worker_id : '',
    attempts: attempts.map((a) => ({ attempt: a.attempt, worker_id: a.worker_id, started_at: a.started_at, ended_at: a.ended_at, outcome: a.outcome, cause: a.cause, error: a.error })),
  };
  if (include.steps) {
    const secrets = secretsOf(app, run);
    out.steps = (await app.repos.steps.listByRun(run.id)).map((s) => stepToApi(s, 'run', secrets));
  }
  if (include.artifacts) out.artifacts = (await app.repos.artifacts.listByRun(run.id)).map(artifactToApi);
  // Target scope (docs/scope.md): values dropped as out of scope, when the run had a scope.
  const scoped = await app.repos.runs.scopeStats(run.id);
  if (scoped) out.scope = scoped;
  return out;
}

/** GET /runs/{id}/steps, in execution order. */
export async function runSteps(app: AppContext, idOrUuid: string, scope: Scope = UNRESTRICTED) {
  const run = await findRun(app, idOrUuid, scope);
  const secrets = secretsOf(app, run);
  return (await app.repos.steps.listByRun(run.id)).map((s) => stepToApi(s, 'run', secrets));
}

/** GET /runs/{id}/artifacts, newest first. */
export async function runArtifacts(app: AppContext, idOrUuid: string, scope: Scope = UNRESTRICTED) {
  return (await app.repos.artifacts.listByRun((await findRun(app, idOrUuid, scope)).id)).map(artifactToApi);
}

const CANCELLABLE: readonly RunStatus[] = ['pending', 'queued', 'running'];

export type CancelResult =
  | { message: string; id: number; run_uuid: string; killed_pids: number[]; processes_terminated: number; kill_method: 'registry' | 'database_pid' }
  | { message: string; id: number; run_uuid: string; note: string };

/**
 * Cancels a run: the status is written first (sticky, with its event), then the processes are
 * killed — through this process's registry when the run executes here, else through the PID the
 * database records — and the call waits (bounded) until those process groups are gone.
 */
export async function cancelRun(app: AppContext, idOrUuid: string, scope: Scope = UNRESTRICTED): Promise<CancelResult> {
  const run = await findRun(app, idOrUuid, scope);
  if (!CANCELLABLE.includes(run.status)) throw errors.cannotCancelRun(run.status);
  const cancelled = await app.repos.tx(async () => {
    const next = await app.repos.runs.transition(run.id, 'cancelled', { error_message: 'Cancelled by user' });
    if (!next) return undefined;
    await app.repos.events.insert({
      topic: 'run.cancelled', name: 'run.cancelled', source: 'api', source_type: 'api', data_type: 'scan',
      data: { scan_id: run.run_uuid, target: run.target, previous_status: run.status },
      workspace: run.workspace, run_id: run.run_uuid, workflow_name: run.workflow_name, processed: true,
    });
    return next;
  });
  if (!cancelled) {
    // It reached a terminal state between the read and the write.
    throw errors.cannotCancelRun((await app.repos.runs.get(run.id))?.status ?? run.status);
  }

  const local = abortRun(run.run_uuid, 'cancelled');
  let pids = app.registry.pids(run.run_uuid);
  let method: 'registry' | 'database_pid' | undefined;
  if (pids.length > 0) {
    app.registry.killRun(run.run_uuid);
    method = 'registry';
  } else if (!local && run.current_pid > 1 && run.current_pid !== process.pid && (sameProcess(run.current_pid, run.current_pid_start) || (!isAlive(run.current_pid) && isAlive(-run.current_pid)))) {
    pids = [run.current_pid];
    method = 'database_pid';
  }
  // SIGTERM, SIGKILL after a grace period; returns once each group is gone (bounded).
  await Promise.all(pids.map((pid) => killGroupAndWait(pid, 5000)));
  const base = { message: 'Run cancelled successfully', id: run.id, run_uuid: run.run_uuid };
  if (!method) return { ...base, note: 'No active processes found to terminate; database status updated' };
  return { ...base, killed_pids: pids, processes_terminated: pids.length, kill_method: method };
}

export type JobStatus = 'running' | 'pending' | 'completed' | 'failed' | 'partial' | 'cancelled';

/**
 * Aggregate status of a job: anything running → running; waiting runs → pending when nothing
 * finished yet, else running (the job is in progress); all finished → completed / failed /
 * cancelled when uniform, partial when some completed and some did not, else failed.
 */
export function jobStatusOf(counts: Record<RunStatus, number>, total: number): JobStatus {
  const waiting = counts.pending + counts.queued;
  const finished = counts.completed + counts.failed + counts.cancelled;
  if (counts.running > 0) return 'running';
  if (waiting > 0) return finished > 0 ? 'running' : 'pending';
  if (counts.completed === total) return 'completed';
  if (counts.cancelled === total) return 'cancelled';
  if (counts.completed > 0) return 'partial';
  return 'failed';
}

/** GET /jobs/{job_id}: progress of the runs created by one request. */
export async function jobProgress(app: AppContext, jobId: string, scope: Scope = UNRESTRICTED) {
  const runs = (jobId ? await app.repos.runs.byGroup(jobId) : []).filter((r) => inScope(scope, r.org_uuid));
  if (runs.length === 0) throw errors.jobNotFound();
  const counts: Record<RunStatus, number> = { pending: 0, queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const r of runs) counts[r.status] = (counts[r.status] ?? 0) + 1;
  // Which step each running run is at: one query for the whole job.
  const running = await app.repos.steps.runningNamesOf(runs.filter((r) => r.status === 'running').map((r) => r.id));
  return {
    job_id: jobId,
    total_runs: runs.length,
    completed: counts.completed,
    running: counts.running,
    failed: counts.failed,
    pending: counts.pending + counts.queued,
    cancelled: counts.cancelled,
    status: jobStatusOf(counts, runs.length),
    runs: runs.map((r) => ({
      run_uuid: r.run_uuid,
      target: r.target,
      status: r.status,
      id: r.id,
      error_message: r.error_message ?? '',
      completed_steps: r.completed_steps,
      total_steps: r.total_steps,
      current_step: r.status === 'running' ? (running[r.id]?.[0] ?? '') : '',
    })),
  };
}

export interface StepResultsQuery {
  workspace?: string;
  status?: StepStatus;
  step_type?: string;
  /** Numeric run id or run_uuid. */
  run_id?: string;
}

/** GET /step-results: newest first; an unknown run gives an empty page. */
export async function listStepResults(app: AppContext, q: StepResultsQuery, page: Page, scope: Scope = UNRESTRICTED) {
  let runId: number | undefined;
  if (q.run_id !== undefined && q.run_id !== '') {
    const run = await app.repos.runs.find(q.run_id);
    if (!run || !inScope(scope, run.org_uuid)) return { data: [], total: 0 };
    runId = run.id;
  }
  const r = await app.repos.steps.list({ workspace: q.workspace, status: q.status, step_type: q.step_type, run_id: runId, org_uuid: scope.orgs ?? undefined }, page);
  const secretsByRun = new Map<number, string[]>();
  const data = [];
  for (const s of r.data) {
    let secrets = secretsByRun.get(s.run_id);
    if (!secrets) {
      secrets = secretsOf(app, await app.repos.runs.get(s.run_id));
      secretsByRun.set(s.run_id, secrets);
    }
    data.push(stepToApi(s, 'results', secrets));
  }
  return { data, total: r.total };
}

export interface EventLogQuery {
  topic?: string;
  name?: string;
  source?: string;
  workspace?: string;
  /** A run_uuid (as stored) or a numeric run id (translated to its uuid). */
  run_id?: string;
  workflow_name?: string;
  processed?: boolean;
  /** created_at window (ISO), GET /events. */
  from?: string;
  to?: string;
}

/** An event log record as the API shows it (spec "Event log record"); secret-looking keys of `data` are redacted. */
export function eventToApi(e: { id: number; topic: string; event_id: string; name: string; source: string; data_type: string; data: string; workspace: string; run_id: string; workflow_name: string; processed: boolean; processed_at: string | null; error: string; created_at: string }, secrets: readonly string[] = []) {
  let data = e.data;
  try {
    const parsed: unknown = JSON.parse(e.data);
    if (parsed !== null && typeof parsed === 'object') data = JSON.stringify(redactVariables(maskDeep(parsed, secrets) as Record<string, unknown>));
  } catch {
    data = maskSecrets(e.data, secrets);
  }
  return {
    id: e.id, topic: e.topic, event_id: e.event_id, name: e.name, source: e.source, data_type: e.data_type, data,
    workspace: e.workspace, run_id: e.run_id, workflow_name: e.workflow_name, processed: e.processed,
    processed_at: e.processed_at, error: e.error, created_at: e.created_at,
  };
}

/** GET /event-logs: newest first. */
export async function listEventLogs(app: AppContext, q: EventLogQuery, page: Page, scope: Scope = UNRESTRICTED) {
  let runId = q.run_id || undefined;
  if (runId && /^\d+$/.test(runId)) runId = (await app.repos.runs.find(runId))?.run_uuid ?? runId;
  const r = await app.repos.events.list({ ...q, run_id: runId, org_uuid: scope.orgs ?? undefined }, page);
  const secrets = secretsOf(app);
  return { data: r.data.map((e) => eventToApi(e, secrets)), total: r.total };
}
