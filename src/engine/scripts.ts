import { evaluate, evaluateCondition, SkipSignal, type FnContext } from './js-runtime.js';
import { valueToString } from '../workflow/template.js';
import { renderJs } from './safe-render.js';
import { ModuleSkip, StepFailure, type EngineDeps, type Scope } from './types.js';
import { messageOf } from '../errors.js';
import { quickScriptPool, scriptPool, ScriptCallError } from './scripts/pool.js';
import type { WorkerFnContext } from './scripts/protocol.js';
import { targetScopeOf } from './scope-gate.js';
import { sqliteLocator, type DbLocator } from '../store/locator.js';

/** The function context (workspace, run ids, paths, output sink) of a scope. */
export function fnContext(scope: Scope): FnContext {
  const v = scope.vars;
  const exec = scope.exec;
  const ts = targetScopeOf(scope);
  return {
    workspace: String(v.Workspace ?? v.TargetSpace ?? ''),
    runUuid: exec.runUuid,
    dbRunId: exec.recorder.run.id,
    workflowName: scope.workflow.name,
    workflowKind: scope.workflow.kind,
    target: String(v.Target ?? ''),
    output: String(v.Output ?? ''),
    stateFile: String(v.StateFile ?? ''),
    log: (line: string) => exec.printer.functionLog(line),
    store: exec.deps.store,
    settings: exec.settings,
    signal: exec.signal,
    ...(ts?.specs.length ? { scope: ts.specs } : {}),
  };
}

/** Renders (untrusted values escaped) and evaluates one script inline (the fallback when no evaluator build exists); skip() becomes ModuleSkip. */
export function runScript(script: string, scope: Scope, extraVars?: Record<string, unknown>): { value: unknown; rendered: string } {
  const vars = extraVars ? { ...scope.vars, ...extraVars } : scope.vars;
  const rendered = renderJs(script, vars, scope.tainted);
  try {
    const res = evaluate(rendered, vars, { ctx: fnContext(scope) });
    return { value: res.value, rendered };
  } catch (err) {
    if (err instanceof SkipSignal) throw new ModuleSkip(err.message);
    throw new StepFailure(messageOf(err), '', [rendered]);
  }
}

/** Default limit of a script run in a worker when its step has no timeout (imports can be long). */
export const WORKER_SCRIPT_TIMEOUT_MS = 6 * 3600_000;
/** Limit of conditions (pre_condition, decision, module, action) and other short scripts: the runtime default. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 10_000;

/**
 * Where evaluators open the database: the engine's locator (PostgreSQL or SQLite), else the
 * SQLite file of its store.
 */
function dbLocatorOf(deps: EngineDeps & { db?: DbLocator }): DbLocator {
  return deps.db ?? sqliteLocator(deps.store?.path ?? ':memory:');
}

/** The parts of a scope's function context that cross to an evaluator process. */
export function workerContext(scope: Scope): WorkerFnContext {
  const c = fnContext(scope);
  return {
    db: dbLocatorOf(scope.exec.deps),
    workspace: c.workspace,
    runUuid: c.runUuid,
    dbRunId: c.dbRunId,
    workflowName: c.workflowName,
    workflowKind: c.workflowKind,
    target: c.target,
    output: c.output,
    stateFile: c.stateFile,
    settings: scope.exec.settings.settings,
    ...(c.scope ? { scope: c.scope } : {}),
  };
}

/** A pool failure as the engine reports script failures: skip() → ModuleSkip, else StepFailure. */
function scriptFailure(err: unknown, rendered: string): Error {
  if (err instanceof ScriptCallError && err.kind === 'skip') return new ModuleSkip(err.message);
  if (err instanceof SkipSignal) return new ModuleSkip(err.message);
  return new StepFailure(messageOf(err), '', [rendered]);
}

/**
 * Like runScript, but in a script evaluator process when one is available (see scripts/pool.ts),
 * so long synchronous functions never block the engine's event loop; inline otherwise. Lines the
 * script prints are shown as they are printed. `quick` scripts (short limits) use their own pool
 * so they never wait behind hour-long ones.
 */
export async function runScriptAsync(script: string, scope: Scope, opts: { timeoutMs?: number; quick?: boolean } = {}): Promise<{ value: unknown; rendered: string }> {
  // A script may act (files, the database): a step end the run still holds is written first.
  await scope.exec?.recorder?.settle?.();
  const pool = opts.quick ? quickScriptPool() : scriptPool();
  if (!pool) return runScript(script, scope);
  const rendered = renderJs(script, scope.vars, scope.tainted);
  try {
    const value = await pool.run({
      script: rendered,
      vars: scope.vars,
      ctx: workerContext(scope),
      timeoutMs: opts.timeoutMs ?? WORKER_SCRIPT_TIMEOUT_MS,
      onLog: (line) => scope.exec.printer.functionLog(line),
      signal: scope.exec.signal,
    });
    return { value, rendered };
  } catch (err) {
    throw scriptFailure(err, rendered);
  }
}

/**
 * Evaluates a condition that is already in its final form (JS truthiness) in an evaluator process
 * when one is available, inline otherwise. skip() → ModuleSkip; other errors → StepFailure.
 */
export async function conditionAsync(expr: string, vars: Record<string, unknown>, scope: Scope): Promise<boolean> {
  await scope.exec?.recorder?.settle?.();
  const pool = quickScriptPool();
  try {
    if (!pool) return evaluateCondition(expr, vars, { ctx: fnContext(scope), lazyBind: true, timeoutMs: DEFAULT_SCRIPT_TIMEOUT_MS });
    const truthy = await pool.run({
      script: expr,
      vars,
      ctx: workerContext(scope),
      timeoutMs: DEFAULT_SCRIPT_TIMEOUT_MS,
      mode: 'condition',
      onLog: (line) => scope.exec.printer.functionLog(line),
      signal: scope.exec.signal,
    });
    return truthy === true;
  } catch (err) {
    throw scriptFailure(err, expr);
  }
}

/** Renders (untrusted values escaped) and evaluates a condition off the event loop (see conditionAsync). */
export async function runConditionAsync(expr: string, scope: Scope, render = true): Promise<boolean> {
  const rendered = render ? renderJs(expr, scope.vars, scope.tainted) : expr;
  return conditionAsync(rendered, scope.vars, scope);
}

/**
 * Evaluates a script that belongs to no run (event-trigger filters and inputs) in an evaluator
 * process when one exists, inline otherwise: the value, or the truthiness in 'condition' mode.
 * Errors (including time-outs) propagate.
 */
export async function evaluateDetached(script: string, vars: Record<string, unknown>, opts: { timeoutMs: number; mode: 'value' | 'condition' }): Promise<unknown> {
  const pool = quickScriptPool();
  if (!pool) {
    const inline = { timeoutMs: opts.timeoutMs, ctx: { log: () => undefined } };
    return opts.mode === 'condition' ? evaluateCondition(script, vars, inline) : evaluate(script, vars, inline).value;
  }
  return pool.run({ script, vars, ctx: {}, timeoutMs: opts.timeoutMs, mode: opts.mode });
}

/** String form of a script result as step output. */
export function resultText(value: unknown): string {
  return valueToString(value);
}
