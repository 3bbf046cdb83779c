/**
 * The workflow linter: problems the reference only discovers at run time (or never), reported
 * up front. Each issue carries its `rule` so users can disable rules they disagree with.
 *
 * Rules: undefined-variable, foreach-variable, duplicate-step-name, duplicate-module-name,
 * invalid-goto, unknown-dependency, dependency-cycle, unknown-key, extends-ignored, ignored-field,
 * empty-command, unknown-function, unsupported-step-type, report-path, action, js-return.
 */
import { Script } from 'node:vm';
import type { Action, ModuleRef, Step, Workflow, WorkflowIssue } from './types.js';
import { ACTION_NAMES } from './wf-schema-common.js';
import { PARAM_KEYS, REPORT_KEYS, TRIGGER_KEYS } from './schema.js';
import { issueAt } from './wf-issues.js';
import { originOf } from './wf-origin.js';
import { lintVariables } from './wf-lint-vars.js';
import { calledFunctions } from './wf-js-calls.js';

export { formatIssue } from './wf-issues.js';

export interface LintOptions {
  /** Names of the utility functions; when given, calls to other names are reported. */
  knownFunctions?: Set<string>;
  /** Loads the module a flow entry points at (to learn its exports); optional. */
  resolveModule?: (ref: ModuleRef) => Workflow | undefined;
}

/** Common slips for top-level keys (singular forms, v4 names). */
const ROOT_KEY_HINTS: Record<string, string> = {
  trigger: 'triggers', report: 'reports', param: 'params', step: 'steps', module: 'modules', hook: 'hooks',
  dependency: 'dependencies', desc: 'description', preference: 'preferences', extend: 'extends', overrides: 'override',
};

const OVERRIDABLE = new Set(['params', 'steps', 'modules', 'triggers', 'dependencies', 'preferences', 'runner', 'runner_config']);

type Add = (node: object | undefined, key: string | undefined, path: string, message: string, severity: WorkflowIssue['severity'], rule: string) => void;

/** Lints a resolved workflow; returns warnings and errors, each with its rule. */
export function lintWorkflow(wf: Workflow, opts: LintOptions = {}): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  const add: Add = (node, key, path, message, severity, rule) => issues.push(issueAt(wf, node, key, path, message, severity, rule));

  const root = originOf(wf);
  for (const key of root?.unknownKeys ?? []) {
    const hint = ROOT_KEY_HINTS[key] ? `; did you mean '${ROOT_KEY_HINTS[key]}'?` : '';
    add(wf, key, key, `unknown key '${key}' (ignored)${hint}`, 'warning', 'unknown-key');
  }
  for (const key of root?.ignoredKeys ?? []) {
    const fix = OVERRIDABLE.has(key) ? `use override.${key} instead` : 'a child workflow cannot change it';
    add(wf, key, key, `'${key}' is ignored because the workflow uses extends; ${fix}`, 'warning', 'extends-ignored');
  }
  if (wf.kind === 'flow' && wf.steps.length > 0) add(wf, 'steps', 'steps', 'steps are ignored in a flow (use modules)', 'warning', 'ignored-field');
  if (wf.kind === 'module' && wf.modules.length > 0) add(wf, 'modules', 'modules', 'modules are ignored in a module (use steps)', 'warning', 'ignored-field');

  lintEntryKeys(wf.params, 'params', PARAM_KEYS, add, { value: 'default' });
  // A report's stray `default:` is explained by the report-path warning below.
  lintEntryKeys(wf.reports, 'reports', REPORT_KEYS, add, { file: 'path' }, (r, key) => key === 'default' && (r as { path: string }).path.trim() === '');
  lintEntryKeys(wf.triggers, 'triggers', TRIGGER_KEYS, add, {});
  wf.reports.forEach((r, i) => {
    if (r.path.trim() === '') {
      const hint = originOf(r)?.keyLines.default !== undefined ? " (its 'default:' key is ignored; reports take 'path:')" : '';
      add(r, 'path', `reports[${i}].path`, `report '${r.name}' has no path; nothing is registered for it${hint}`, 'warning', 'report-path');
    }
  });

  if (wf.kind === 'module') lintStepList(wf.steps, 'steps', add, opts);
  lintStepList(wf.hooks.pre_scan_steps, 'hooks.pre_scan_steps', add, opts);
  lintStepList(wf.hooks.post_scan_steps, 'hooks.post_scan_steps', add, opts);
  if (wf.kind === 'flow') {
    lintDuplicates(wf.modules.map((m, i): [ModuleRef, string] => [m, `modules[${i}]`]), 'module', add);
    lintDeps(wf.modules, 'modules', 'module', add);
    wf.modules.forEach((m, i) => {
      for (const key of originOf(m)?.unknownKeys ?? []) add(m, key, `modules[${i}].${key}`, `unknown key '${key}' (ignored)`, 'warning', 'unknown-key');
      lintActions(m, `modules[${i}]`, add);
      if (m.steps?.length) lintStepList(m.steps, `modules[${i}].steps`, add, opts);
    });
  }
  lintVariables(wf, (i) => issues.push(i), opts.resolveModule);
  return issues;
}

/** Keys of `params[]` / `reports[]` / `triggers[]` entries that the reference ignores (with a hint when one is a common slip). */
function lintEntryKeys(items: object[], path: string, known: ReadonlySet<string>, add: Add, hints: Record<string, string>, skip?: (item: object, key: string) => boolean): void {
  items.forEach((item, i) => {
    for (const key of Object.keys(originOf(item)?.keyLines ?? {})) {
      if (known.has(key) || skip?.(item, key)) continue;
      const hint = hints[key] ? `; did you mean '${hints[key]}'?` : '';
      add(item, key, `${path}[${i}].${key}`, `unknown key '${key}' (ignored)${hint}`, 'warning', 'unknown-key');
    }
  });
}

/** Rules over one list of steps that run together (a module body, a hook list, an inline module). */
function lintStepList(steps: Step[], path: string, add: Add, opts: LintOptions): void {
  lintDuplicates(flattenParallel(steps, path), 'step', add);
  lintDeps(steps, path, 'step', add);
  const names = new Set(steps.map((s) => s.name));
  const visit = (step: Step, p: string, nested: boolean) => {
    lintStep(step, p, add, opts);
    if (nested) lintNestedGotos(step, p, add);
    else lintGotos(step, p, names, add);
    step.parallel_steps?.forEach((c, i) => visit(c, `${p}.parallel_steps[${i}]`, true));
    if (step.step) visit(step.step, `${p}.step`, true);
  };
  steps.forEach((s, i) => visit(s, `${path}[${i}]`, false));
}

/** A foreach inner step or parallel-steps child runs its decision's inline work, but a goto there means nothing. */
function lintNestedGotos(step: Step, path: string, add: Add): void {
  const d = step.decision;
  if (!d) return;
  const works = [...Object.values(d.cases ?? {}), ...(d.default ? [d.default] : []), ...(d.conditions ?? [])];
  if (works.some((w) => w.goto)) {
    add(step, 'decision', `${path}.decision`, 'goto is ignored in a foreach inner step or a parallel-steps child (its inline commands/functions still run)', 'warning', 'invalid-goto');
  }
}

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(ACTION_NAMES);

/** on_success / on_error entries the reference silently ignores (no `action:`, or an unknown one). */
function lintActions(owner: Step | ModuleRef, path: string, add: Add): void {
  for (const key of ['on_success', 'on_error'] as const) {
    (owner[key] ?? []).forEach((a: Action, i) => {
      if (KNOWN_ACTIONS.has(a.action)) return;
      const what = a.action ? `unknown action '${a.action}'` : "action without 'action:'";
      add(owner, key, `${path}.${key}[${i}].action`, `${what} does nothing (use log, abort, continue, export, notify, or run with type: bash + command / type: function + functions)`, 'warning', 'action');
    });
  }
}

function lintStep(step: Step, path: string, add: Add, opts: LintOptions): void {
  for (const key of step.unknown_keys ?? []) add(step, key, `${path}.${key}`, `unknown key '${key}' (ignored)`, 'warning', 'unknown-key');
  lintActions(step, path, add);
  if (step.type === 'agent-sdk') {
    add(step, 'type', `${path}.type`, `step type '${step.type}' is parsed but not supported by osm; the step will fail when it runs`, 'warning', 'unsupported-step-type');
  }
  for (const key of step.unsupported_agent_fields ?? []) {
    add(step, key, `${path}.${key}`, `agent field '${key}' is not supported by osm; the step will fail when it runs`, 'warning', 'unsupported-step-type');
  }
  const blank = (v: string | undefined) => v !== undefined && v.trim() === '';
  if (blank(step.command)) add(step, 'command', `${path}.command`, 'empty command', 'warning', 'empty-command');
  if (blank(step.function)) add(step, 'function', `${path}.function`, 'empty function', 'warning', 'empty-command');
  for (const key of ['commands', 'parallel_commands', 'functions', 'parallel_functions'] as const) {
    (step[key] ?? []).forEach((v, i) => {
      if (v.trim() === '') add(step, key, `${path}.${key}[${i}]`, `empty entry in ${key}`, 'warning', 'empty-command');
    });
  }
  if (step.type === 'function') {
    const snippets: [string, string][] = [
      ...(step.function ? [['function', step.function] as [string, string]] : []),
      ...(step.functions ?? []).map((f, i): [string, string] => [`functions[${i}]`, f]),
      ...(step.parallel_functions ?? []).map((f, i): [string, string] => [`parallel_functions[${i}]`, f]),
    ];
    for (const [where, code] of snippets) {
      if (topLevelReturn(code)) {
        add(step, where.replace(/\[\d+\]$/, ''), `${path}.${where}`, "top-level 'return' is a JavaScript syntax error here (the snippet is a script, not a function body): the step fails; end with the value instead", 'warning', 'js-return');
      }
    }
  }
  if (opts.knownFunctions && step.type === 'function') {
    const snippets = [step.function, ...(step.functions ?? []), ...(step.parallel_functions ?? [])].filter((s): s is string => !!s);
    const reported = new Set<string>();
    for (const snippet of snippets) {
      for (const fn of calledFunctions(snippet)) {
        if (opts.knownFunctions.has(fn) || reported.has(fn)) continue;
        reported.add(fn);
        add(step, step.function ? 'function' : step.functions ? 'functions' : 'parallel_functions', `${path}`, `unknown function '${fn}'`, 'warning', 'unknown-function');
      }
    }
  }
}

/** True when compiling the snippet (never running it) fails only because of a top-level `return`. */
function topLevelReturn(code: string): boolean {
  if (!/\breturn\b/.test(code)) return false;
  // Template placeholders are not JS; make them harmless before compiling.
  const js = code.replace(/\{\{[\s\S]*?\}\}/g, '0').replace(/\[\[[\s\S]*?\]\]/g, '0');
  try {
    new Script(js);
    return false;
  } catch (err) {
    return err instanceof SyntaxError && /Illegal return/.test(err.message);
  }
}

function lintGotos(step: Step, path: string, names: Set<string>, add: Add): void {
  const d = step.decision;
  if (!d) return;
  const targets: [string, string][] = [];
  for (const [value, work] of Object.entries(d.cases ?? {})) if (work.goto) targets.push([`decision.cases.${value}.goto`, work.goto]);
  if (d.default?.goto) targets.push(['decision.default.goto', d.default.goto]);
  (d.conditions ?? []).forEach((c, i) => { if (c.goto) targets.push([`decision.conditions[${i}].goto`, c.goto]); });
  for (const [p, target] of targets) {
    if (target !== '_end' && !names.has(target)) {
      add(step, 'decision', `${path}.${p}`, `goto target '${target}' is not a step of this module (use a step name or _end)`, 'error', 'invalid-goto');
    }
  }
}

/** Steps that run as siblings of a module: the list plus parallel-steps children (foreach inner steps repeat by design). */
function flattenParallel(steps: Step[], path: string): [Step, string][] {
  return steps.flatMap((s, i): [Step, string][] => [
    [s, `${path}[${i}]`],
    ...flattenParallel(s.parallel_steps ?? [], `${path}[${i}].parallel_steps`),
  ]);
}

/** Duplicate names (error at each later occurrence). */
function lintDuplicates(items: [Step | ModuleRef, string][], what: 'step' | 'module', add: Add): void {
  const first = new Map<string, string>();
  for (const [item, p] of items) {
    if (!item.name) continue;
    const prev = first.get(item.name);
    if (prev !== undefined) add(item, 'name', `${p}.name`, `duplicate ${what} name '${item.name}' (first used by ${prev})`, 'error', `duplicate-${what}-name`);
    else first.set(item.name, p);
  }
}

/** Unknown depends_on and dependency cycles among the items of one list. */
function lintDeps(items: (Step | ModuleRef)[], path: string, what: 'step' | 'module', add: Add): void {
  const index = new Map<string, number>();
  items.forEach((item, i) => { if (item.name && !index.has(item.name)) index.set(item.name, i); });
  items.forEach((item, i) => {
    for (const dep of item.depends_on ?? []) {
      if (!index.has(dep)) add(item, 'depends_on', `${path}[${i}].depends_on`, `depends on unknown ${what} '${dep}'`, 'error', 'unknown-dependency');
    }
  });
  for (const cycle of findCycles(items)) {
    const i = index.get(cycle[0]!)!;
    add(items[i], 'depends_on', `${path}[${i}].depends_on`, `dependency cycle: ${cycle.join(' -> ')}`, 'error', 'dependency-cycle');
  }
}

/** Each elementary cycle reachable by DFS, reported once (as `a -> b -> a`). */
function findCycles(items: (Step | ModuleRef)[]): string[][] {
  const deps = new Map<string, string[]>();
  for (const item of items) if (item.name && !deps.has(item.name)) deps.set(item.name, item.depends_on ?? []);
  const state = new Map<string, 'active' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (name: string) => {
    state.set(name, 'active');
    stack.push(name);
    for (const dep of deps.get(name) ?? []) {
      if (!deps.has(dep)) continue;
      if (state.get(dep) === 'active') cycles.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const name of deps.keys()) if (!state.has(name)) visit(name);
  return cycles;
}
