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
