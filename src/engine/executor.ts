import { setMaxListeners } from 'node:events';
import { RUN_WRITE_PATIENCE_MS, withPatience } from '../store/patience.js';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Workflow } from '../workflow/types.js';
import { analyzeTarget } from '../workflow/heuristics.js';
import type { ArtifactInput, RunRecord, RunScopeStats } from '../store/index.js';
import type { WorkspaceRunInfo } from '../store/workspaces.js';
import { isOsmError, messageOf } from '../errors.js';
import { RunPrinter } from './printer.js';
import { ExecutionLog } from './exec-log.js';
import { RunRecorder, type RunSource } from './recorder.js';
import { RunOutput } from './live/run-output.js';
import { checkDependencies, DependencyError } from './deps-check.js';
import { executeModuleBody, manualRunAllowed, prepareScope, SCHEDULER_TRIGGERS } from './module-exec.js';
import { executeFlowBody, type ModuleSummary } from './flow-exec.js';
import { printModuleHeader, printSummary } from './summary.js';
import { clearCompletedMarker, collectArtifacts, writeRunState, writeWorkflowState, STATE_FILES } from './state-files.js';
import type { StepSummary } from './step-exec.js';
import { notifyRunFinished } from '../events/webhooks.js';
import { RESERVED_PARAM_NAMES } from '../workflow/reserved-params.js';
import type { DisplayOptions, EngineDeps, Execution, RunInput, Scope } from './types.js';
import { compileLayers, emptyCounts, layerSpecs, type ScopeSpec } from '../scope/index.js';
import type { Settings } from '../settings/schema.js';

/**
 * The target scope of a run: settings, workspace, org, workflow and run layers (docs/scope.md);
 * undefined when none is configured. Throws when a layer does not parse.
 */
export async function runTargetScope(deps: EngineDeps, settings: Settings, src: { workspace: string; orgUuid?: string; workflow?: Workflow; run?: ScopeSpec }): Promise<Execution['targetScope']> {
  // The org's name (it finds and names an org's layer) is read only when the settings scope any org.
  const orgScoped = Object.keys(settings.scope?.orgs ?? {}).length > 0;
  const org = src.orgUuid ? { uuid: src.orgUuid, name: orgScoped ? (await deps.repos.orgs.get(src.orgUuid))?.name : undefined } : undefined;
  const specs = layerSpecs({ settings, workspace: src.workspace, org, workflow: src.workflow, run: src.run });
  if (specs.length === 0) return undefined;
  return { set: compileLayers(specs), specs, counts: emptyCounts() };
}

/** The run's scope counts for its summary, when a scope (the run's, or a module's inside a flow) was in force. */
async function scopeSummary(exec: Execution, runId: number): Promise<{ scope?: RunScopeStats | { dropped: number; by_source: Record<string, number> } }> {
  // Scope counts exist only for runs that recorded a scope (initScope: the run's own, or a module's).
  if (!exec.targetScope && !exec.scopeRecorded) return {};
  const stats = await exec.deps.repos.runs.scopeStats(runId);
  if (stats) return { scope: stats };
  return exec.targetScope ? { scope: { dropped: 0, by_source: {} } } : {};
}

export interface RunOutcome {
  run: RunRecord;
  status: 'completed' | 'failed' | 'cancelled';
  error?: string;
  durationMs: number;
  steps: StepSummary[];
  modules: ModuleSummary[];
  artifacts: string[];
}

/** Abort controllers of runs executing in this process, so cancel can reach them. */
const active = new Map<string, { controller: AbortController; reason?: string }>();

/** Aborts a run executing in this process; false when it is not running here. */
export function abortRun(runUuid: string, reason: 'cancelled' | 'timeout' | 'shutdown' = 'cancelled'): boolean {
  const a = active.get(runUuid);
  if (!a) return false;
  a.reason ??= reason;
  a.controller.abort(reason);
  return true;
}

/** UUIDs of runs executing in this process. */
export function activeRuns(): string[] {
  return [...active.keys()];
}

/** Environment for child processes: binaries folder first on PATH, global_vars with as_env. */
export function buildBaseEnv(binaries: string, globalVars: Record<string, { value?: unknown; as_env?: boolean }> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  env.PATH = [binaries, env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].filter(Boolean).join(delimiter);
  for (const [k, v] of Object.entries(globalVars)) {
    if (v && v.as_env !== false && v.value !== undefined && v.value !== '' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) env[k] = String(v.value);
  }
  return env;
}

/**
 * The completed steps of the run being resumed, keyed like the engine's step keys. Only a run of
 * the same workflow counts, and exports named like built-in variables are dropped: step rows may
 * have been imported, and a restored `Output` would move where the rest of the run writes.
 */
export async function resumeState(deps: EngineDeps, sourceRunId: number, workflowName: string): Promise<Execution['resume']> {
  const source = await deps.repos.runs.get(sourceRunId);
  const steps = new Map<string, { exports: Record<string, unknown>; output: string }>();
  if (source && source.workflow_name === workflowName) {
    for (const s of await deps.repos.steps.listByRun(source.id)) {
      if (s.status !== 'completed') continue;
      const exports = Object.fromEntries(Object.entries(s.exports ?? {}).filter(([k]) => !RESERVED_PARAM_NAMES.has(k)));
      steps.set(`${s.module_name}\u0000${s.step_name}`, { exports, output: s.output });
    }
  }
  return { sourceRunUuid: source?.run_uuid ?? String(sourceRunId), steps, active: true };
}

/** How a run's workflow is found and what it resumes; supplied by the caller (services/runs.ts). */
export interface RunSetup {
  /** The workflow to execute; a throw fails the run with its message. */
  workflow: () => Workflow;
  /** The run's row as the caller has just written it (the queue's claim): not read again. */
  row?: RunRecord;
  /** The run whose completed steps are reused. */
  resumeOf?: number;
  /** Told once the terminal status is written and the summary printed, before the log flushes and clean-up. */
  terminal?: (out: RunOutcome) => void;
  /**
   * Told every line the run writes into its workspace's run-execution.log (a file the
   * workspace's runs share): a worker sends its run's own lines to the master.
   */
  executionLog?: (line: string) => void;
}

/** Trigger types of runs the scheduler launched (the reference's isSchedulerInvocation). */

/**
 * Executes one run row end to end: workspace, logs, status transitions, the workflow (module or
 * flow), state files, artifacts and the summary. Never throws for workflow failures: the outcome
 * carries the status; the run row is always left in a terminal state.
 */
export function executeRun(deps: EngineDeps, runId: number, input: RunInput, display: DisplayOptions, source: RunSource, setup: RunSetup): Promise<RunOutcome> {
  // A run's writes wait for a database that blinked instead of failing the run (src/store/patience.ts).
  return withPatience(RUN_WRITE_PATIENCE_MS, () => executeRunNow(deps, runId, input, display, source, setup));
}

async function executeRunNow(deps: EngineDeps, runId: number, input: RunInput, display: DisplayOptions, source: RunSource, setup: RunSetup): Promise<RunOutcome> {
  const started = Date.now();
  const settings = deps.settings();
  const run0 = setup.row?.id === runId ? setup.row : await deps.repos.runs.get(runId);
  if (!run0) throw new Error(`run ${runId} not found`);
  const recorder = new RunRecorder(deps.repos, run0, source);
  const printer = new RunPrinter({ stdout: display.stdout, silent: display.silent, color: display.color, prefix: display.prefix, spinner: display.spinner, noLogLines: display.noLogLines, verbose: display.verbose });
  // The run's output as it happens: step logs and journal, the terminal, --json and the daemon's streams.
  const live = new RunOutput(run0.run_uuid);
  if (display.listener) live.subscribe(display.listener);
  if (printer.live) live.subscribe((e) => printer.liveEvent(e));
  recorder.observe((state) => live.step(state));
  const runInfo = () => ({ run_uuid: recorder.run.run_uuid, workflow: recorder.run.workflow_name, target: recorder.run.target, workspace: recorder.run.workspace });
  const controller = new AbortController();
  // Every in-flight command listens for the run's abort: a foreach with parallel 64 is normal.
  setMaxListeners(0, controller.signal);
  const entry: { controller: AbortController; reason?: string } = { controller };
  active.set(run0.run_uuid, entry);
  const steps: StepSummary[] = [];
  let modules: ModuleSummary[] = [];
  let wf: Workflow | undefined;
  let output = '';
  let tempDir = '';
  let timer: NodeJS.Timeout | undefined;
  let logIndex = 0;

  const finish = async (ended: 'completed' | 'failed' | 'cancelled', endError: string | undefined, vars?: Record<string, unknown>): Promise<RunOutcome> => {
    let status = ended;
    let error = endError;
    const durationMs = Date.now() - started;
    let artifacts: string[] = [];
    // State files are written only for completed runs (they mark a finished run).
    // The workspace row is read once: for the state file and for the event's assets_found. The
    // run's row is the recorder's (it follows every write of this run, completed_steps included).
    // The last step's end, if the recorder still holds it, is written meanwhile (before the state file says it).
    const settling = recorder.settle().then(
      () => undefined,
      (err: unknown) => err,
    );
    const [ws, unsettled] = await Promise.all([deps.repos.workspaces.get(recorder.run.workspace), settling]);
    // That write failing fails the run, as it would have failed the step.
    if (unsettled !== undefined && status === 'completed') {
      status = 'failed';
      error = `could not record the last step: ${messageOf(unsettled)}`;
    }
    const writesState = status === 'completed' && wf && output && !input.emptyTarget;
    if (writesState) {
      try {
        writeRunState(output, { ...recorder.run, status: 'completed', completed_at: new Date().toISOString() }, ws as unknown as Record<string, unknown>);
      } catch (err) {
        printer.warn(`could not write run state: ${messageOf(err)}`);
      }
    }
    // Artifacts are registered with the terminal status (one write), so a client that sees
    // `completed` can list them at once.
    const artifactRows: ArtifactInput[] = [];
    if (wf && output && !input.emptyTarget) {
      try {
        // Without variables (a run skipped before its params were resolved) no report path can be rendered.
        const own = await collectArtifacts(recorder.run, wf, output, vars ?? {}, { reports: status === 'completed' && vars !== undefined });
        artifactRows.push(...own.rows);
        artifacts = own.paths;
        if (status === 'completed') {
          for (const m of exec.completedModules) {
            const r = await collectArtifacts(recorder.run, m.workflow, output, m.vars, { reportsOnly: true });
            artifactRows.push(...r.rows);
            artifacts.push(...r.paths);
          }
        }
      } catch (err) {
        printer.warn(`could not register artifacts: ${messageOf(err)}`);
      }
    }
    const end = { error, durationMs, assetsFound: ws?.total_assets ?? 0 };
    try {
      await recorder.finished(status, { ...end, artifacts: artifactRows });
    } catch (err) {
      // Artifacts are never worth the run's terminal status: refused with them, it is written alone.
      if (artifactRows.length === 0 || (isOsmError(err) && err.code === 'OSM_ERR_UNAVAILABLE')) throw err;
      printer.warn(`could not register artifacts: ${messageOf(err)}`);
      await recorder.finished(status, end);
    }
    // The row after the terminal write (or, when the run was already finished, as read back then).
    const finalRun = recorder.run;
    const finalStatus = (finalRun.status === 'running' ? status : finalRun.status) as 'completed' | 'failed' | 'cancelled';
    live.run({ ...runInfo(), status: finalStatus, duration_ms: durationMs, ...(finalRun.error_message || error ? { error: finalRun.error_message || error } : {}) });
    // Webhooks are delivered in the background (with their own retries and timeouts); failures
    // are recorded as webhook.delivery events by the notifier, never fail the run.
    if (!input.disableNotification && !wf?.preferences.disable_notifications) {
      void notifyRunFinished(deps, finalRun, artifacts).catch(() => undefined);
    }
    const shownStatus = finalRun.status === 'running' ? status : finalRun.status;
    const scopeCounts = await scopeSummary(exec, runId);
    printer.stopSpinner();
    printSummary(
      exec,
      {
        workflow: finalRun.workflow_name,
        kind: finalRun.workflow_kind,
        runUuid: finalRun.run_uuid,
        target: finalRun.target,
        status: shownStatus,
        durationMs,
        error: finalRun.error_message || error,
        steps,
        modules,
        totalSteps: finalRun.total_steps,
        artifacts,
        ...scopeCounts,
      },
      display.color,
      Boolean(display.verbose),
    );
    if (timer) clearTimeout(timer);
    active.delete(finalRun.run_uuid);
    printer.flushLive();
    live.close();
    // The run is terminal and its summary printed: whoever waits for that (the queue's slot) need
    // not wait for the file flushes and clean-up. A next run of the workspace, which truncates the
    // console log, waits for its last lines to reach the file (markClosing).
    printer.markClosing();
    setup.terminal?.({ run: finalRun, status: shownStatus as RunOutcome['status'], error: finalRun.error_message || error, durationMs, steps, modules, artifacts });
    await printer.detachConsoleLog();
    exec.log.close();
    if (tempDir) await rm(tempDir, { recursive: true, force: true }).catch(() => undefined);
    return { run: finalRun, status: shownStatus as RunOutcome['status'], error: finalRun.error_message || error, durationMs, steps, modules, artifacts };
  };

  const exec: Execution = {
    deps,
    settings,
    input,
    recorder,
    printer,
    output: live,
    log: new ExecutionLog(),
    signal: controller.signal,
    abortReason: () => entry.reason,
    startedAt: started,
    runUuid: run0.run_uuid,
    baseEnv: buildBaseEnv(settings.paths.binaries, settings.settings.global_vars as Record<string, { value?: unknown; as_env?: boolean }>),
    nextLogIndex: () => ++logIndex,
    logDir: '',
    completedModules: [],
  };

  if (setup.resumeOf) exec.resume = await resumeState(deps, setup.resumeOf, run0.workflow_name);

  try {
    wf = setup.workflow();
  } catch (err) {
    if (await recorder.started()) live.run({ ...runInfo(), status: 'running' });
    return finish('failed', messageOf(err));
  }

  // Workspace and its files (reference §2.4, §3.13).
  const info = analyzeTarget(input.target, { level: input.heuristics ?? 'basic', space: input.space });
  const workspaces = input.workspacesOverride || settings.paths.workspaces;
  const space = info.targetSpace;

  // Target scope (docs/scope.md): an out-of-scope target is refused before anything runs.
  try {
    exec.targetScope = await runTargetScope(deps, settings.settings, { workspace: space, orgUuid: run0.org_uuid, workflow: wf, run: input.scope });
  } catch (err) {
    if (await recorder.started()) live.run({ ...runInfo(), status: 'running' });
    return finish('failed', `refusing to execute: invalid scope: ${messageOf(err)}`);
  }
  if (exec.targetScope && !input.emptyTarget) {
    const d = exec.targetScope.set.decide(input.target);
    if (!d.in_scope) {
      if (await recorder.started()) live.run({ ...runInfo(), status: 'running' });
      printer.error(`target ${input.target} is ${d.explanation}`);
      return finish('failed', `refusing to execute: target ${input.target} is ${d.explanation}`);
    }
  }
  if (exec.targetScope) await deps.repos.runs.initScope(run0.id, exec.targetScope.specs);
  if (exec.targetScope) exec.scopeRecorded = true;
  output = join(workspaces, space);
  // The workspace's row, written with the run's start (one statement).
  let workspaceRow: WorkspaceRunInfo | undefined;
  if (input.emptyTarget) {
    exec.logDir = mkdtempSync(join(tmpdir(), 'osm-logs-'));
  } else {
    mkdirSync(output, { recursive: true });
    exec.logDir = join(output, 'logs', run0.run_uuid);
    await printer.attachConsoleLog(join(output, STATE_FILES.consoleLog), true);
    exec.log = new ExecutionLog(join(output, STATE_FILES.executionLog), setup.executionLog);
    clearCompletedMarker(output);
    workspaceRow = {
      name: space,
      local_path: output,
      data_source: 'local',
      state_execution_log: join(output, STATE_FILES.executionLog),
      state_completed_file: join(output, STATE_FILES.completed),
      state_workflow_file: join(output, STATE_FILES.workflow),
      last_run: new Date().toISOString(),
      run_workflow: wf.name,
      // A workspace this run creates belongs to the run's org (an existing one keeps its own).
      ...(run0.org_uuid ? { org_uuid: run0.org_uuid } : {}),
    };
  }
  mkdirSync(exec.logDir, { recursive: true });
  live.useDir(exec.logDir);
  // The workspace's row, the run's workspace and step count are written with the status change (one statement).
  // The run's temp folder is made on the thread pool while the start is written.
  const tempMade = mkdtemp(join(tmpdir(), 'osm-tmp-')).then(
    (dir) => (tempDir = dir),
    (err: unknown) => err,
  );
  const began = await recorder.started({ workspace: space, total_steps: deps.loader.stepCount(wf), ...(workspaceRow ? { workspaceRow } : {}) });
  const tempFailure = await tempMade;
  if (!began) {
    // Cancelled (or otherwise finished) before it could start.
    return finish('cancelled', 'run cancelled before it started');
  }
  if (typeof tempFailure !== 'string') return finish('failed', `could not create the run's temp folder: ${messageOf(tempFailure)}`);
  live.run({ ...runInfo(), status: 'running' });
  if (input.timeoutMs && input.timeoutMs > 0) {
    timer = setTimeout(() => abortRun(run0.run_uuid, 'timeout'), input.timeoutMs);
    timer.unref();
  }
  exec.log.write('INFO', 'Run started', { run_uuid: run0.run_uuid, workflow: wf.name, kind: wf.kind, target: input.target });

  // The manual-trigger check comes first (reference §3.2): a module only meant for event
  // triggers is skipped even when its params (e.g. a required `Target`) cannot be resolved.
  // Runs launched by the scheduler (its cron/event/watch triggers) are exactly what it is for.
  if (wf.kind === 'module' && !manualRunAllowed(wf) && !SCHEDULER_TRIGGERS.has(run0.trigger_type)) {
    printer.warn('Manual trigger is disabled for this module');
    return finish('completed', 'skipped: Manual trigger is disabled for this module');
  }
  let scope: Scope;
  try {
    scope = prepareScope(exec, wf, input.params, { moduleName: wf.name, tempDir });
  } catch (err) {
    printer.error(messageOf(err));
    return finish('failed', messageOf(err));
  }
  try {
    for (const w of await checkDependencies(wf, scope, { skipValidation: input.skipValidation, emptyTarget: input.emptyTarget })) printer.warn(w);
  } catch (err) {
    if (err instanceof DependencyError && err.block) printer.error(err.block);
    return finish('failed', messageOf(err), scope.vars);
  }
  if (!input.disableWorkflowState && !input.emptyTarget) writeWorkflowState(output, wf);
  printModuleHeader(exec, wf, wf.name, recorder.run.total_steps);
  printer.info(`Reserving target space folder at: ${space}`);

  let status: 'completed' | 'failed' | 'cancelled';
  let error: string | undefined;
  try {
    if (wf.kind === 'flow') {
      const r = await executeFlowBody(wf, scope, steps);
      modules = r.modules;
      status = r.status;
      error = r.error;
    } else {
      const r = await executeModuleBody(wf, scope, steps);
      status = r.status === 'skipped' ? 'completed' : r.status;
      error = r.status === 'skipped' ? `skipped: ${r.error}` : r.error;
    }
  } catch (err) {
    status = 'failed';
    error = messageOf(err);
  }
  if (controller.signal.aborted) {
    status = entry.reason === 'timeout' ? 'failed' : 'cancelled';
    error = entry.reason === 'timeout' ? `Run timed out after ${Math.round((input.timeoutMs ?? 0) / 1000)}s` : 'run cancelled';
    // Make sure nothing of this run survives.
    deps.registry.killRun(run0.run_uuid, 0);
  }
  if (status === 'failed' && error) printer.error(error);
  return finish(status, error, scope.vars);
}

