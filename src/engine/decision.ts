import type { Decision, Step } from '../workflow/types.js';
import { UnevaluableCondition, conditionVars, preprocessCondition, routeDecision, staticConditionProblem, type ConditionEvaluator } from '../workflow/decision-route.js';
import { functionNames } from './functions/registry.js';
import { evaluateCondition } from './js-runtime.js';
import { conditionAsync } from './scripts.js';
import type { Scope } from './types.js';

export { preprocessCondition } from '../workflow/decision-route.js';

/** Result of evaluating a decision: inline synthetic steps to run (in order) and the goto target. */
export interface DecisionResult {
  inline: Step[];
  goto?: string;
}

/**
 * Evaluates a decision after a successful step (sequential mode only). The routing rules live in
 * src/workflow/decision-route.ts (shared with the dry-run plan); conditions run in a script
 * evaluator process with the run's function context, errors counting as false. They are evaluated
 * first, in order, and their outcomes handed to the (synchronous) router in the same order.
 */
export async function evaluateDecision(decision: Decision | undefined, scope: Scope): Promise<DecisionResult> {
  const outcomes: ({ ok: true; truthy: boolean } | { ok: false; error: unknown })[] = [];
  for (const cond of decision?.conditions ?? []) {
    try {
      outcomes.push({ ok: true, truthy: await conditionAsync(preprocessCondition(cond.if, scope.vars), conditionVars(scope.vars), scope) });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  let next = 0;
  const route = routeDecision(decision, scope.vars, () => {
    const o = outcomes[next++];
    if (!o) throw new Error('decision condition was not evaluated');
    if (!o.ok) throw o.error;
    return o.truthy;
  });
  const result: DecisionResult = { inline: route.inline };
  if (route.goto !== undefined) result.goto = route.goto;
  return result;
}

/**
 * The dry-run plan's condition evaluator: the same JS runtime as a run, but only for conditions
 * that read known variables, literals and pure built-ins (staticConditionProblem). Anything else —
 * a library function call, a variable only known at run time — throws UnevaluableCondition, which
 * the plan counts as false and marks. Not used by the executor.
 */
export function dryRunConditionEvaluator(timeoutMs = 1000): ConditionEvaluator {
  let library: Set<string> | undefined;
  return (expr, vars) => {
    library ??= new Set(functionNames());
    const problem = staticConditionProblem(expr, vars, (name) => library!.has(name));
    if (problem) throw new UnevaluableCondition(problem);
    return evaluateCondition(expr, vars, { lazyBind: true, timeoutMs });
  };
}
