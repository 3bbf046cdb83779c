import type { Step } from '../workflow/types.js';
import { messageOf } from '../errors.js';
import { dispatch } from './dispatch.js';
import { runActions } from './actions.js';
import { evaluateDecision } from './decision.js';
import { runConditionAsync } from './scripts.js';
import { ModuleSkip, RunAborted, StepFailure, type DispatchResult, type Scope, type StepContext } from './types.js';

/**
 * Runs a nested step — a foreach inner step (once per item) or a parallel-steps child — with its
 * own `pre_condition`, `on_success` / `on_error` actions and `decision` inline work, evaluated with
 * the nested context (so loop variables render there too). The reference dispatches nested steps
 * bare and silently ignores those fields; osm runs them (a superset):
 * - `pre_condition` false → the item/child is skipped (empty output); an error fails it.
 * - `on_error` with `continue` (and no `abort`) → the failure is reported as a warning and the
 *   item/child counts as done; otherwise the failure stands.
 * - `decision`: the matched case's / truthy conditions' inline commands and functions run after
 *   success; a `goto` has no meaning inside a nested step and is ignored (lint warns about it).
 */
export async function dispatchNested(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  if (step.pre_condition && step.pre_condition.trim() !== '') {
    let ok: boolean;
    try {
      ok = await runConditionAsync(step.pre_condition, scope);
    } catch (err) {
      if (err instanceof ModuleSkip) throw err;
      throw new StepFailure(`pre-condition evaluation failed: ${messageOf(err)}`);
    }
    if (!ok) return { output: '', lines: 0, commands: [] };
  }
  let result: DispatchResult;
  try {
    result = await dispatch(step, scope, ctx);
  } catch (err) {
    if (err instanceof ModuleSkip || err instanceof RunAborted || scope.exec.signal.aborted || !step.on_error?.length) throw err;
    const act = await runActions(step.on_error, scope, ctx.logFile);
    if (!act.continueOnError || act.abort) throw err;
    const f = err instanceof StepFailure ? err : new StepFailure(messageOf(err));
    scope.exec.printer.warn(`${step.name} failed (on_error: continue): ${f.message}`);
    return { output: f.output, lines: f.output ? f.output.split('\n').length : 0, commands: f.commands };
  }
  if (step.on_success?.length) await runActions(step.on_success, scope, ctx.logFile);
  if (step.decision) {
    const d = await evaluateDecision(step.decision, scope);
    const outputs = result.output ? [result.output] : [];
    for (const inline of d.inline) {
      try {
        const r = await dispatch(inline, scope, ctx);
        if (r.output) outputs.push(r.output);
        result = { ...result, lines: result.lines + r.lines, commands: [...result.commands, ...r.commands] };
      } catch (err) {
        if (err instanceof ModuleSkip || err instanceof RunAborted) throw err;
        scope.exec.printer.warn(`${step.name}: decision inline work failed: ${messageOf(err)}`);
      }
    }
    result = { ...result, output: outputs.join('\n') };
  }
  return result;
}
