import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ModuleRef, Workflow } from '../workflow/types.js';
import { render, valueToString } from '../workflow/template.js';
import { conditionAsync } from './scripts.js';
import { runActions } from './actions.js';
import { checkDependencies, DependencyError } from './deps-check.js';
import { executeModuleBody, manualRunAllowed, prepareScope, runHooks, PER_MODULE_KEYS, SCHEDULER_TRIGGERS, type ModuleResult } from './module-exec.js';
import { printModuleHeader } from './summary.js';
import { moduleTargetScope } from './scope-gate.js';
import { messageOf } from '../errors.js';
import { orderModules } from '../workflow/plan.js';
import { RunAborted, type Scope } from './types.js';
import type { StepSummary } from './step-exec.js';

export interface ModuleSummary {
  name: string;
  status: 'completed' | 'failed' | 'skipped' | 'cancelled';
  durationMs: number;
  error?: string;
}

export interface FlowResult {
  status: 'completed' | 'failed' | 'cancelled';
  error?: string;
  modules: ModuleSummary[];
}

function isExcluded(name: string, scope: Scope): 'excluded' | 'fuzzy-excluded' | undefined {
  const input = scope.exec.input;
  if ((input.exclude ?? []).includes(name)) return 'excluded';
  if ((input.fuzzyExclude ?? []).some((f) => f && name.includes(f))) return 'fuzzy-excluded';
  return undefined;
}

/**
 * A flow (reference §3.10): pre hooks, modules one at a time in dependency order, exports passed to
 * later modules, post hooks. A failing module does not fail the flow unless an on_error `abort`
 * action fires; the flow's error_message still lists failed modules.
 */
export async function executeFlowBody(flow: Workflow, scope: Scope, results: StepSummary[]): Promise<FlowResult> {
  const exec = scope.exec;
  const modules: ModuleSummary[] = [];
  await runHooks(flow.hooks.pre_scan_steps, scope, 'pre-scan');
  const { order, blocked: unmet } = orderModules(flow.modules);
  const failed: string[] = [];

  for (const ref of order) {
    if (exec.signal.aborted) return { status: 'cancelled', error: 'run cancelled', modules };
    const started = Date.now();
    const excluded = isExcluded(ref.name, scope);
    if (excluded) {
      exec.printer.info(`Module ${ref.name} skipped (${excluded})`);
      modules.push({ name: ref.name, status: 'skipped', durationMs: 0, error: excluded });
      continue;
    }
    if (ref.condition && ref.condition.trim()) {
      let ok = false;
      try {
        ok = await conditionAsync(ref.condition, scope.vars, scope);
      } catch {
        ok = false;
      }
      if (!ok) {
        // Naming the condition tells a user which tool to install (`command_exists('nuclei')`).
        exec.printer.info(`Module ${ref.name} skipped (condition is false: ${ref.condition.trim()})`);
        modules.push({ name: ref.name, status: 'skipped', durationMs: 0, error: 'condition is false' });
        continue;
      }
    }
    let result: ModuleResult;
    try {
      result = await runModule(flow, ref, scope, results);
    } catch (err) {
      if (err instanceof RunAborted) return { status: 'cancelled', error: err.message, modules };
      result = { status: 'failed', error: messageOf(err), exports: {}, tainted: [] };
    }
    modules.push({ name: ref.name, status: result.status, durationMs: Date.now() - started, error: result.error });
    if (result.status === 'cancelled') return { status: 'cancelled', error: result.error, modules };
    if (result.status === 'completed' || result.status === 'skipped') {
      for (const [k, v] of Object.entries(result.exports)) if (!PER_MODULE_KEYS.has(k)) scope.vars[k] = v;
      for (const t of result.tainted) scope.tainted.add(t);
      if (result.status === 'completed') await runActions(ref.on_success, scope, '');
      continue;
    }
    failed.push(ref.name);
    exec.printer.error(`Module ${ref.name} failed: ${result.error}`);
    const act = await runActions(ref.on_error, scope, '');
    if (act.abort || result.abort) return { status: 'failed', error: `module '${ref.name}' failed and the flow was aborted: ${result.error}`, modules };
  }
  if (unmet.length) {
    for (const m of unmet) modules.push({ name: m.name, status: 'failed', durationMs: 0, error: 'unmet dependencies' });
    return { status: 'failed', error: `circular dependency detected: module ${unmet[0]!.name} has unmet dependencies`, modules };
  }
  await runHooks(flow.hooks.post_scan_steps, scope, 'post-scan');
  return { status: 'completed', error: failed.length ? `${failed.length} module(s) failed: ${failed.join(', ')}` : undefined, modules };
}

/** One module of a flow: its params (§3.10 step 5), dependency checks, header and body. */
/**
 * A module's own `scope:` key inside a flow (docs/scope.md): it narrows the run's scope for that
 * module — its loop items and imports — and a target outside it skips the module. The result to
 * return instead of running the module, or undefined to go on.
 */
async function applyModuleScope(exec: Scope['exec'], wf: Workflow, name: string, scope: Scope): Promise<ModuleResult | undefined> {
  let own: ReturnType<typeof moduleTargetScope>;
  try {
    own = moduleTargetScope(exec, wf);
  } catch (err) {
    exec.printer.error(`Module ${name}: invalid scope: ${messageOf(err)}`);
    return { status: 'failed', error: `invalid scope of module ${name}: ${messageOf(err)}`, exports: {}, tainted: [] };
  }
  if (!own) return undefined;
  if (!exec.input.emptyTarget) {
    const d = own.set.decide(exec.input.target);
    if (!d.in_scope) {
      const why = `target ${exec.input.target} is ${d.explanation}`;
      exec.printer.warn(`Module ${name} skipped: ${why}`);
      exec.log.write('WARN', 'Module skipped: target out of its scope', { module: name, target: exec.input.target });
      return { status: 'skipped', error: why, exports: {}, tainted: [] };
    }
  }
  scope.targetScope = own;
  const runId = exec.recorder.run.id;
  const layers = (await exec.deps.repos.runs.scopeStats(runId))?.layers ?? [];
  const missing = own.specs.filter((l) => !layers.some((x) => x.name === l.name)).map((l) => ({ name: l.name, include: l.include ?? [], exclude: l.exclude ?? [] }));
  if (missing.length) await exec.deps.repos.runs.initScope(runId, [...layers, ...missing]);
  exec.scopeRecorded = true;
  return undefined;
}

async function runModule(flow: Workflow, ref: ModuleRef, flowScope: Scope, results: StepSummary[]): Promise<ModuleResult> {
  const exec = flowScope.exec;
  const wf = exec.deps.loader.loadModuleRef(ref, flow);
  // Each module goes through the module path, manual-trigger check first (reference ExecuteModule).
  if (!manualRunAllowed(wf) && !SCHEDULER_TRIGGERS.has(exec.recorder.run.trigger_type)) {
    exec.printer.warn(`Module ${ref.name} skipped: Manual trigger is disabled for this module`);
    return { status: 'skipped', error: 'Manual trigger is disabled for this module', exports: {}, tainted: [] };
  }
  const provided: Record<string, string> = {};
  for (const [k, v] of Object.entries(flowScope.vars)) if (!PER_MODULE_KEYS.has(k)) provided[k] = valueToString(v);
  Object.assign(provided, exec.input.params);
  provided.flow_name = flow.name;
  for (const [k, v] of Object.entries(ref.params ?? {})) provided[k] = render(String(v), flowScope.vars);
  const tempDir = mkdtempSync(join(tmpdir(), 'osm-tmp-'));
  try {
    const scope = prepareScope(exec, wf, provided, {
      moduleName: ref.name,
      flowName: flow.name,
      tempDir,
      taintedProvided: Object.keys(provided).filter((k) => flowScope.tainted.has(k)),
    });
    if (ref.runner) scope.runner = { type: ref.runner, config: ref.runner_config ?? {} };
    const refused = await applyModuleScope(exec, wf, ref.name, scope);
    if (refused) return refused;
    try {
      for (const w of await checkDependencies(wf, scope, { skipValidation: exec.input.skipValidation, emptyTarget: exec.input.emptyTarget })) exec.printer.warn(w);
    } catch (err) {
      if (err instanceof DependencyError && err.block) exec.printer.error(err.block);
      return { status: 'failed', error: messageOf(err), exports: {}, tainted: [] };
    }
    printModuleHeader(exec, wf, ref.name, exec.deps.loader.stepCount(wf));
    const result = await executeModuleBody(wf, scope, results);
    if (result.status === 'completed') exec.completedModules.push({ workflow: wf, vars: scope.vars });
    return result;
  } finally {
    rmSync(tempDir, { recursive: true, force: true });
  }
}
