/**
 * Utility-function use cases: evaluate a script (`/functions/eval`, `/functions/execute`) and
 * list the catalogue. Evaluating executes code, so every call is recorded as a `function.eval`
 * event (script head and param names only; values may be secrets). The target and params are
 * untrusted: they are validated before being rendered into the script text, and the script runs
 * in the sandboxed runtime with a time limit.
 */
import { errors, isOsmError, messageOf } from '../errors.js';
import { evaluate } from '../engine/js-runtime.js';
import { catalogByCategory, CATEGORY_TITLES, FUNCTION_CATALOG } from '../engine/functions/catalog.js';
import { referencedVariables, render, TemplateError } from '../workflow/template.js';
import { validateParamValue, validateTarget } from '../workflow/target.js';
import type { AppContext } from './context.js';
import { randomUUID } from 'node:crypto';
import { builtinVariables } from '../workflow/builtin-vars.js';
import { builtinPathsOf } from '../engine/module-exec.js';

/** Time limit of one API evaluation. */
export const EVAL_TIMEOUT_MS = 10_000;
const SCRIPT_HEAD = 500;

export interface EvalInput {
  script?: string;
  target?: string;
  params?: Record<string, string>;
}

function record(app: AppContext, kind: 'eval' | 'execute', script: string, data: Record<string, unknown>): void {
  try {
    app.store.events.insert({
      topic: 'function.eval',
      name: `functions.${kind}`,
      source: 'api',
      source_type: 'eval',
      data_type: 'function',
      data: { script: script.slice(0, SCRIPT_HEAD), ...data },
      processed: true,
      error: typeof data.error === 'string' ? data.error : '',
    });
  } catch {
    // Recording must not change the answer; the store failing shows elsewhere.
  }
}

function fnContext(app: AppContext) {
  return { store: app.store, settings: app.settings().settings, log: () => undefined };
}

function builtinsFor(app: AppContext, target: string): Record<string, unknown> {
  try {
    const s = app.settings();
    return builtinVariables({ target, paths: builtinPathsOf(s), scanTactic: s.settings.scan_tactic, runUuid: randomUUID(), moduleName: 'eval' });
  } catch {
    return {};
  }
}

/** Strips the engine's own "template rendering failed: " prefix (the API adds its own). */
function templateDetail(err: unknown): string {
  return messageOf(err).replace(/^template rendering failed:\s*/i, '');
}

/** POST /functions/eval: render `{{…}}` with target and params, then evaluate. */
export function evalScript(app: AppContext, input: EvalInput): { result: unknown; rendered_script: string } {
  const script = typeof input.script === 'string' ? input.script : '';
  if (script.trim() === '') throw errors.scriptRequired();
  const target = input.target ?? '';
  const params = input.params ?? {};
  if (target !== '') validateTarget(target);
  for (const [k, v] of Object.entries(params)) validateParamValue(k, v);
  // Built-in variables as a run would have them (BaseFolder, Workspaces, Output, Today, threads …;
  // reference: "renders {{..}} with built-ins (+target)"), then the params, then the target.
  const vars: Record<string, unknown> = { ...builtinsFor(app, target), ...params, ...(target !== '' ? { target, Target: target } : {}) };
  const meta = { target, param_names: Object.keys(params) };
  let rendered: string;
  try {
    rendered = render(script, vars);
  } catch (err) {
    const e = errors.templateFailed(err instanceof TemplateError ? templateDetail(err) : messageOf(err));
    record(app, 'eval', script, { ...meta, error: e.message });
    throw e;
  }
  try {
    const { value } = evaluate(rendered, vars, { timeoutMs: EVAL_TIMEOUT_MS, ctx: fnContext(app) });
    record(app, 'eval', script, meta);
    return { result: value, rendered_script: rendered };
  } catch (err) {
    const e = errors.executionFailed(isOsmError(err) ? err.message : messageOf(err));
    record(app, 'eval', script, { ...meta, error: e.message });
    throw e;
  }
}

/**
 * POST /functions/execute: evaluates an expression with `context` bound as variables (data, never
 * code). Templates in the expression are rendered from the context too; the context values it
 * references must then pass the same checks as params.
 */
export function executeExpression(app: AppContext, input: { expression?: string; context?: Record<string, unknown> }): { data: { result: unknown } } {
  const expression = typeof input.expression === 'string' ? input.expression : '';
  if (expression.trim() === '') throw errors.expressionRequired();
  const context = input.context ?? {};
  const meta = { context_keys: Object.keys(context) };
  let code = expression;
  if (expression.includes('{{')) {
    for (const name of referencedVariables(expression)) {
      const v = context[name];
      if (v !== undefined && typeof v !== 'number' && typeof v !== 'boolean') validateParamValue(name, typeof v === 'string' ? v : JSON.stringify(v));
    }
    try {
      code = render(expression, context);
    } catch (err) {
      const e = errors.templateFailed(templateDetail(err));
      record(app, 'execute', expression, { ...meta, error: e.message });
      throw e;
    }
  }
  try {
    const { value } = evaluate(code, context, { timeoutMs: EVAL_TIMEOUT_MS, ctx: fnContext(app) });
    record(app, 'execute', expression, meta);
    return { data: { result: value } };
  } catch (err) {
    const e = errors.executionFailed(messageOf(err));
    record(app, 'execute', expression, { ...meta, error: e.message });
    throw e;
  }
}

/** GET /functions/list: the catalogue by category. */
export function listFunctions(): { functions: ReturnType<typeof catalogByCategory> } {
  return { functions: catalogByCategory() };
}

export interface FunctionInfo {
  name: string;
  signature: string;
  description: string;
  return_type: string;
  category: string;
  aliases: string[];
  example?: string;
}

/** GET /functions?category=x: catalogue entries, optionally of one category (unknown → 404). */
export function functionsOf(category?: string): { data: FunctionInfo[]; category: string; total: number } {
  const wanted = (category ?? '').trim();
  if (wanted && !Object.prototype.hasOwnProperty.call(CATEGORY_TITLES, wanted) && !FUNCTION_CATALOG.some((e) => e.category === wanted)) {
    throw errors.functionCategoryNotFound(wanted);
  }
  const data = FUNCTION_CATALOG.filter((e) => !wanted || e.category === wanted).map((e) => ({
    name: e.name,
    signature: e.signature,
    description: e.description,
    return_type: e.return_type,
    category: e.category,
    aliases: e.aliases,
    ...(e.example ? { example: e.example } : {}),
  }));
  return { data, category: wanted, total: data.length };
}
