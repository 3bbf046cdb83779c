/**
 * Utility-function use cases: evaluate a script (`/functions/eval`, `/functions/execute`) and
 * list the catalogue. Evaluating executes code, so every call is recorded as a `function.eval`
 * event (script head and param names only; values may be secrets). The target and params are
 * untrusted: they are validated before being rendered into the script text.
 *
 * Scripts never run on the daemon's event loop: each evaluation runs in a fresh evaluator process
 * (src/engine/scripts/pool.ts) whose whole process group — commands started by `exec_cmd`
 * included — is killed at the time limit. At most `server.max_concurrent_evals` evaluations run
 * at once (read per request); further calls are refused with 429. The http functions follow the
 * outbound policy (`server.outbound_allowlist`, src/util/outbound.ts): loopback, private and
 * metadata addresses are refused unless allowlisted.
 */
import { errors, isOsmError, messageOf } from '../errors.js';
import { evaluate } from '../engine/js-runtime.js';
import { apiScriptPool, ScriptCallError } from '../engine/scripts/pool.js';
import { catalogByCategory, CATEGORY_TITLES, FUNCTION_CATALOG } from '../engine/functions/catalog.js';
import { referencedVariables, render, TemplateError } from '../workflow/template.js';
import { validateParamValue, validateTarget } from '../workflow/target.js';
import type { AppContext } from './context.js';
import { randomUUID } from 'node:crypto';
import { builtinVariables } from '../workflow/builtin-vars.js';
import { builtinPathsOf } from '../engine/module-exec.js';
import { outboundPolicyOf } from '../util/outbound.js';

/** Default time limit of one API evaluation. */
export const EVAL_TIMEOUT_MS = 10_000;
const SCRIPT_HEAD = 500;
/** Seconds a client told 429 should wait before trying again. */
export const EVAL_RETRY_AFTER_S = 1;

/** The time limit of one API evaluation: 10 s, or `OSM_EVAL_TIMEOUT_MS` (tests, operators; at most 10 min). */
export function evalTimeoutMs(): number {
  const n = Number(process.env.OSM_EVAL_TIMEOUT_MS);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 600_000) : EVAL_TIMEOUT_MS;
}

export interface EvalInput {
  script?: string;
  target?: string;
  params?: Record<string, string>;
}

async function record(app: AppContext, kind: 'eval' | 'execute', script: string, data: Record<string, unknown>): Promise<void> {
  try {
    await app.repos.events.insert({
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

const inFlight = new WeakMap<AppContext, number>();

/** Takes one of the app's evaluation slots (429 when all are taken); returns its release. */
function takeSlot(app: AppContext): () => void {
  const configured = Math.trunc(Number((app.settings().settings.server as { max_concurrent_evals?: unknown }).max_concurrent_evals));
  const limit = Number.isFinite(configured) && configured >= 1 ? configured : 3;
  const busy = inFlight.get(app) ?? 0;
  if (busy >= limit) throw errors.tooManyEvals(limit);
  inFlight.set(app, busy + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    inFlight.set(app, Math.max(0, (inFlight.get(app) ?? 1) - 1));
  };
}

/** Evaluates in an evaluator process (inline only when no build of it exists, i.e. from sources). */
async function evaluateIsolated(app: AppContext, script: string, vars: Record<string, unknown>): Promise<unknown> {
  const all = app.settings().settings;
  const outbound = outboundPolicyOf(all);
  // Only what the library reads (notification targets, the allowlist, the folders run_module /
  // run_flow start their child osm in): keys and secrets stay here.
  const settings = { notification: all.notification, server: { outbound_allowlist: outbound.allowlist }, base_folder: all.base_folder, environments: { workflows: all.environments.workflows } };
  const timeoutMs = evalTimeoutMs();
  const pool = apiScriptPool();
  if (!pool) return evaluate(script, vars, { timeoutMs, ctx: { store: app.store, settings, outbound, log: () => undefined } }).value;
  try {
    return await pool.run({ script, vars, ctx: { db: app.db, settings, outbound }, timeoutMs });
  } catch (err) {
    if (err instanceof ScriptCallError && err.kind === 'unavailable') throw errors.evaluatorUnavailable(err.message);
    throw err;
  }
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
export async function evalScript(app: AppContext, input: EvalInput): Promise<{ result: unknown; rendered_script: string }> {
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
    await record(app, 'eval', script, { ...meta, error: e.message });
    throw e;
  }
  let release: () => void;
  try {
    release = takeSlot(app);
  } catch (err) {
    await record(app, 'eval', script, { ...meta, error: messageOf(err) });
    throw err;
  }
  try {
    const value = await evaluateIsolated(app, rendered, vars);
    await record(app, 'eval', script, meta);
    return { result: value, rendered_script: rendered };
  } catch (err) {
    const e = isOsmError(err) && err.status >= 500 ? err : errors.executionFailed(messageOf(err));
    await record(app, 'eval', script, { ...meta, error: e.message });
    throw e;
  } finally {
    release();
  }
}

/**
 * POST /functions/execute: evaluates an expression with `context` bound as variables (data, never
 * code). Templates in the expression are rendered from the context too; the context values it
 * references must then pass the same checks as params.
 */
export async function executeExpression(app: AppContext, input: { expression?: string; context?: Record<string, unknown> }): Promise<{ data: { result: unknown } }> {
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
      await record(app, 'execute', expression, { ...meta, error: e.message });
      throw e;
    }
  }
  let release: () => void;
  try {
    release = takeSlot(app);
  } catch (err) {
    await record(app, 'execute', expression, { ...meta, error: messageOf(err) });
    throw err;
  }
  try {
    const value = await evaluateIsolated(app, code, context);
    await record(app, 'execute', expression, meta);
    return { data: { result: value } };
  } catch (err) {
    const e = isOsmError(err) && err.status >= 500 ? err : errors.executionFailed(messageOf(err));
    await record(app, 'execute', expression, { ...meta, error: e.message });
    throw e;
  } finally {
    release();
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
