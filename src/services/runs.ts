import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errors, messageOf } from '../errors.js';
import type { Priority, RunRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { validateTarget } from '../workflow/target.js';
import { validateRunParams } from '../workflow/reserved-params.js';
import { analyzeTarget } from '../workflow/heuristics.js';
import { executeRun, type RunOutcome } from '../engine/executor.js';
import { recordRunDiff } from './diffs.js';
import { uploadRunArtifacts } from '../storage/run-upload.js';
import type { DisplayOptions, RunInput } from '../engine/types.js';
import type { RunSource } from '../engine/recorder.js';
import type { AppContext } from './context.js';
import { assertWorkflowName, resolveWorkflowFile } from './workflows.js';
import { installedWorkflow, storedRunWorkflow } from './installed-workflow.js';
import { checkRunOptions, engineInputOf, MAX_RUN_TIMEOUT_MS, storedRunOptions, type RunOptions } from './run-options.js';
import { isInside, isSafeName } from '../util/fs-safe.js';
import { inScope, UNRESTRICTED, type Scope } from '../auth/scope.js';
import { DEFAULT_ORG_UUID } from '../store/org-constants.js';
import { assertTargetsInScope } from './scope.js';

export type { RunOptions } from './run-options.js';

export interface CreateRunsInput {
  /**
   * A workflow NAME, looked up inside the workflows folder only; or a workflow the caller resolved
   * itself: the API (by name, inside the folder) or the CLI (what the operator typed, any path).
   */
  workflow: string | Workflow;
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
  /** The caller's orgs: a run may not write into a workspace outside them. */
  scope?: Scope;
  /** The org of workspaces these runs create (default: the caller's first org, else the default org). */
  orgUuid?: string;
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

/**
 * Validates every untrusted value of a run request before anything is stored or executed: the
 * targets (unless the run has a placeholder target) and the params (no reserved names, no shell
 * metacharacters).
 */
export function validateRunInputs(targets: string[], params: Record<string, string>, opts: { emptyTarget?: boolean } = {}): void {
  if (!opts.emptyTarget) targets.forEach((t, i) => validateTarget(t, targets.length > 1 ? `targets[${i}]` : 'target'));
  validateRunParams(params);
}

/**
 * Creates one run row per target (status queued, or pending for "create then start"). The workflow
 * must exist; targets and params are validated here, at the single entry point shared by the CLI,
 * the API and the scheduler.
 */
export async function createRuns(app: AppContext, input: CreateRunsInput): Promise<CreatedRuns> {
  const params = input.params ?? {};
  const targets = normaliseTargets(input.targets);
  if (targets.length === 0) throw errors.validation('At least one target is required (target, targets, target_file, or empty_target)');
  const checked = checkRunOptions(input.options);
  validateRunInputs(targets, params, { emptyTarget: checked.emptyTarget });
  const workflow = typeof input.workflow === 'string' ? installedWorkflow(app, input.workflow) : input.workflow;
  const totalSteps = app.loader.stepCount(workflow);
  const jobId = input.runGroupId ?? newJobId();
  // The file is recorded for the engine, which honours it only inside the workflows folder.
  const options = { ...checked, workflow_path: workflow.file_path };
  const spaceOf = (target: string) => analyzeTarget(target, { level: checked.heuristics ?? 'basic', space: checked.space }).targetSpace;
  // Target scope (docs/scope.md): a request with an out-of-scope target is refused as a whole.
  if (!checked.emptyTarget) await assertTargetsInScope(app, workflow, targets, checked.scope, spaceOf, input.orgUuid ?? input.scope?.orgs?.[0]);
  const runs = await app.repos.tx(async () => {
    if (!checked.emptyTarget) await claimWorkspaces(app, [...new Set(targets.map(spaceOf))], input.scope ?? UNRESTRICTED, input.orgUuid);
    const created: RunRecord[] = [];
    for (const target of targets) {
      created.push(
        await app.repos.runs.create({
        workflow_name: workflow.name,
        workflow_kind: workflow.kind,
        target,
        params,
        status: input.status ?? 'queued',
        workspace: spaceOf(target),
        trigger_type: input.triggerType ?? 'manual',
        trigger_name: input.triggerName ?? '',
        schedule_id: input.scheduleId ?? '',
        run_group_id: jobId,
        priority: input.priority ?? 'normal',
        total_steps: totalSteps,
        hooks_enabled: workflow.hooks.pre_scan_steps.length + workflow.hooks.post_scan_steps.length > 0,
        timeout_seconds: checked.timeoutMs ? Math.round(checked.timeoutMs / 1000) : 0,
        runner_type: checked.runnerType ?? 'host',
        options,
        owner_pid: input.ownerPid ?? 0,
        ...(input.runMode ? { run_mode: input.runMode } : {}),
        }),
      );
    }
    return created;
  });
  return { jobId, workflow, runs };
}

/**
 * Checks that runs may write into these workspaces and gives the new ones their org. A workspace
 * outside the caller's orgs is refused (409). A workspace without a row is created now in `org`
 * (else the caller's first org) so its rows land in that org from the first run on; with neither
 * it is left to the engine and belongs to the default org.
 */
async function claimWorkspaces(app: AppContext, spaces: string[], scope: Scope, org: string | undefined): Promise<void> {
  const newOrg = org ?? scope.orgs?.[0];
  for (const name of spaces) {
    const row = await app.repos.workspaces.get(name);
    if (row) {
      if (!inScope(scope, row.org_uuid)) throw errors.workspaceNotAvailable(name);
    } else if (newOrg && newOrg !== DEFAULT_ORG_UUID) {
      await app.repos.workspaces.upsertRunInfo({ name, local_path: join(app.settings().paths.workspaces, name), org_uuid: newOrg });
    }
  }
}

/** The engine input of a stored run: only the allowlisted keys of its options column become flags. */
export function runInputOf(run: RunRecord): RunInput {
  return engineInputOf(run.target, run.params ?? {}, storedRunOptions(run.options));
}

/**
 * Executes a stored run in this process. Whatever created the row, its target and params are
 * checked again here and its workflow is the installed one of its name (see installed-workflow.ts);
 * only the CLI passes `workflow`: the file the operator named, loaded in-process. When the run
 * completes, diff snapshots of its workspace's assets and vulnerabilities over the run's window
 * are stored (GET /assets/diffs, GET /vulnerabilities/diffs).
 */
export async function executeStoredRun(
  app: AppContext,
  run: RunRecord,
  display: DisplayOptions,
  source: RunSource,
  opts: {
    workflow?: Workflow;
    /** `run` was just written by the caller (the queue's claim): the executor does not read it again. */
    fresh?: boolean;
    /** Told when the run has reached its terminal state, before the diff snapshots and uploads that follow. */
    ended?: (out: RunOutcome) => void;
    /** Told the run's lines of its workspace's run-execution.log (RunSetup.executionLog). */
    executionLog?: (line: string) => void;
    /** No diff snapshot here: another database records it (a worker whose master holds the rows). */
    noDiff?: boolean;
  } = {},
): Promise<RunOutcome> {
  const input = runInputOf(run);
  const workflow = (): Workflow => {
    try {
      validateRunInputs([run.target], run.params ?? {}, { emptyTarget: input.emptyTarget });
    } catch (err) {
      throw new Error(`refusing to execute: ${messageOf(err)}`);
    }
    try {
      return opts.workflow ?? storedRunWorkflow(app, run);
    } catch (err) {
      throw new Error(`failed to load workflow: ${messageOf(err)}`);
    }
  };
  // `ended` is told once: by the executor right after the terminal write, else (a run that ended
  // without reaching it) when the executor returns.
  let told = false;
  const ended = (o: RunOutcome) => {
    if (told) return;
    told = true;
    opts.ended?.(o);
  };
  const out = await executeRun(app, run.id, input, display, source, { workflow, resumeOf: storedRunOptions(run.options).resume_of, terminal: ended, ...(opts.fresh ? { row: run } : {}), ...(opts.executionLog ? { executionLog: opts.executionLog } : {}) });
  ended(out);
  if (out.status === 'completed' && !input.emptyTarget && !opts.noDiff) {
    try {
      await recordRunDiff(app, run.id, out.run);
    } catch {
      // A diff snapshot is a convenience; it must never change the run's outcome.
    }
  }
  // storage.upload_outputs: the run's artifacts go to object storage; failures are a warning event.
  await uploadRunArtifacts(app, run.id).catch(() => undefined);
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
  /** The run's target scope (docs/scope.md), already normalised by the route's schema. */
  scope?: { include: string[]; exclude: string[] };
  /** Distributed runs only: labels the worker must have (`osm worker join --label`). */
  labels?: string[];
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
/** The longest whole-run timeout a request may ask for (the engine's timer limit). */
const MAX_TIMEOUT_MINUTES = Math.floor(MAX_RUN_TIMEOUT_MS / 60_000);

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
  // Folders are named relative to the base folder: an API caller learns no server path.
  const shown = (dir: string) => (isInside(resolve(paths.base), resolve(dir)) ? `<base folder>/${relative(resolve(paths.base), resolve(dir)).split(sep).join('/')}` : 'set in the settings');
  const where = `it must be a file inside the uploads folder (${shown(paths.uploads)}) or the data folder (${shown(paths.data)})`;
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
  workflow: Workflow;
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
  if (req.timeout !== undefined && req.timeout > MAX_TIMEOUT_MINUTES) throw errors.validation(`timeout must be at most ${MAX_TIMEOUT_MINUTES} minutes`);
  if (req.docker_image) validateTarget(req.docker_image, 'docker_image');
  if (req.ssh_host) validateTarget(req.ssh_host, 'ssh_host');
  const collected = [...(req.target !== undefined ? [req.target] : []), ...(req.targets ?? []), ...(req.target_file ? readTargetFile(app, req.target_file) : [])];
  let targets = normaliseTargets(collected);
  if (targets.length === 0 && req.empty_target) targets = [emptyTargetName()];
  if (targets.length === 0) throw errors.validation('At least one target is required (target, targets, target_file, or empty_target)');
  const params = req.params ?? {};
  validateRunInputs(targets, params, { emptyTarget: req.empty_target });
  const file = resolveWorkflowFile(app, name);
  const wantKind = req.flow ? 'flow' : req.module ? 'module' : undefined;
  const wf = app.loader.loadFile(file);
  if (wantKind && wf.kind !== wantKind) throw errors.validation(`'${name}' is a ${wf.kind}, not a ${wantKind}`);
  return { workflow: wf, targets, params, priority, runnerType: req.runner_type ?? 'host' };
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
    ...(req.scope && (req.scope.include.length || req.scope.exclude.length) ? { scope: req.scope } : {}),
  };
}

/** The 202 answer for created runs (without the mode-specific fields). */
function apiRunAnswer(created: CreatedRuns, c: CheckedApiRun, req: ApiRunRequest): Omit<ApiRunResponse, 'concurrency'> {
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

export async function submitApiRuns(app: AppContext, req: ApiRunRequest, kick?: () => void, scope: Scope = UNRESTRICTED): Promise<ApiRunResponse> {
  const c = checkApiRun(app, req);
  const concurrency = req.concurrency ?? 1;
  const created = await createRuns(app, {
    scope,
    workflow: c.workflow,
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
export async function submitDistributedApiRuns(app: AppContext, req: ApiRunRequest, enqueue: EnqueueRuns | undefined, scope: Scope = UNRESTRICTED): Promise<DistributedRunResponse> {
  const c = checkApiRun(app, req);
  if (!enqueue) throw errors.distributedRequiresMaster();
  const created = await createRuns(app, {
    scope,
    workflow: c.workflow,
    targets: c.targets,
    params: c.params,
    priority: c.priority,
    status: 'queued',
    triggerType: 'api',
    runMode: 'distributed',
    options: { ...apiRunOptions(req, c.runnerType), ...(req.labels?.length ? { labels: [...new Set(req.labels)] } : {}) },
  });
  await enqueue(created.runs);
  return { ...apiRunAnswer(created, c, req), run_mode: 'distributed' };
}
