import type { Step } from '../workflow/types.js';
import { looksLikeFunctionCall } from './js-runtime.js';
import { referencedRoots } from './safe-render.js';
import { render } from '../workflow/template.js';
import { runScriptAsync } from './scripts.js';
import { StepFailure, type Scope } from './types.js';
import { messageOf } from '../errors.js';

/**
 * Evaluates a step's `exports` (reference §3.4): each value is rendered; if the text looks like a
 * function call it is evaluated as JS and the JS value stored, else the rendered string. Values
 * computed by scripts, or rendered from tainted variables, are tainted themselves.
 */
export async function evaluateExports(step: Step, scope: Scope): Promise<{ values: Record<string, unknown>; tainted: string[] }> {
  const values: Record<string, unknown> = {};
  const tainted: string[] = [];
  for (const [name, raw] of Object.entries(step.exports ?? {})) {
    const text = String(raw ?? '');
    let rendered: string;
    try {
      rendered = render(text, scope.vars);
    } catch (err) {
      throw new StepFailure(`export evaluation failed for ${name}: ${messageOf(err)}`);
    }
    // Decide "is this a call?" on the operator's text only: a tainted value that merely looks like
    // `f(x)` must never be evaluated.
    const probe = scope.tainted.size ? render(text, maskTainted(scope)) : rendered;
    if (looksLikeFunctionCall(probe)) {
      try {
        values[name] = (await runScriptAsync(text, scope)).value;
      } catch (err) {
        throw new StepFailure(`export evaluation failed for ${name}: ${messageOf(err)}`);
      }
      tainted.push(name);
    } else {
      values[name] = rendered;
      if (referencedRoots(text).some((r) => scope.tainted.has(r))) tainted.push(name);
    }
  }
  return { values, tainted };
}

function maskTainted(scope: Scope): Record<string, unknown> {
  const vars = { ...scope.vars };
  for (const t of scope.tainted) if (t in vars) vars[t] = '';
  return vars;
}
