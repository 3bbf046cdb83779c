/**
 * Decision routing (reference §1.14, §3.6), shared by the executor (src/engine/decision.ts) and the
 * dry-run plan: which `switch` case is selected, how a condition is pre-processed, which inline
 * synthetic steps run and which `goto` wins. Pure: evaluating a condition is the caller's job
 * (the engine runs it in the JS runtime with the run's context; the plan only when it is safe).
 */
import type { Decision, DecisionWork, Step } from './types.js';
import { render } from './template.js';

export type InlinePrefix = 'decision-inline' | 'decision-condition';

/**
 * Inline work of a matched case or a truthy condition as synthetic steps: one bash step per command
 * (`<prefix>-bash`), then one function step with every function (`<prefix>-function`).
 */
export function decisionInlineSteps(work: DecisionWork | undefined, prefix: InlinePrefix): Step[] {
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

/** The variables a condition sees: string values `"true"`/`"false"` (any case) become booleans. */
export function conditionVars(vars: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(vars)) {
    const s = typeof v === 'string' ? v.toLowerCase() : undefined;
    out[k] = s === 'true' ? true : s === 'false' ? false : v;
  }
  return out;
}

/** Evaluates a pre-processed condition with JS truthiness; a throw counts as false. */
export type ConditionEvaluator = (expr: string, vars: Record<string, unknown>) => boolean;

/** Thrown by an evaluator that declines to evaluate a condition (the dry-run plan's evaluator). */
export class UnevaluableCondition extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnevaluableCondition';
  }
}

export interface SwitchOutcome {
  /** The rendered, trimmed switch value ('' when rendering failed). */
  key: string;
  matched: 'case' | 'default' | 'none';
  inline: Step[];
  goto?: string;
}

export interface ConditionOutcome {
  if: string;
  truthy: boolean;
  /** Why the condition counted as false: what the evaluator (or pre-processing) threw. */
  error?: unknown;
  /** Inline work (truthy conditions only). */
  inline: Step[];
  /** The entry's goto (whether or not it was truthy). */
  goto?: string;
}

export interface DecisionRoute {
  /** Inline synthetic steps in run order: the matched case's, then each truthy condition's. */
  inline: Step[];
  /** The goto that wins: the last truthy condition's, else the matched case's. */
  goto?: string;
  switch?: SwitchOutcome;
  conditions: ConditionOutcome[];
}

/**
 * Evaluates a decision against the variables after a successful step: the switch (rendered,
 * trimmed, exact key, else default), then every condition in order (all truthy entries run their
 * inline work; the last truthy goto replaces the switch's goto).
 */
export function routeDecision(decision: Decision | undefined, vars: Record<string, unknown>, evaluate: ConditionEvaluator): DecisionRoute {
  const result: DecisionRoute = { inline: [], conditions: [] };
  if (!decision) return result;
  if (decision.switch !== undefined) {
    let key = '';
    try {
      key = render(String(decision.switch), vars).trim();
    } catch {
      key = '';
    }
    const cases = decision.cases ?? {};
    const hit = Object.prototype.hasOwnProperty.call(cases, key);
    const matched = hit ? cases[key] : decision.default;
    const outcome: SwitchOutcome = { key, matched: matched ? (hit ? 'case' : 'default') : 'none', inline: [] };
    if (matched) {
      outcome.inline = decisionInlineSteps(matched, 'decision-inline');
      result.inline.push(...outcome.inline);
      if (matched.goto) {
        outcome.goto = matched.goto;
        result.goto = matched.goto;
      }
    }
    result.switch = outcome;
  }
  for (const cond of decision.conditions ?? []) {
    const outcome: ConditionOutcome = { if: cond.if, truthy: false, inline: [] };
    if (cond.goto) outcome.goto = cond.goto;
    result.conditions.push(outcome);
    try {
      outcome.truthy = evaluate(preprocessCondition(cond.if, vars), conditionVars(vars));
    } catch (err) {
      outcome.truthy = false;
      outcome.error = err;
    }
    if (!outcome.truthy) continue;
    outcome.inline = decisionInlineSteps(cond, 'decision-condition');
    result.inline.push(...outcome.inline);
    if (cond.goto) result.goto = cond.goto;
  }
  return result;
}

// Identifiers a statically evaluated condition may use besides known variables: literals and
// side-effect-free built-ins of the sandbox.
const SAFE_GLOBALS = new Set(['true', 'false', 'null', 'undefined', 'NaN', 'Infinity', 'typeof', 'void', 'in', 'Number', 'String', 'Boolean', 'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'Math', 'JSON']);
// Never allowed, even when a variable carries the name (the sandbox would not bind it).
const RESERVED = new Set(['this', 'globalThis', 'eval', 'Function', 'Object', 'Reflect', 'Proxy', 'Symbol', 'arguments', 'import', 'new', 'function', 'class', 'while', 'for', 'do', 'async', 'await', 'yield', 'with', 'var', 'let', 'const', 'delete']);
const BLOCKED_PROPERTIES = new Set(['constructor', '__proto__', 'prototype', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__']);

/**
 * Why a pre-processed condition cannot be evaluated without running anything, or undefined when it
 * can: it may only read known variables, literals and a few pure built-ins — no library function
 * (they read files, run commands, query the database), no template literal, no escapes outside
 * strings. `hostGlobal` tells whether a name is a global of the evaluating realm (never bound).
 */
export function staticConditionProblem(
  expr: string,
  vars: Record<string, unknown>,
  isLibraryFunction: (name: string) => boolean,
  hostGlobal: (name: string) => boolean = (name) => name in globalThis,
): string | undefined {
  let i = 0;
  let last = '';
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' ? 2 : 1;
      i = j + 1;
      last = c;
      continue;
    }
    if (c === '`') return 'uses a template literal';
    if (c === '\\') return 'uses an escape outside a string';
    if (c.charCodeAt(0) > 0x7e) return 'uses a non-ASCII character outside a string';
    if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < expr.length && /[\w.]/.test(expr[j]!)) j++;
      i = j;
      last = '0';
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < expr.length && /[\w$]/.test(expr[j]!)) j++;
      const name = expr.slice(i, j);
      const member = last === '.' && !expr.slice(0, i).trimEnd().endsWith('...');
      i = j;
      last = 'a';
      if (member) {
        if (BLOCKED_PROPERTIES.has(name)) return `reads the property '${name}'`;
        continue;
      }
      if (isLibraryFunction(name)) return `calls ${name}()`;
      if (SAFE_GLOBALS.has(name)) continue;
      if (RESERVED.has(name) || hostGlobal(name)) return `uses '${name}'`;
      if (!Object.prototype.hasOwnProperty.call(vars, name)) return `reads '${name}', which is not known before the run`;
      continue;
    }
    if (!/\s/.test(c)) last = c;
    i++;
  }
  return undefined;
}
