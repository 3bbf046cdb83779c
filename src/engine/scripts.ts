import { evaluate, evaluateCondition, SkipSignal, type FnContext } from './js-runtime.js';
import { valueToString } from '../workflow/template.js';
import { renderJs } from './safe-render.js';
import { ModuleSkip, StepFailure, type Scope } from './types.js';
import { messageOf } from '../errors.js';

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

/** String form of a script result as step output. */
export function resultText(value: unknown): string {
  return valueToString(value);
}
