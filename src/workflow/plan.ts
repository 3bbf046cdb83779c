/**
 * The plan: a workflow plus its inputs turned into plain data — steps with rendered commands,
 * flow modules in execution order with skip reasons, resolved variables (secrets redacted).
 * `--dry-run`, `workflow show`, resume and the API's workflow detail read it; the engine
 * executes the same order. Sequential modules with decisions also get the route a dry run follows
 * through them (tpl-plan-route.ts). Pure: module files are loaded by the caller's `loadModule`,
 * decision conditions are evaluated by the caller's `evaluateCondition`.
 */
import { isOsmError } from '../errors.js';
import type { ModuleRef, Step, Workflow, WorkflowKind } from './types.js';
import { resolveParams } from './params.js';
import { TemplateError, renderExcept, valueToString } from './template.js';
import { planSteps, stepExportNames, type StepPlanContext } from './tpl-plan-steps.js';
import { DRY_RUN_EXPORT_VALUE, planRoute, type PlanRoute } from './tpl-plan-route.js';
import type { ConditionEvaluator } from './decision-route.js';
import { redactVariables, secretValues } from './tpl-redact.js';

export { formatPlan } from './tpl-plan-format.js';
export type { PlanCondition, PlanDecision, PlanRoute, PlanRouteEntry } from './tpl-plan-route.js';

export interface PlanStep {
  index: number;
  name: string;
  type: string;
  /** Rendered where renderable; templates needing run-time variables stay as written. */
  commands: string[];
  renderedAt: 'plan' | 'runtime';
  preCondition?: string;
  timeoutMs?: number;
  dependsOn?: string[];
  /** parallel-steps children, or the foreach inner step. */
  children?: PlanStep[];
  /** Template error that will fail this step at run time. */
  error?: string;
  /** Set when the dry-run route through the module's decisions never reaches this step. */
  notReached?: string;
}

export interface PlanModule {
  name: string;
  path?: string;
  dependsOn: string[];
  condition?: string;
  skipReason?: 'excluded' | 'fuzzy-excluded' | 'manual-trigger-disabled';
  steps: PlanStep[];
  /** The route through the module's decisions (sequential modules with a decision only). */
  route?: PlanRoute;
  error?: string;
}

export interface Plan {
  workflow: { name: string; kind: WorkflowKind; description: string };
  target: string;
  workspace: string;
  output: string;
  variables: Record<string, unknown>;
  /** module steps (empty for flows) */
  steps: PlanStep[];
  /** The route through the module's decisions (sequential modules with a decision only). */
  route?: PlanRoute;
  /** flow modules in execution order (Kahn, declaration order for ties; empty for modules) */
  modules: PlanModule[];
  /** pre_scan_steps / post_scan_steps hooks */
  hooks: { pre: PlanStep[]; post: PlanStep[] };
  warnings: string[];
}

export interface PlanInput {
  target: string;
  /** Built-ins + params, already resolved. */
  vars: Record<string, unknown>;
  exclude?: string[];
  fuzzyExclude?: string[];
  /** Generators of flow modules' params; default shows `[generator: expr]` instead of running it. */
  runGenerator?: (expr: string, paramName: string) => string;
  /**
   * Evaluates decision conditions for the route (the caller supplies one that runs nothing, e.g.
   * the engine's dryRunConditionEvaluator); without it every condition counts as false, marked.
   */
  evaluateCondition?: ConditionEvaluator;
}

export type ModuleLoader = (ref: ModuleRef) => Workflow;

/**
 * Flow module order: Kahn's algorithm, one module at a time; the initial ready set and newly
 * unblocked modules follow declaration order. Modules with unknown dependencies or in a cycle
 * are returned in `blocked`.
 */
export function orderModules(refs: ModuleRef[]): { order: ModuleRef[]; blocked: ModuleRef[] } {
  const pending = new Map<ModuleRef, Set<string>>();
  for (const ref of refs) pending.set(ref, new Set(ref.depends_on ?? []));
  const order: ModuleRef[] = [];
  const queue = refs.filter((r) => pending.get(r)!.size === 0);
  const queued = new Set(queue);
  while (queue.length > 0) {
    const done = queue.shift()!;
    order.push(done);
    for (const ref of refs) {
      const deps = pending.get(ref)!;
      if (queued.has(ref) || !deps.delete(done.name)) continue;
      if (deps.size === 0) {
        queue.push(ref);
        queued.add(ref);
      }
    }
  }
  return { order, blocked: refs.filter((r) => !queued.has(r)) };
}

function inlineModule(ref: ModuleRef, flow: Workflow): Workflow {
  return {
    ...flow,
    kind: 'module',
    name: ref.name,
    description: ref.description ?? '',
    params: [],
    triggers: [],
    steps: ref.steps ?? [],
    modules: [],
    hooks: { pre_scan_steps: [], post_scan_steps: [] },
    runner: ref.runner ?? 'host',
    runner_config: ref.runner_config ?? {},
    file_path: '',
  };
}

function planHooks(wf: Workflow, ctx: StepPlanContext, where: string, which: 'pre' | 'post') {
  const steps: Step[] = which === 'pre' ? wf.hooks?.pre_scan_steps ?? [] : wf.hooks?.post_scan_steps ?? [];
  return planSteps(steps, ctx, `${where}.hooks.${which}`);
}

// Brackets, not angle brackets: a trailing `>` would trip the dangling-operator fix-up.
const notRun = (expr: string) => `[generator: ${expr}]`;

/** Variables a flow hands to one module: flow variables (stringified) + rendered module params. */
function moduleVars(flow: Workflow, ref: ModuleRef, mod: Workflow, input: PlanInput, runtime: Set<string>, warnings: string[]): Record<string, unknown> {
  const provided: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.vars)) if (k !== 'FlowName' && k !== 'ModuleName') provided[k] = valueToString(v);
  provided.flow_name = flow.name;
  for (const [k, v] of Object.entries(ref.params ?? {})) {
    try {
      provided[k] = renderExcept(String(v), input.vars, (root) => runtime.has(root)).text;
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      warnings.push(`modules.${ref.name}.params.${k}: ${err.message}`);
      provided[k] = String(v);
    }
  }
  // As the engine does (flow-exec): ModuleName is the name the flow gives the module.
  const base = { ...input.vars, ModuleName: ref.name, FlowName: flow.name };
  const vars = resolveParams(mod.params ?? [], provided, base, { runGenerator: input.runGenerator ?? notRun });
  return { ...vars, ModuleName: ref.name, FlowName: flow.name };
}

/** False when an `on: manual` trigger exists and none is enabled: CLI runs skip the module (§1.6). */
/** Trigger types of runs started by the scheduler: the manual-trigger gate does not apply to them. */
export const SCHEDULER_TRIGGERS: ReadonlySet<string> = new Set(['cron', 'event', 'watch', 'schedule']);

/** Manual-trigger gate (reference §1.6): a declared `on: manual` trigger with enabled false skips a CLI/API run. */
export function manualRunAllowed(wf: Workflow): boolean {
  const manual = (wf.triggers ?? []).filter((t) => t.on === 'manual');
  return manual.length === 0 || manual.some((t) => t.enabled);
}

const MANUAL_DISABLED = 'manual trigger is disabled: a CLI run skips this module';

function exclusion(name: string, input: PlanInput): PlanModule['skipReason'] {
  if ((input.exclude ?? []).includes(name)) return 'excluded';
  if ((input.fuzzyExclude ?? []).some((p) => p !== '' && name.includes(p))) return 'fuzzy-excluded';
  return undefined;
}

/**
 * A module's steps in declaration order plus, for a sequential module with decisions, the route a
 * dry run follows (exports of steps and earlier modules count as "true").
 */
function planModuleSteps(steps: Step[], ctx: StepPlanContext, where: string, input: PlanInput): { steps: PlanStep[]; route?: PlanRoute } {
  const start: Record<string, unknown> = { ...ctx.vars };
  for (const name of ctx.runtime) start[name] = DRY_RUN_EXPORT_VALUE;
  const planned = planSteps(steps, ctx, where);
  const route = planRoute(steps, planned, ctx, where, start, input.evaluateCondition);
  return route ? { steps: planned, route } : { steps: planned };
}

function shiftRoute(route: PlanRoute, offset: number): PlanRoute {
  return { ...route, entries: route.entries.map((e) => (e.kind === 'stopped' ? e : { ...e, index: e.index + offset })) };
}

function planFlow(wf: Workflow, input: PlanInput, ctx: StepPlanContext, loadModule?: ModuleLoader): PlanModule[] {
  const names = new Set<string>();
  for (const ref of wf.modules) {
    if (names.has(ref.name)) ctx.warnings.push(`modules: duplicate module name '${ref.name}'`);
    names.add(ref.name);
  }
  const { order, blocked } = orderModules(wf.modules);
  const out: PlanModule[] = [];
  for (const ref of order) {
    const pm: PlanModule = { name: ref.name, dependsOn: [...(ref.depends_on ?? [])], steps: [] };
    if (ref.path) pm.path = ref.path;
    if (ref.condition) pm.condition = ref.condition;
    const skip = exclusion(ref.name, input);
    out.push(pm);
    if (skip) {
      pm.skipReason = skip;
      continue;
    }
    let mod: Workflow;
    try {
      if (ref.steps && ref.steps.length > 0) mod = inlineModule(ref, wf);
      else if (loadModule) mod = loadModule(ref);
      else throw new Error(`module '${ref.name}' was not loaded (no module loader given)`);
      if (!manualRunAllowed(mod)) {
        pm.skipReason = 'manual-trigger-disabled';
        continue;
      }
      const vars = moduleVars(wf, ref, mod, input, ctx.runtime, ctx.warnings);
      const modCtx: StepPlanContext = { ...ctx, vars, secrets: [...new Set([...ctx.secrets, ...secretValues(vars)])] };
      const where = `modules.${ref.name}`;
      const pre = planHooks(mod, modCtx, where, 'pre');
      const { steps, route } = planModuleSteps(mod.steps, modCtx, `${where}.steps`, input);
      pm.steps = [...pre, ...steps, ...planHooks(mod, modCtx, where, 'post')];
      // Route indexes are positions in pm.steps, which starts with the module's pre-scan hooks.
      if (route) pm.route = pre.length ? shiftRoute(route, pre.length) : route;
    } catch (err) {
      pm.error = isOsmError(err) || err instanceof Error ? err.message : String(err);
      ctx.warnings.push(`modules.${ref.name}: ${pm.error}`);
    }
    for (const action of [...(ref.on_success ?? []), ...(ref.on_error ?? [])]) {
      if (action.action === 'export' && action.name) ctx.runtime.add(action.name);
    }
  }
  for (const ref of blocked) {
    const error = `circular dependency detected: module ${ref.name} has unmet dependencies`;
    const unknown = (ref.depends_on ?? []).filter((d) => !names.has(d));
    ctx.warnings.push(unknown.length ? `${error} (unknown: ${unknown.join(', ')})` : error);
    const pm: PlanModule = { name: ref.name, dependsOn: [...(ref.depends_on ?? [])], steps: [], error };
    if (ref.path) pm.path = ref.path;
    out.push(pm);
  }
  return out;
}

/** Builds the plan of a module or flow against one target (no execution, no I/O of its own). */
export function buildPlan(wf: Workflow, input: PlanInput, loadModule?: ModuleLoader): Plan {
  const warnings: string[] = [];
  const ctx: StepPlanContext = { vars: input.vars, runtime: new Set(), warnings, secrets: secretValues(input.vars) };
  if (wf.kind === 'module' && !manualRunAllowed(wf)) warnings.push(MANUAL_DISABLED);
  const pre = planHooks(wf, ctx, wf.kind === 'flow' ? 'flow' : 'module', 'pre');
  let steps: PlanStep[] = [];
  let modules: PlanModule[] = [];
  let route: PlanRoute | undefined;
  if (wf.kind === 'flow') modules = planFlow(wf, input, ctx, loadModule);
  else ({ steps, route } = planModuleSteps(wf.steps, ctx, 'steps', input));
  const post = planHooks(wf, ctx, wf.kind === 'flow' ? 'flow' : 'module', 'post');
  const plan: Plan = {
    workflow: { name: wf.name, kind: wf.kind, description: wf.description ?? '' },
    target: input.target,
    workspace: valueToString(input.vars.Workspace ?? input.vars.TargetSpace),
    output: valueToString(input.vars.Output),
    variables: redactVariables(input.vars),
    steps,
    modules,
    hooks: { pre, post },
    warnings,
  };
  if (route) plan.route = route;
  return plan;
}

export { stepExportNames };
