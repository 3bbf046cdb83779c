import { randomUUID } from 'node:crypto';
import { builtinVariables } from '../workflow/builtin-vars.js';
import { builtinPathsOf } from '../engine/module-exec.js';
import { dryRunConditionEvaluator } from '../engine/decision.js';
import { resolveParams } from '../workflow/params.js';
import { buildPlan, formatPlan, manualRunAllowed, type Plan } from '../workflow/plan.js';
import { validateRunInputs } from './runs.js';
import type { RunOptions } from './runs.js';
import type { AppContext } from './context.js';

/** Builds the plan of a run without executing anything (used by --dry-run and `workflow show`). */
export function buildRunPlan(app: AppContext, workflowName: string, target: string, params: Record<string, string>, options: RunOptions = {}): Plan {
  validateRunInputs([target], params, { emptyTarget: options.emptyTarget });
  const wf = app.loader.load(workflowName);
  const s = app.settings();
  const builtins = builtinVariables({
    target,
    targetFile: options.targetFile,
    paths: builtinPathsOf(s),
    tactic: options.tactic,
    scanTactic: s.settings.scan_tactic,
    threadsHold: options.threadsHold,
    heuristics: options.heuristics,
    space: options.space,
    workspacesOverride: options.workspacesOverride,
    runUuid: randomUUID(),
    moduleName: wf.name,
  });
  // A module whose manual trigger is disabled is skipped by a CLI run before its params are
  // resolved, so a missing required param must not fail its plan either.
  const vars = wf.kind === 'module' && !manualRunAllowed(wf) ? { ...builtins, ...params } : resolveParams(wf.params, params, builtins);
  // Decisions are followed with the run's rules; conditions are evaluated only when that runs nothing.
  const input = { target, vars, exclude: options.exclude, fuzzyExclude: options.fuzzyExclude, evaluateCondition: dryRunConditionEvaluator() };
  return buildPlan(wf, input, (ref) => app.loader.loadModuleRef(ref, wf));
}

/** The human dry-run text of a plan. */
export function planRun(app: AppContext, workflowName: string, target: string, params: Record<string, string>, options: RunOptions = {}): string {
  return formatPlan(buildRunPlan(app, workflowName, target, params, options));
}

/**
 * The dry-run text of every workflow × target (what `osm run --dry-run` prints): each plan, then,
 * when there is more than one, a summary of what would run where (reference §3.16).
 */
export function planRuns(app: AppContext, workflows: string[], targets: string[], params: Record<string, string>, options: RunOptions = {}): string {
  const plans: Plan[] = [];
  const texts: string[] = [];
  for (const wf of workflows) {
    for (const t of targets) {
      const plan = buildRunPlan(app, wf, t, params, options);
      plans.push(plan);
      texts.push(`${formatPlan(plan)}\n`);
    }
  }
  if (plans.length > 1) texts.push(formatDryRunSummary(plans, workflows.length, targets.length));
  return texts.join('');
}

/** `◆ DRY-RUN summary: …` with one line per planned run. */
export function formatDryRunSummary(plans: Plan[], workflowCount: number, targetCount: number): string {
  const steps = (p: Plan) => p.steps.length + p.modules.reduce((n, m) => n + m.steps.length, 0);
  const total = plans.reduce((n, p) => n + steps(p), 0);
  const w = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  const width = Math.max(...plans.map((p) => p.workflow.name.length));
  const tw = Math.max(...plans.map((p) => p.target.length));
  const lines = [
    `◆ DRY-RUN summary: ${w(plans.length, 'run')} planned (${w(workflowCount, 'workflow')} × ${w(targetCount, 'target')}), ${w(total, 'step')}; nothing was executed`,
    ...plans.map((p) => `  ${p.workflow.name.padEnd(width)}  ${p.target.padEnd(tw)}  → ${p.workspace} (${p.workflow.kind === 'flow' ? `${w(p.modules.length, 'module')}, ` : ''}${w(steps(p), 'step')}${p.warnings.length ? `, ${w(p.warnings.length, 'warning')}` : ''})`),
  ];
  return `${lines.join('\n')}\n`;
}
