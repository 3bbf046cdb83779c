/**
 * Lint rule `undefined-variable` (and `foreach-variable`): every `{{name}}` must be a built-in, a
 * declared param, an export of an earlier step/module, or the foreach variable inside its step;
 * `[[name]]` is only meaningful inside a foreach. Undefined variables render as '' at run time,
 * which silently produces wrong commands — hence a warning here.
 */
import { BUILTIN_VARIABLES } from './builtins.js';
import type { Action, ModuleRef, Step, Workflow, WorkflowIssue } from './types.js';
import { issueAt } from './wf-issues.js';
import { templateSyntaxError } from './template.js';

export type AddIssue = (issue: WorkflowIssue) => void;

const KEYWORDS = new Set(['true', 'false', 'True', 'False', 'none', 'None', 'nil', 'null', 'and', 'or', 'not', 'in', 'is', 'if', 'else', 'undefined']);

/** The content of a `[[ … ]]` the engine renders as a loop variable. */
const LOOP_PLACEHOLDER = /^\s*[A-Za-z_][A-Za-z0-9_.]*\s*$/;

/** Root variable names referenced inside `{{ … }}` (open = '{{') or `[[ … ]]` (open = '[['). */
export function templateVariables(text: string, open: '{{' | '[[' = '{{'): string[] {
  const re = open === '{{' ? /\{\{([\s\S]*?)\}\}/g : /\[\[([\s\S]*?)\]\]/g;
  const names: string[] = [];
  for (const m of text.matchAll(re)) {
    // The engine renders `[[ name ]]` (an identifier, dotted paths too) and nothing else: a bash test
    // such as `[[ -d /tmp ]]` or a JS array `[[1,2]]` is no placeholder (src/engine/steps/foreach.ts).
    if (open === '[[' && !LOOP_PLACEHOLDER.test(m[1]!)) continue;
    const expr = m[1]!.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ');
    for (const id of expr.matchAll(/(?<![\w.$])([A-Za-z_]\w*)\b(?!\s*\()/g)) {
      const name = id[1]!;
      if (!KEYWORDS.has(name) && !/^\d/.test(name) && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** Variables a step defines for the steps after it (declared exports, automatic exports, export actions). */
export function stepExports(step: Step): string[] {
  const out = Object.keys(step.exports ?? {}).filter((k) => k !== 'streaming_output');
  out.push(...autoExports(step));
  for (const a of [...(step.on_success ?? []), ...(step.on_error ?? [])]) {
    if (a.action === 'export' && a.name) out.push(a.name);
  }
  for (const child of step.parallel_steps ?? []) out.push(...stepExports(child));
  return out;
}

function autoExports(step: Step): string[] {
  const names = [...new Set([step.name, step.name.replace(/-/g, '_')])];
  switch (step.type) {
    case 'http':
      return names.flatMap((n) => [`${n}_http_resp`, `${n}_status_code`, `${n}_body`, `${n}_headers`]);
    case 'llm':
      return names.flatMap((n) => [`${n}_llm_resp`, `${n}_content`]);
    case 'agent':
      return ['agent_content', 'agent_history', 'agent_iterations', 'agent_total_tokens', 'agent_prompt_tokens',
        'agent_completion_tokens', 'agent_tool_results', 'agent_plan', 'agent_goal_results', 'agent_cost', 'agent_models', 'agent_transcript'];
    case 'agent-acp':
      return ['acp_output', 'acp_stderr', 'acp_agent'];
    case 'agent-sdk':
      return ['sdk_output', 'sdk_agent', 'sdk_session_id'];
    default:
      return [];
  }
}

/** Keys of a step whose text is not rendered as a template, or which hold nested steps checked separately. */
const SKIP_STEP_KEYS = new Set(['name', 'type', 'parallel_steps', 'step', 'unknown_keys', 'depends_on', 'on_success', 'on_error', 'decision']);
/** Command fields of bash-like steps and the request of http steps: an unrendered `[[name]]` there fails the step at run time. */
const COMMAND_KEYS = new Set(['command', 'commands', 'parallel_commands', 'function', 'functions', 'parallel_functions', 'url', 'headers', 'request_body']);
/** Keys evaluated after the step ran, so its own automatic exports are visible there. */
const AFTER_RUN_KEYS = new Set(['exports', 'decision', 'on_success', 'on_error']);

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => collectStrings(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => collectStrings(v, out));
}

function actionStrings(actions: Action[] | undefined): string[] {
  const out: string[] = [];
  // Action `condition` is JS over plain variables and `value` is stored raw: neither is rendered.
  for (const a of actions ?? []) collectStrings([a.message, a.command, a.functions, a.notify], out);
  return out;
}

interface Ctx {
  wf: Workflow;
  add: AddIssue;
}

interface Scope {
  known: Set<string>;
  /** Name of the foreach variable when inside a foreach inner step. */
  loopVar?: string;
}

function checkText(ctx: Ctx, node: object, key: string, path: string, texts: string[], scope: Scope, seen: Set<string>): void {
  for (const text of texts) {
    if (text.includes('{{') && COMMAND_KEYS.has(key) && !seen.has(`${key}:{{syntax`)) {
      // Checked as the engine renders it: [[var]] becomes {{var}} first, so a [[var]] inside a tag nests tags.
      const error = templateSyntaxError(text.replace(/\[\[\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\]\]/g, '{{$1}}'));
      if (error !== undefined) {
        seen.add(`${key}:{{syntax`);
        ctx.add(issueAt(ctx.wf, node, key, path, `${error} (the step fails without running)`, 'error', 'template-syntax'));
      }
    }
    if (text.includes('{{')) {
      for (const name of templateVariables(text, '{{')) {
        if (scope.known.has(name) || seen.has(`${key}:${name}`)) continue;
        seen.add(`${key}:${name}`);
        ctx.add(issueAt(ctx.wf, node, key, path, `undefined variable '${name}' (not a built-in, a param or an export of an earlier step)`, 'warning', 'undefined-variable'));
      }
    }
    if (text.includes('[[')) {
      for (const name of templateVariables(text, '[[')) {
        if (seen.has(`${key}:[${name}`)) continue;
        seen.add(`${key}:[${name}`);
        if (scope.loopVar === undefined) {
          // In a command it would reach the shell literally: the step fails at run time without running it.
          const fatal = COMMAND_KEYS.has(key);
          ctx.add(issueAt(ctx.wf, node, key, path, `[[${name}]] is only valid inside a foreach step${fatal ? ' (outside one it is not rendered: the step fails without running)' : ''}`, fatal ? 'error' : 'warning', 'foreach-variable'));
        } else if (!scope.known.has(name)) {
          ctx.add(issueAt(ctx.wf, node, key, path, `undefined loop variable '[[${name}]]' (the foreach variable is '${scope.loopVar}')`, 'warning', 'undefined-variable'));
        }
      }
    }
  }
}

function checkStep(ctx: Ctx, step: Step, path: string, scope: Scope): void {
  const seen = new Set<string>();
  const after: Scope = { ...scope, known: new Set([...scope.known, ...autoExports(step), ...Object.keys(step.exports ?? {})]) };
  const foreachScope: Scope | undefined = step.type === 'foreach' && step.variable
    ? { loopVar: step.variable, known: new Set([...scope.known, step.variable, '_id_', `_${step.variable}_`]) }
    : undefined;
  for (const [key, value] of Object.entries(step)) {
    if (SKIP_STEP_KEYS.has(key) && key !== 'decision') continue;
    const texts: string[] = [];
    if (key === 'decision') {
      const d = step.decision!;
      collectStrings([d.switch, Object.values(d.cases ?? {}), d.default, d.conditions], texts);
    } else {
      collectStrings(value, texts);
    }
    // variable_pre_process runs per item, so the loop variable is visible there.
    const s = key === 'variable_pre_process' && foreachScope ? foreachScope : AFTER_RUN_KEYS.has(key) ? after : scope;
    checkText(ctx, step, key, `${path}.${key}`, texts, s, seen);
  }
  checkText(ctx, step, 'on_success', `${path}.on_success`, actionStrings(step.on_success), after, seen);
  checkText(ctx, step, 'on_error', `${path}.on_error`, actionStrings(step.on_error), after, seen);
  step.parallel_steps?.forEach((child, i) => checkStep(ctx, child, `${path}.parallel_steps[${i}]`, scope));
  if (step.step) checkStep(ctx, step.step, `${path}.step`, foreachScope ?? scope);
}

/** Checks a list of steps in order, growing `known` with each step's exports. */
function checkSteps(ctx: Ctx, steps: Step[], path: string, known: Set<string>): void {
  steps.forEach((step, i) => {
    checkStep(ctx, step, `${path}[${i}]`, { known });
    for (const name of stepExports(step)) known.add(name);
  });
}

const LEGACY_INPUT_TYPES = new Set(['file', 'event_data', 'function', 'param']);

/** Variables an event trigger's `input` defines for event-triggered runs (exports-style `name: expression` maps). */
function triggerInputVariables(wf: Workflow): string[] {
  const out: string[] = [];
  for (const t of wf.triggers) {
    const input = t.input;
    if (!input) continue;
    if (typeof input.type === 'string' && LEGACY_INPUT_TYPES.has(input.type)) {
      out.push(typeof input.name === 'string' && input.name ? input.name : 'target');
    } else {
      out.push(...Object.keys(input));
    }
  }
  return out;
}

/** Runs the variable rules over a resolved workflow. */
export function lintVariables(wf: Workflow, add: AddIssue, resolveModule?: (ref: ModuleRef) => Workflow | undefined): void {
  const ctx: Ctx = { wf, add };
  const known = new Set<string>([...BUILTIN_VARIABLES, ...wf.params.map((p) => p.name), ...triggerInputVariables(wf)]);
  wf.params.forEach((p, i) => {
    if (typeof p.default === 'string') checkText(ctx, p, 'default', `params[${i}].default`, [p.default], { known }, new Set());
  });
  wf.dependencies.functions_conditions.forEach((c, i) =>
    checkText(ctx, wf, 'dependencies', `dependencies.functions_conditions[${i}]`, [c], { known }, new Set()));
  checkSteps(ctx, wf.hooks.pre_scan_steps, 'hooks.pre_scan_steps', new Set(known));

  let certain = true;
  if (wf.kind === 'module') {
    checkSteps(ctx, wf.steps, 'steps', known);
  } else {
    wf.modules.forEach((ref, i) => {
      if (certain) {
        checkText(ctx, ref, 'params', `modules[${i}].params`, Object.values(ref.params ?? {}), { known }, new Set());
      }
      const inline = (ref.steps ?? []).length > 0;
      const module = inline ? undefined : resolveModule?.(ref);
      if (inline) {
        checkSteps(ctx, ref.steps!, `modules[${i}].steps`, new Set([...known, ...Object.keys(ref.params ?? {})]));
      }
      const steps = inline ? ref.steps! : module?.steps;
      if (steps) steps.forEach((s) => stepExports(s).forEach((n) => known.add(n)));
      // Without the module's file we cannot know its exports: stop checking later modules rather than guess.
      else certain = false;
      for (const a of ref.on_success ?? []) if (a.action === 'export' && a.name) known.add(a.name);
    });
  }
  if (certain) {
    checkSteps(ctx, wf.hooks.post_scan_steps, 'hooks.post_scan_steps', new Set(known));
    wf.reports.forEach((r, i) => checkText(ctx, wf, 'reports', `reports[${i}].path`, [r.path], { known }, new Set()));
  }
}
