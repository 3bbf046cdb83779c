import type { Decision, DecisionWork, Step } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { evaluateCondition } from './js-runtime.js';
import { fnContext } from './scripts.js';
import type { Scope } from './types.js';

/** Result of evaluating a decision: inline synthetic steps to run (in order) and the goto target. */
export interface DecisionResult {
  inline: Step[];
  goto?: string;
}

function inlineSteps(work: DecisionWork | undefined, prefix: 'decision-inline' | 'decision-condition'): Step[] {
  if (!work) return [];
  const steps: Step[] = [];
  const cmds = work.commands?.length ? work.commands : work.command ? [work.command] : [];
  for (const c of cmds) steps.push({ name: `${prefix}-bash`, type: 'bash', command: c });
  const fns = work.functions?.length ? work.functions : work.function ? [work.function] : [];
  if (fns.length) steps.push({ name: `${prefix}-function`, type: 'function', functions: fns });
  return steps;
}

/**
 * Rewrites a condition for evaluation (reference §3.6): `{{var}}` outside quotes becomes the bare
 * identifier (bound as a JS variable), inside quotes it is rendered.
 */
export function preprocessCondition(expr: string, vars: Record<string, unknown>): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    if (!quote && expr.startsWith('{{', i)) {
      const end = expr.indexOf('}}', i + 2);
      if (end !== -1) {
        out += expr.slice(i + 2, end).trim();
        i = end + 1;
        continue;
      }
    }
    if (quote && expr.startsWith('{{', i)) {
      const end = expr.indexOf('}}', i + 2);
      if (end !== -1) {
        out += render(expr.slice(i, end + 2), vars).replace(/\\/g, '\\\\').split(quote).join(`\\${quote}`);
        i = end + 1;
        continue;
      }
    }
    if (quote) {
      if (c === '\\') {
        out += c + (expr[i + 1] ?? '');
        i++;
        continue;
      }
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'" || c === '`') quote = c;
    out += c;
  }
  return out;
}

/** Evaluates a decision after a successful step (sequential mode only). */
export function evaluateDecision(decision: Decision | undefined, scope: Scope): DecisionResult {
  const result: DecisionResult = { inline: [] };
  if (!decision) return result;
  if (decision.switch !== undefined) {
    let key = '';
    try {
      key = render(String(decision.switch), scope.vars).trim();
    } catch {
      key = '';
    }
    const cases = decision.cases ?? {};
    const matched = Object.prototype.hasOwnProperty.call(cases, key) ? cases[key] : decision.default;
    if (matched) {
      result.inline.push(...inlineSteps(matched, 'decision-inline'));
      if (matched.goto) result.goto = matched.goto;
    }
  }
  for (const cond of decision.conditions ?? []) {
    let truthy = false;
    try {
      const expr = preprocessCondition(cond.if, scope.vars);
      const vars: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(scope.vars)) {
        const s = typeof v === 'string' ? v.toLowerCase() : undefined;
        vars[k] = s === 'true' ? true : s === 'false' ? false : v;
      }
      truthy = evaluateCondition(expr, vars, { ctx: fnContext(scope), lazyBind: true });
    } catch {
      truthy = false;
    }
    if (!truthy) continue;
    result.inline.push(...inlineSteps(cond, 'decision-condition'));
    if (cond.goto) result.goto = cond.goto;
  }
  return result;
}

