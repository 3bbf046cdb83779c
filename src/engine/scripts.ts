import { evaluate, evaluateCondition, SkipSignal, type FnContext } from './js-runtime.js';
import { valueToString } from '../workflow/template.js';
import { renderJs } from './safe-render.js';
import { ModuleSkip, StepFailure, type Scope } from './types.js';
import { messageOf } from '../errors.js';
import { scriptPool, ScriptCallError } from './scripts/pool.js';

/** The function context (workspace, run ids, paths, output sink) of a scope. */
export function fnContext(scope: Scope): FnContext {
  const v = scope.vars;
  const exec = scope.exec;
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
  };
}

/** Renders (untrusted values escaped) and evaluates one script; skip() becomes ModuleSkip. */
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

/** Renders and evaluates a condition (JS truthiness). Errors propagate as StepFailure. */
export function runCondition(expr: string, scope: Scope, render = true): boolean {
  const rendered = render ? renderJs(expr, scope.vars, scope.tainted) : expr;
  try {
    return evaluateCondition(rendered, scope.vars, { ctx: fnContext(scope), lazyBind: true });
  } catch (err) {
    if (err instanceof SkipSignal) throw new ModuleSkip(err.message);
    throw new StepFailure(messageOf(err), '', [rendered]);
  }
}

/** Default limit of a script run in a worker when its step has no timeout (imports can be long). */
export const WORKER_SCRIPT_TIMEOUT_MS = 6 * 3600_000;

/**
 * Like runScript, but in a script worker thread when one is available (see scripts/pool.ts), so
 * long synchronous functions never block the engine's event loop; inline otherwise. Lines the
 * script prints are shown as they are printed.
 */
export async function runScriptAsync(script: string, scope: Scope, opts: { timeoutMs?: number } = {}): Promise<{ value: unknown; rendered: string }> {
  const pool = scriptPool();
  if (!pool) return runScript(script, scope);
  const rendered = renderJs(script, scope.vars, scope.tainted);
  const c = fnContext(scope);
  try {
    const value = await pool.run({
      script: rendered,
      vars: scope.vars,
      ctx: {
        workspace: c.workspace,
        runUuid: c.runUuid,
        dbRunId: c.dbRunId,
        workflowName: c.workflowName,
        workflowKind: c.workflowKind,
        target: c.target,
        output: c.output,
        stateFile: c.stateFile,
        dbPath: scope.exec.deps.store.path,
        settings: scope.exec.settings.settings,
      },
      timeoutMs: opts.timeoutMs ?? WORKER_SCRIPT_TIMEOUT_MS,
      onLog: c.log,
      signal: scope.exec.signal,
    });
    return { value, rendered };
  } catch (err) {
    if (err instanceof ScriptCallError && err.kind === 'skip') throw new ModuleSkip(err.message);
    throw new StepFailure(messageOf(err), '', [rendered]);
  }
}

/** String form of a script result as step output. */
export function resultText(value: unknown): string {
  return valueToString(value);
}
