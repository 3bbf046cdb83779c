import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { errors } from '../errors.js';
import type { Priority, RunRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { validateTarget, validateParamValue } from '../workflow/target.js';
import { analyzeTarget } from '../workflow/heuristics.js';
import { executeRun, type RunOutcome } from '../engine/executor.js';
import { recordRunDiff } from './diffs.js';
import type { DisplayOptions, RunInput } from '../engine/types.js';
import type { RunSource } from '../engine/recorder.js';
import type { AppContext } from './context.js';
import { assertWorkflowName, resolveWorkflowFile } from './workflows.js';
import { isInside, isSafeName } from '../util/fs-safe.js';

/**
 * Options of a run besides workflow, target and params: the engine's run input flags plus how the
 * request wants it run. Stored in `runs.options` so a queued run can be executed later (even after
 * a restart).
 */
export type RunOptions = Omit<RunInput, 'target' | 'params' | 'runnerOverride'> & {
  /** How many targets of the same request may run at once (API `concurrency`). */
  concurrency?: number;
  runnerType?: 'host' | 'docker' | 'ssh';
  dockerImage?: string;
  sshHost?: string;
};

export interface CreateRunsInput {
  workflow: string;
  targets: string[];
  params?: Record<string, string>;
  priority?: Priority;
  status?: 'queued' | 'pending';
  triggerType?: string;
  triggerName?: string;
  scheduleId?: string;
  runGroupId?: string;
  /** The process that will execute the runs itself (CLI); daemon-queued runs have none. */
  ownerPid?: number;
  options?: RunOptions;
  /** `local` (default) or `distributed` (executed by a worker through the master's task queue). */
  runMode?: 'local' | 'distributed';
}

export interface CreatedRuns {
  jobId: string;
  workflow: Workflow;
  runs: RunRecord[];
}

/** Short job id: the first 8 hex chars of a UUID (as the reference). */
export function newJobId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 8);
}

/** Collects targets: trims, drops empties and `#` comments, de-duplicates preserving order. */
export function normaliseTargets(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of values) {
    const t = raw.trim();
    if (!t || t.startsWith('#') || seen.has(t)) continue;
    seen.add(t);
    out.push(t);
  }
  return out;
}

/** Validates every untrusted value of a run request (targets and params) before anything is stored. */
export function validateRunInputs(targets: string[], params: Record<string, string>): void {
  targets.forEach((t, i) => validateTarget(t, targets.length > 1 ? `targets[${i}]` : 'target'));
  for (const [k, v] of Object.entries(params)) validateParamValue(k, v);
}

/**
 * Creates one run row per target (status queued, or pending for "create then start"). The workflow
 * must exist; targets and params are validated here, at the single entry point shared by the CLI,
 * the API and the scheduler.
 */
export function createRuns(app: AppContext, input: CreateRunsInput): CreatedRuns {
  const params = input.params ?? {};
  const targets = normaliseTargets(input.targets);
  if (targets.length === 0) throw errors.validation('At least one target is required (target, targets, target_file, or empty_target)');
  if (!input.options?.emptyTarget) validateRunInputs(targets, params);
  else for (const [k, v] of Object.entries(params)) validateParamValue(k, v);
  const workflow = app.loader.load(input.workflow);
  const totalSteps = app.loader.stepCount(workflow);
  const jobId = input.runGroupId ?? newJobId();
  const options = { ...(input.options ?? {}), workflow_path: workflow.file_path };
  const runs = app.store.tx(() =>
    targets.map((target) =>
      app.store.runs.create({
        workflow_name: workflow.name,
        workflow_kind: workflow.kind,
        target,
        params,
        status: input.status ?? 'queued',
        workspace: analyzeTarget(target, { level: input.options?.heuristics ?? 'basic', space: input.options?.space }).targetSpace,
        trigger_type: input.triggerType ?? 'manual',
        trigger_name: input.triggerName ?? '',
        schedule_id: input.scheduleId ?? '',
        run_group_id: jobId,
        priority: input.priority ?? 'normal',
        total_steps: totalSteps,
        hooks_enabled: workflow.hooks.pre_scan_steps.length + workflow.hooks.post_scan_steps.length > 0,
        timeout_seconds: input.options?.timeoutMs ? Math.round(input.options.timeoutMs / 1000) : 0,
        runner_type: input.options?.runnerType ?? 'host',
        options,
        owner_pid: input.ownerPid ?? 0,
        ...(input.runMode ? { run_mode: input.runMode } : {}),
      }),
    ),
  );
  return { jobId, workflow, runs };
}

/** The engine input of a stored run (its options column holds the flags). */
export function runInputOf(run: RunRecord): RunInput {
  const { concurrency: _c, runnerType, dockerImage, sshHost, ...flags } = (run.options ?? {}) as RunOptions & { workflow_path?: string; resume_of?: number };
  delete (flags as Record<string, unknown>).workflow_path;
  delete (flags as Record<string, unknown>).resume_of;
  const input: RunInput = { ...flags, target: run.target, params: run.params ?? {} };
  if (runnerType === 'docker' && dockerImage) input.runnerOverride = { type: 'docker', config: { image: dockerImage } };
  if (runnerType === 'ssh' && sshHost) {
    const [user, host] = sshHost.includes('@') ? sshHost.split('@', 2) : ['', sshHost];
    input.runnerOverride = { type: 'ssh', config: { host, ...(user ? { user } : {}) } };
  }
  return input;
}

/**
 * Executes a stored run in this process. When it completes, diff snapshots of its workspace's
 * assets and vulnerabilities over the run's window are stored (GET /assets/diffs, GET /vulnerabilities/diffs).
 */
export async function executeStoredRun(app: AppContext, run: RunRecord, display: DisplayOptions, source: RunSource): Promise<RunOutcome> {
  const out = await executeRun(app, run.id, runInputOf(run), display, source);
  if (out.status === 'completed' && !runInputOf(run).emptyTarget) {
    try {
      recordRunDiff(app, run.id);
    } catch {
      // A diff snapshot is a convenience; it must never change the run's outcome.
    }
  }
  return out;
}

// ---- POST /runs (the HTTP API's run request) ----------------------------------------------------

/** The run request of `POST /osm/api/runs`, after its schema checked the types. */
export interface ApiRunRequest {
  flow?: string;
  module?: string;
  /** Alias of flow/module (the kind comes from the file). */
  workflow?: string;
  target?: string;
  targets?: string[];
  target_file?: string;
  params?: Record<string, string>;
  priority?: string;
  /** Whole-run timeout in minutes. */
  timeout?: number;
  concurrency?: number;
  runner_type?: 'host' | 'docker' | 'ssh';
  docker_image?: string;
  ssh_host?: string;
  workspace?: string;
  threads_hold?: number;
  heuristics_check?: 'none' | 'basic' | 'advanced';
  empty_target?: boolean;
  /** Skips the engine's target-type dependency checks only; targets and params are ALWAYS validated. */
  skip_validation?: boolean;
}

export interface ApiRunResponse {
  message: 'Run queued';
  workflow: string;
  kind: string;
  target_count: number;
  targets?: string[];
  target?: string;
  run_uuid?: string;
  concurrency: number;
  priority: Priority;
  job_id: string;
  status: 'queued';
  poll_url: string;
  runner_type: string;
  timeout: number;
}

const TARGET_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** `low|normal|high|critical` (`medium` is read as normal); default normal. */
export function parsePriority(value: string | undefined): Priority {
  if (value === undefined || value === '') return 'normal';
  const v = value.trim().toLowerCase();
  if (v === 'medium') return 'normal';
  if (v === 'low' || v === 'normal' || v === 'high' || v === 'critical') return v;
  throw errors.invalidPriority();
}

/**
 * Lines of a `target_file`: it must be a regular file inside the uploads or the data folder
 * (checked on the lexical path and again after following links), never anywhere else.
 */
export function readTargetFile(app: AppContext, given: string): string[] {
  const paths = app.settings().paths;
  const roots = [paths.uploads, paths.data];
  const where = `it must be a file inside the uploads folder (${paths.uploads}) or the data folder (${paths.data})`;
  if (given.includes('\0') || given.split(/[\\/]+/).includes('..')) throw errors.invalidTargetFile(`'..' is not allowed; ${where}`);
  const candidate = isAbsolute(given) ? resolve(given) : resolve(paths.uploads, given);
  if (!roots.some((r) => isInside(resolve(r), candidate))) throw errors.invalidTargetFile(where);
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    throw errors.invalidTargetFile(`file not found: ${given}`);
  }
  const realRoots = roots.map((r) => {
    try {
      return realpathSync(r);
    } catch {
      return resolve(r);
    }
  });
  if (!realRoots.some((r) => isInside(r, real))) throw errors.invalidTargetFile(where);
  const st = statSync(real);
  if (!st.isFile()) throw errors.invalidTargetFile(`not a regular file: ${given}`);
  if (st.size > TARGET_FILE_MAX_BYTES) throw errors.invalidTargetFile(`larger than ${TARGET_FILE_MAX_BYTES / 1024 / 1024} MB`);
  return readFileSync(real, 'utf8').split(/\r?\n/);
}

/** The placeholder target of `empty_target` runs (reference: `empty-<6 alnum>-<unix seconds>`). */
export function emptyTargetName(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(6);
  const id = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
  return `empty-${id}-${Math.floor(Date.now() / 1000)}`;
}

/**
 * `POST /runs`: validates the request (workflow name, priority, targets, params, workspace),
 * creates one queued run per target in one job and kicks the queue. No run.started event is
 * written here: the engine writes it when the run really starts.
 */
/** A validated API run request: workflow file, targets, params and priority (local and distributed). */
interface CheckedApiRun {
  file: string;
  targets: string[];
  params: Record<string, string>;
  priority: ReturnType<typeof parsePriority>;
  runnerType: NonNullable<ApiRunRequest['runner_type']>;
}

/** Every check of a run request, in the reference's order, before anything is stored. */
function checkApiRun(app: AppContext, req: ApiRunRequest): CheckedApiRun {
  const name = (req.flow || req.module || req.workflow || '').trim();
  if (!name) throw errors.flowOrModuleRequired();
  const priority = parsePriority(req.priority);
  assertWorkflowName(name);
  if (req.workspace !== undefined && req.workspace !== '' && !isSafeName(req.workspace)) {
    throw errors.validation(`workspace ${JSON.stringify(req.workspace)} is not a valid name (letters, digits, ".", "_" and "-" only)`);
  }
  if (req.docker_image) validateTarget(req.docker_image, 'docker_image');
  if (req.ssh_host) validateTarget(req.ssh_host, 'ssh_host');
  const collected = [...(req.target !== undefined ? [req.target] : []), ...(req.targets ?? []), ...(req.target_file ? readTargetFile(app, req.target_file) : [])];
  let targets = normaliseTargets(collected);
  if (targets.length === 0 && req.empty_target) targets = [emptyTargetName()];
  if (targets.length === 0) throw errors.validation('At least one target is required (target, targets, target_file, or empty_target)');
  const params = req.params ?? {};
  if (req.empty_target) for (const [k, v] of Object.entries(params)) validateParamValue(k, v);
  else validateRunInputs(targets, params);
  const file = resolveWorkflowFile(app, name);
  const wantKind = req.flow ? 'flow' : req.module ? 'module' : undefined;
  const wf = app.loader.loadFile(file);
  if (wantKind && wf.kind !== wantKind) throw errors.validation(`'${name}' is a ${wf.kind}, not a ${wantKind}`);
  return { file, targets, params, priority, runnerType: req.runner_type ?? 'host' };
}

/** The run options a request asks for (shared by local and distributed runs). */
function apiRunOptions(req: ApiRunRequest, runnerType: CheckedApiRun['runnerType']): RunOptions {
  return {
    runnerType,
    ...(req.timeout ? { timeoutMs: req.timeout * 60_000 } : {}),
    ...(req.docker_image ? { dockerImage: req.docker_image } : {}),
    ...(req.ssh_host ? { sshHost: req.ssh_host } : {}),
    ...(req.workspace ? { space: req.workspace } : {}),
    ...(req.threads_hold ? { threadsHold: req.threads_hold } : {}),
    ...(req.heuristics_check ? { heuristics: req.heuristics_check } : {}),
    ...(req.empty_target ? { emptyTarget: true } : {}),
    ...(req.skip_validation ? { skipValidation: true } : {}),
  };
}

/** The 202 answer for created runs (without the mode-specific fields). */
function apiRunAnswer(created: ReturnType<typeof createRuns>, c: CheckedApiRun, req: ApiRunRequest): Omit<ApiRunResponse, 'concurrency'> {
  const single = created.runs.length === 1 ? created.runs[0]! : undefined;
  return {
    message: 'Run queued',
    workflow: created.workflow.name,
    kind: created.workflow.kind,
    target_count: created.runs.length,
    ...(single ? { target: single.target, run_uuid: single.run_uuid } : { targets: created.runs.map((r) => r.target) }),
    priority: c.priority,
    job_id: created.jobId,
    status: 'queued' as const,
    poll_url: `/osm/api/jobs/${created.jobId}`,
    runner_type: c.runnerType,
    timeout: req.timeout ?? 0,
  };
}

export function submitApiRuns(app: AppContext, req: ApiRunRequest, kick?: () => void): ApiRunResponse {
  const c = checkApiRun(app, req);
  const concurrency = req.concurrency ?? 1;
  const created = createRuns(app, {
    workflow: c.file,
    targets: c.targets,
    params: c.params,
    priority: c.priority,
    status: 'queued',
    triggerType: 'api',
    options: { concurrency, ...apiRunOptions(req, c.runnerType) },
  });
  kick?.();
  return { ...apiRunAnswer(created, c, req), concurrency };
}

// ---- run_mode: distributed (POST /runs on a master, POST /tasks) ---------------------------------

/** Hands created runs to the distributed task queue; throws (after marking them failed) when it cannot. */
export type EnqueueRuns = (runs: RunRecord[]) => Promise<void>;

export interface DistributedRunResponse extends Omit<ApiRunResponse, 'concurrency'> {
  run_mode: 'distributed';
}

/**
 * `POST /runs` with `run_mode: distributed`: the same validation as a local request, then one
 * queued run per target (run_mode distributed, never claimed by the local queue) and one task
 * per run. Without a master (`enqueue` absent) nothing is created.
 */
export async function submitDistributedApiRuns(app: AppContext, req: ApiRunRequest, enqueue: EnqueueRuns | undefined): Promise<DistributedRunResponse> {
  const c = checkApiRun(app, req);
  if (!enqueue) throw errors.distributedRequiresMaster();
  const created = createRuns(app, {
    workflow: c.file,
    targets: c.targets,
    params: c.params,
    priority: c.priority,
    status: 'queued',
    triggerType: 'api',
    runMode: 'distributed',
    options: apiRunOptions(req, c.runnerType),
  });
  await enqueue(created.runs);
  return { ...apiRunAnswer(created, c, req), run_mode: 'distributed' };
}
