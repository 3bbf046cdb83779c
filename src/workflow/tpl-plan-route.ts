/**
 * The route of a sequential module through its decisions, as a dry run sees it (reference §3.16):
 * every step is assumed to succeed, its exports become the value "true", statically known variables
 * keep their values, and each decision is evaluated on those values with the executor's rules
 * (decision-route.ts) — so the route may differ from a real run. Nothing is executed: conditions
 * that cannot be evaluated without running something count as false and are marked.
 */
import type { Step } from './types.js';
import type { PlanStep } from './plan.js';
import { UnevaluableCondition, routeDecision, type ConditionEvaluator, type ConditionOutcome } from './decision-route.js';
import { planStep, stepExportNames, type StepPlanContext } from './tpl-plan-steps.js';
import { maskSecrets } from './tpl-redact.js';

/** A step is shown at most this many times on a route; one more visit stops the route (goto loop). */
export const MAX_ROUTE_VISITS = 3;

/** The value a dry run gives every export (reference §3.16). */
export const DRY_RUN_EXPORT_VALUE = 'true';

export interface PlanCondition {
  if: string;
  result: boolean;
  /** Why the condition was not evaluated in the plan (it counts as false). */
  unevaluated?: string;
  /** Evaluation error (counts as false, as in a run). */
  error?: string;
  goto?: string;
  /** Inline work a truthy condition runs (`decision-condition-bash` / `-function`). */
  inline: PlanStep[];
}

export interface PlanDecision {
  switch?: {
    /** The rendered switch value. */
    value: string;
    matched: 'case' | 'default' | 'none';
    goto?: string;
    /** Inline work of the matched case (`decision-inline-bash` / `-function`). */
    inline: PlanStep[];
  };
  conditions: PlanCondition[];
  /** The goto that wins (the last truthy condition's, else the case's). */
  goto?: string;
  /** 'unknown': no step has that name — the run continues with the next step. */
  gotoTarget?: 'step' | 'end' | 'unknown';
}

/** `index`: the step's position in the list the route belongs to (plan.steps, or a flow module's steps after its pre-scan hooks). */
export type PlanRouteEntry =
  | { kind: 'step'; index: number; name: string; visit: number; decision?: PlanDecision }
  | { kind: 'not-reached'; index: number; name: string; reason: string }
  | { kind: 'stopped'; reason: string };

export interface PlanRoute {
  /** Visited steps in run order, steps the route skips (once each, where they are skipped), a loop-guard stop. */
  entries: PlanRouteEntry[];
  /** Distinct steps reached. */
  reached: number;
  /** Set when the loop guard stopped the route. */
  stopped?: string;
}

function ordinal(n: number): string {
  return n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

function conditionNote(outcome: ConditionOutcome): Pick<PlanCondition, 'unevaluated' | 'error'> {
  if (outcome.error === undefined) return {};
  if (outcome.error instanceof UnevaluableCondition) return { unevaluated: outcome.error.reason };
  return { error: outcome.error instanceof Error ? outcome.error.message : String(outcome.error) };
}

function planDecision(step: Step, index: number, vars: Record<string, unknown>, ctx: StepPlanContext, where: string, evaluate: ConditionEvaluator): PlanDecision {
  const route = routeDecision(step.decision, vars, evaluate);
  const inline = (steps: Step[]) => steps.map((s) => planStep(s, index, ctx, `${where}.${step.name}.decision`));
  const mask = (text: string) => maskSecrets(text, ctx.secrets);
  const out: PlanDecision = { conditions: [] };
  if (route.switch) {
    const sw = route.switch;
    out.switch = { value: mask(sw.key), matched: sw.matched, inline: inline(sw.inline) };
    if (sw.goto !== undefined) out.switch.goto = sw.goto;
  }
  for (const c of route.conditions) {
    const pc: PlanCondition = { if: mask(c.if), result: c.truthy, ...conditionNote(c), inline: inline(c.inline) };
    if (c.goto !== undefined) pc.goto = c.goto;
    out.conditions.push(pc);
  }
  if (route.goto !== undefined) out.goto = route.goto;
  return out;
}

const noEvaluator: ConditionEvaluator = () => {
  throw new UnevaluableCondition('no condition evaluator in this plan');
};

/**
 * Walks `steps` as the executor's sequential mode does and returns the route, or undefined when
 * there is nothing to route (no decisions, or a DAG module: decisions are ignored there).
 * `planned` are the steps' plans (declaration order); unreached ones get `notReached`.
 * `start` are the variables before the first step (exports of earlier modules already "true").
 */
export function planRoute(
  steps: Step[],
  planned: PlanStep[],
  ctx: StepPlanContext,
  where: string,
  start: Record<string, unknown>,
  evaluate: ConditionEvaluator = noEvaluator,
): PlanRoute | undefined {
  if (!steps.some((s) => s.decision)) return undefined;
  if (steps.some((s) => s.depends_on?.length)) return undefined;
  const vars: Record<string, unknown> = { ...start };
  const visits = new Map<number, number>();
  const raw: PlanRouteEntry[] = [];
  const skip = (from: number, to: number, reason: string) => {
    for (let k = from; k < to; k++) raw.push({ kind: 'not-reached', index: k, name: steps[k]!.name, reason });
  };
  let stopped: string | undefined;
  let i = 0;
  while (i < steps.length) {
    const step = steps[i]!;
    const visit = (visits.get(i) ?? 0) + 1;
    if (visit > MAX_ROUTE_VISITS) {
      stopped = `route stopped: step '${step.name}' would run a ${ordinal(visit)} time (goto loop; a run follows it at run time)`;
      raw.push({ kind: 'stopped', reason: stopped });
      break;
    }
    visits.set(i, visit);
    for (const name of stepExportNames(step)) vars[name] = DRY_RUN_EXPORT_VALUE;
    const entry: PlanRouteEntry = { kind: 'step', index: i, name: step.name, visit };
    raw.push(entry);
    if (!step.decision) {
      i++;
      continue;
    }
    // Later visits render the same inline work again: their warnings are already recorded.
    const stepCtx = visit === 1 ? ctx : { ...ctx, warnings: [] };
    const decision = planDecision(step, i, vars, stepCtx, where, evaluate);
    entry.decision = decision;
    if (decision.goto === undefined) {
      i++;
      continue;
    }
    const because = `decision goto ${decision.goto} at step '${step.name}'`;
    if (decision.goto === '_end') {
      decision.gotoTarget = 'end';
      skip(i + 1, steps.length, because);
      break;
    }
    const target = steps.findIndex((s) => s.name === decision.goto);
    if (target < 0) {
      decision.gotoTarget = 'unknown';
      i++;
      continue;
    }
    decision.gotoTarget = 'step';
    skip(i + 1, target, because);
    i = target;
  }

  // A step skipped once but reached later is on the route; a skipped step is listed once.
  const visited = new Set(visits.keys());
  const listed = new Set<number>();
  const entries: PlanRouteEntry[] = [];
  for (const e of raw) {
    if (e.kind === 'not-reached') {
      if (visited.has(e.index) || listed.has(e.index)) continue;
      listed.add(e.index);
    }
    entries.push(e);
  }
  steps.forEach((s, k) => {
    if (visited.has(k) || listed.has(k)) return;
    listed.add(k);
    entries.push({ kind: 'not-reached', index: k, name: s.name, reason: 'the route stopped at a goto loop first' });
  });
  for (const e of entries) if (e.kind === 'not-reached' && planned[e.index]) planned[e.index]!.notReached = e.reason;
  const route: PlanRoute = { entries, reached: visited.size };
  if (stopped) route.stopped = stopped;
  return route;
}
