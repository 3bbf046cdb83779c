import type { Step } from '../../workflow/types.js';
import { runScriptAsync, resultText } from '../scripts.js';
import { assertNoLoopPlaceholder } from './bash.js';
import { StepFailure, ModuleSkip, type DispatchResult, type Scope, type StepContext } from '../types.js';

/** function step: function | functions (sequential) | parallel_functions. Output = first result. */
export async function executeFunction(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const scripts = step.parallel_functions?.length
    ? step.parallel_functions
    : step.functions?.length
      ? step.functions
      : step.function !== undefined
        ? [step.function]
        : [];
  if (scripts.length === 0) throw new StepFailure('function step must have function, functions, or parallel_functions');
  // Outside any foreach a [[name]] would reach the functions literally (exec_cmd, http_get …): fail instead.
  for (const script of scripts) assertNoLoopPlaceholder(script, 'function', 'the function was not called');
  const results: unknown[] = [];
  const rendered: string[] = [];
  for (const script of scripts) {
    try {
      const r = await runScriptAsync(script, scope, { timeoutMs: ctx.timeoutMs });
      results.push(r.value);
      rendered.push(r.rendered);
    } catch (err) {
      if (err instanceof ModuleSkip) throw err;
      const f = err as StepFailure;
      throw new StepFailure(f.message, results.map(resultText).join('\n'), [...rendered, ...f.commands]);
    }
    // A cancelled run stops between scripts.
    if (scope.exec.signal.aborted) break;
  }
  const output = results.length ? resultText(results[0]) : '';
  return { output, lines: output ? output.split('\n').length : 0, commands: rendered };
}
