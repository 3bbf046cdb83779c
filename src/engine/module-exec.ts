import type { Step, Workflow } from '../workflow/types.js';
import { builtinVariables, type BuiltinPaths } from '../workflow/builtin-vars.js';
import type { LoadedSettings } from '../settings/index.js';
import { resolveParams } from '../workflow/params.js';
import { messageOf } from '../errors.js';
import { executeStep, type StepSummary } from './step-exec.js';
import { ModuleSkip, RunAborted, type Execution, type Scope } from './types.js';

export interface ModuleResult {
  status: 'completed' | 'failed' | 'skipped' | 'cancelled';
  error?: string;
  /** Variables the module's steps exported (passed to later modules of a flow). */
  exports: Record<string, unknown>;
  tainted: string[];
  /** An on_error `abort` action fired. */
  abort?: boolean;
}

/** Keys never passed from a flow into its modules (each module gets its own). */
const PER_MODULE_KEYS = new Set(['ModuleName', 'FlowName', 'TempDir', 'TempFile', 'HooksEnabled']);
export { PER_MODULE_KEYS };

/** The folder variables of the built-ins (BaseFolder, Binaries, Data …) from the settings. */
export function builtinPathsOf(s: LoadedSettings): BuiltinPaths {
  const p = s.paths;
  return {
    base: p.base,
    binaries: p.binaries,
    data: p.data,
    configs: p.configs,
    agentConfigs: p.agentConfigs,
    scripts: p.scripts,
    workflows: p.workflows,
    markdownTemplates: p.markdownTemplates,
    snapshot: p.snapshot,
    workspaces: p.workspaces,
  };
}

/** Builds a module's (or flow's) variables: built-ins, provided params, declared params (§2.5). */
export function prepareScope(
  exec: Execution,
  wf: Workflow,
  provided: Record<string, string>,
  opts: { moduleName: string; flowName?: string; tempDir: string; taintedProvided?: Iterable<string> },
): Scope {
  const s = exec.settings;
  const input = exec.input;
  const envelope = decodeEnvelope(provided._event_envelope ?? input.params._event_envelope);
  const builtins = builtinVariables({
    eventEnvelope: envelope,
    target: input.target,
    targetFile: input.targetFile,
    paths: builtinPathsOf(s),
    tactic: input.tactic,
    scanTactic: s.settings.scan_tactic,
    threadsHold: input.threadsHold,
    heuristics: input.heuristics,
    space: input.space,
    workspacesOverride: input.workspacesOverride,
    runUuid: exec.runUuid,
    dbRunId: exec.recorder.run.id,
    moduleName: opts.moduleName,
    flowName: opts.flowName,
    tempDir: opts.tempDir,
    hooksEnabled: wf.hooks.pre_scan_steps.length + wf.hooks.post_scan_steps.length > 0,
    excludeModules: input.exclude,
    fuzzyExcludeModules: input.fuzzyExclude,
  });
  // global_vars are variables too (and exported to the environment by the executor).
  const globals: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((s.settings.global_vars ?? {}) as Record<string, { value?: unknown }>)) {
    if (v && v.value !== undefined && v.value !== '') globals[k] = v.value;
  }
  const vars = resolveParams(wf.params, provided, { ...globals, ...builtins });
  if (opts.flowName !== undefined) vars.FlowName = opts.flowName;
  vars.ModuleName = opts.moduleName;
  // Event data comes from outside: every Event* variable is untrusted.
  const tainted = new Set(opts.taintedProvided ?? []);
  if (envelope) for (const k of ['EventEnvelope', 'EventTopic', 'EventSource', 'EventDataType', 'EventTimestamp', 'EventData']) tainted.add(k);
  return {
    exec,
    workflow: wf,
    moduleName: opts.moduleName,
    vars,
    tainted,
    runner: { type: wf.runner ?? 'host', config: wf.runner_config ?? {} },
    userParamKeys: Object.keys(input.params),
  };
}

/** The scheduler passes an event envelope base64-encoded (so it passes param validation). */
function decodeEnvelope(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.trim().startsWith('{')) return value;
  try {
    const text = Buffer.from(value, 'base64').toString('utf8');
    return text.trim().startsWith('{') ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Runs hook steps: failures are warnings and never fail the run (reference §3.11). */
export async function runHooks(steps: Step[], scope: Scope, label: string): Promise<void> {
  for (const [i, step] of steps.entries()) {
    try {
      const out = await executeStep(step, scope, { index: i, record: false, decisions: false, results: [] });
      if (out.status === 'failed') scope.exec.printer.warn(`${label} hook '${step.name}' failed: ${out.error}`);
    } catch (err) {
      if (err instanceof RunAborted) throw err;
      scope.exec.printer.warn(`${label} hook '${step.name}' failed: ${messageOf(err)}`);
    }
  }
}

/** Exported variables: keys added or changed since the snapshot. */
function diffVars(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(after)) if (!(k in before) || before[k] !== v) out[k] = v;
  return out;
}

/** A module's steps with hooks (reference §3.2 steps 10–12). */
export async function executeModuleBody(wf: Workflow, scope: Scope, results: StepSummary[]): Promise<ModuleResult> {
  const before = { ...scope.vars };
  const finish = (r: Omit<ModuleResult, 'exports' | 'tainted'>): ModuleResult => {
    const exports = diffVars(before, scope.vars);
    return { ...r, exports, tainted: Object.keys(exports).filter((k) => scope.tainted.has(k)) };
  };
  try {
    await runHooks(wf.hooks.pre_scan_steps, scope, 'pre-scan');
    const r = wf.steps.some((s) => s.depends_on && s.depends_on.length) ? await runDag(wf, scope, results) : await runSequential(wf, scope, results);
    if (r.status !== 'completed') return finish(r);
    await runHooks(wf.hooks.post_scan_steps, scope, 'post-scan');
    return finish({ status: 'completed' });
  } catch (err) {
    if (err instanceof ModuleSkip) return finish({ status: 'skipped', error: err.message });
    if (err instanceof RunAborted) return finish({ status: 'cancelled', error: err.message });
    return finish({ status: 'failed', error: messageOf(err) });
  }
}

const MAX_JUMPS = 10_000;

async function runSequential(wf: Workflow, scope: Scope, results: StepSummary[]): Promise<Omit<ModuleResult, 'exports' | 'tainted'>> {
  const steps = wf.steps;
  let i = 0;
  let jumps = 0;
  while (i < steps.length) {
    const step = steps[i]!;
    const out = await executeStep(step, scope, { index: i, record: true, decisions: true, countKey: `${scope.moduleName}\u0000${step.name}`, results });
    if (out.status === 'failed' && !out.continueOnError) {
      return { status: 'failed', error: `step '${step.name}' failed: ${out.error}`, abort: out.abort };
    }
    if (out.goto) {
      if (out.goto === '_end') break;
      const target = steps.findIndex((s) => s.name === out.goto);
      if (target >= 0) {
        if (++jumps > MAX_JUMPS) return { status: 'failed', error: `goto loop: more than ${MAX_JUMPS} jumps (last to '${out.goto}')` };
        i = target;
        continue;
      }
      scope.exec.printer.warn(`goto target '${out.goto}' not found; continuing with the next step`);
    }
    i++;
  }
  return { status: 'completed' };
}

const DAG_LIMIT = 8;

/** DAG mode (reference §3.5): ready steps run concurrently (≤ 8); dependents of failures don't run. */
async function runDag(wf: Workflow, scope: Scope, results: StepSummary[]): Promise<Omit<ModuleResult, 'exports' | 'tainted'>> {
  const steps = wf.steps;
  const byName = new Map(steps.map((s, i) => [s.name, i]));
  for (const s of steps) {
    for (const d of s.depends_on ?? []) {
      if (!byName.has(d)) return { status: 'failed', error: `step '${s.name}' depends on non-existent step '${d}'` };
    }
  }
  const cycle = findCycle(steps);
  if (cycle) return { status: 'failed', error: `circular dependency: ${cycle.join(' -> ')}` };

  const state = new Map<string, 'pending' | 'running' | 'ok' | 'failed'>(steps.map((s) => [s.name, 'pending']));
  let firstError: string | undefined;
  let abort = false;
  const running = new Set<Promise<void>>();

  const ready = () =>
    steps.filter((s) => state.get(s.name) === 'pending' && (s.depends_on ?? []).every((d) => state.get(d) === 'ok'));
  const blocked = () =>
    steps.filter((s) => state.get(s.name) === 'pending' && (s.depends_on ?? []).some((d) => state.get(d) === 'failed'));

  for (;;) {
    for (const s of blocked()) {
      state.set(s.name, 'failed');
      const dep = (s.depends_on ?? []).find((d) => state.get(d) === 'failed');
      await scope.exec.recorder.stepSkipped({ moduleName: scope.moduleName, stepName: s.name, stepType: s.type, stepIndex: byName.get(s.name)!, command: '' }, `dependency '${dep}' failed`);
      scope.exec.printer.stepSkipped(s.name, `(dependency '${dep}' failed)`);
      results.push({ module: scope.moduleName, name: s.name, type: s.type, status: 'skipped', durationMs: 0, error: `dependency '${dep}' failed` });
    }
    for (const s of ready()) {
      if (running.size >= DAG_LIMIT) break;
      state.set(s.name, 'running');
      const p: Promise<void> = executeStep(s, scope, { index: byName.get(s.name)!, record: true, decisions: false, countKey: `${scope.moduleName}\u0000${s.name}`, resumeAny: true, results })
        .then((out) => {
          // A failure made non-fatal by `continue` still blocks dependents (reference).
          state.set(s.name, out.status === 'failed' ? 'failed' : 'ok');
          if (out.status === 'failed' && !out.continueOnError) firstError ??= `step '${s.name}' failed: ${out.error}`;
          if (out.abort) abort = true;
        })
        .catch((err) => {
          state.set(s.name, 'failed');
          if (err instanceof RunAborted || err instanceof ModuleSkip) throw err;
          firstError ??= `step '${s.name}' failed: ${messageOf(err)}`;
        })
        .finally(() => running.delete(p));
      running.add(p);
    }
    if (running.size === 0) break;
    await Promise.race(running);
  }
  if (firstError) return { status: 'failed', error: firstError, abort };
  return { status: 'completed' };
}

/** The first dependency cycle among steps, as a name path, or undefined. */
function findCycle(steps: Step[]): string[] | undefined {
  const deps = new Map(steps.map((s) => [s.name, s.depends_on ?? []]));
  const color = new Map<string, number>();
  const stack: string[] = [];
  const visit = (n: string): string[] | undefined => {
    color.set(n, 1);
    stack.push(n);
    for (const d of deps.get(n) ?? []) {
      if (color.get(d) === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (!color.get(d)) {
        const c = visit(d);
        if (c) return c;
      }
    }
    stack.pop();
    color.set(n, 2);
    return undefined;
  };
  for (const s of steps) {
    if (!color.get(s.name)) {
      const c = visit(s.name);
      if (c) return c;
    }
  }
  return undefined;
}

/** Manual-trigger gate (reference §1.6): one definition, in the workflow layer. */
export { manualRunAllowed, SCHEDULER_TRIGGERS } from '../workflow/plan.js';
