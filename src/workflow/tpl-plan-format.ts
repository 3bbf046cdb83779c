/**
 * Human text of a plan for `--dry-run` (reference §3.16: the output must contain `DRY-RUN`, the
 * workflow name and every step name). Plain text: the CLI adds colour if it wants to. A module
 * with a decision route lists its steps in route order, unreached ones as `◌ … (not reached: …)`.
 */
import { durationText } from '../util/duration.js';
import type { Plan, PlanDecision, PlanModule, PlanRoute, PlanStep } from './plan.js';
import { valueToString } from './template.js';

const SYMBOLS: Record<string, string> = {
  bash: '$',
  'remote-bash': '$',
  function: 'ƒ',
  foreach: '∀',
  'parallel-steps': '‖',
  http: '⇄',
  llm: '⋈',
  agent: '⚙',
  'agent-acp': '⚙',
  'agent-sdk': '⚙',
};

// The summary the reference prints in its dry-run banner.
const SHOWN_VARIABLES = ['BaseFolder', 'Binaries', 'Data', 'Workspaces', 'Output', 'threads', 'baseThreads', 'Today'];

function stepLines(step: PlanStep, indent: string, label: string): string[] {
  const marker = step.renderedAt === 'runtime' ? ' [rendered at run time]' : '';
  const lines = [`${indent}▶ ${label}: ${step.name} (${step.type})${marker}`];
  const inner = `${indent}    `;
  if (step.dependsOn?.length) lines.push(`${inner}depends on: ${step.dependsOn.join(', ')}`);
  if (step.preCondition !== undefined) lines.push(`${inner}pre_condition: ${step.preCondition} (skipped in dry-run)`);
  if (step.timeoutMs !== undefined) lines.push(`${inner}timeout: ${durationText(step.timeoutMs)}`);
  const symbol = SYMBOLS[step.type] ?? '•';
  for (const command of step.commands) {
    const [first, ...rest] = command.split('\n');
    lines.push(`${inner}${symbol} ${first}`);
    for (const line of rest) lines.push(`${inner}  ${line}`);
  }
  if (step.error) lines.push(`${inner}✘ ${step.error}`);
  (step.children ?? []).forEach((child, i) => lines.push(...stepLines(child, inner, step.type === 'foreach' ? 'Inner step' : `Child ${i + 1}`)));
  return lines;
}

function decisionLines(d: PlanDecision, inner: string): string[] {
  const lines: string[] = [];
  const inline = (steps: PlanStep[]) => steps.forEach((s) => lines.push(...stepLines(s, `${inner}  `, 'Inline')));
  if (d.switch) {
    const sw = d.switch;
    const what = sw.matched === 'case' ? `case "${sw.value}"` : sw.matched === 'default' ? 'default' : 'no matching case, no default';
    lines.push(`${inner}⤷ switch "${sw.value}" → ${what}${sw.goto ? ` → goto ${sw.goto}` : ''}`);
    inline(sw.inline);
  }
  for (const c of d.conditions) {
    const note = c.unevaluated
      ? ` (not evaluated in a dry run: ${c.unevaluated}; counts as false)`
      : c.error
        ? ` (evaluation error, counts as false: ${c.error})`
        : '';
    lines.push(`${inner}⤷ if ${c.if} → ${c.result}${note}${c.result && c.goto ? ` → goto ${c.goto}` : ''}`);
    inline(c.inline);
  }
  if (d.goto !== undefined) {
    const tail = d.gotoTarget === 'end' ? ' (the module ends here)' : d.gotoTarget === 'unknown' ? ': no step has that name, the run continues with the next step' : '';
    lines.push(`${inner}↪ goto ${d.goto}${tail}`);
  }
  return lines;
}

/** Steps in the order a dry run's route visits them; skipped steps are listed where they are jumped over. */
function routeLines(steps: PlanStep[], route: PlanRoute, indent: string): string[] {
  const lines: string[] = [];
  const body = route.entries.flatMap((e) => (e.kind === 'stopped' ? [] : [e.index]));
  const first = Math.min(...body);
  const last = Math.max(...body);
  const label = (i: number) => `Step ${i + 1}`;
  // Pre- and post-scan hooks of a flow module are listed around its steps, as without a route.
  steps.forEach((s, i) => {
    if (i < first) lines.push(...stepLines(s, indent, label(i)));
  });
  for (const e of route.entries) {
    if (e.kind === 'stopped') {
      lines.push(`${indent}⟲ ${e.reason}`);
      continue;
    }
    const step = steps[e.index];
    if (e.kind === 'not-reached') {
      lines.push(`${indent}◌ ${label(e.index)}: ${e.name} (not reached: ${e.reason})`);
      continue;
    }
    if (!step) continue;
    if (e.visit === 1) lines.push(...stepLines(step, indent, label(e.index)));
    else lines.push(`${indent}▶ ${label(e.index)}: ${step.name} (${step.type}) again (visit ${e.visit})`);
    if (e.decision) lines.push(...decisionLines(e.decision, `${indent}    `));
  }
  steps.forEach((s, i) => {
    if (i > last) lines.push(...stepLines(s, indent, label(i)));
  });
  return lines;
}

const routeSummary = (route: PlanRoute, total: number) =>
  `${route.reached} of ${total} steps reached (decisions followed; exports count as "true")${route.stopped ? '; stopped at a goto loop' : ''}`;

function moduleLines(mod: PlanModule, n: number): string[] {
  const lines = [`◆ Module ${n}: ${mod.name}${mod.path ? ` (${mod.path})` : ''}`];
  if (mod.dependsOn.length) lines.push(`    depends on: ${mod.dependsOn.join(', ')}`);
  if (mod.condition) lines.push(`    condition: ${mod.condition}`);
  if (mod.skipReason) lines.push(`    ◌ skipped (${mod.skipReason})`);
  if (mod.error) lines.push(`    ✘ ${mod.error}`);
  if (mod.route) {
    const total = new Set(mod.route.entries.flatMap((e) => (e.kind === 'stopped' ? [] : [e.index]))).size;
    lines.push(`    route: ${routeSummary(mod.route, total)}`, ...routeLines(mod.steps, mod.route, '    '));
  } else mod.steps.forEach((s, i) => lines.push(...stepLines(s, '    ', `Step ${i + 1}`)));
  return lines;
}

/** Formats a plan as the `--dry-run` text. */
export function formatPlan(plan: Plan): string {
  const stepCount = plan.steps.length + plan.modules.reduce((n, m) => n + m.steps.length, 0);
  const lines = [
    '⚠ DRY-RUN Mode - No commands will be executed',
    `  Workflow:    ${plan.workflow.name} (${plan.workflow.kind})`,
  ];
  if (plan.workflow.description) lines.push(`  Description: ${plan.workflow.description}`);
  lines.push(`  Target:      ${plan.target}`, `  Workspace:   ${plan.workspace}`, `  Output:      ${plan.output}`);
  lines.push(plan.workflow.kind === 'flow' ? `  Modules:     ${plan.modules.length}` : `  Steps:       ${stepCount}`);
  if (plan.variables.tactic !== undefined) lines.push(`  Tactic:      ${valueToString(plan.variables.tactic)} (threads ${valueToString(plan.variables.threads)})`);
  if (plan.route) lines.push(`  Route:       ${routeSummary(plan.route, plan.steps.length)}`);
  const shown = SHOWN_VARIABLES.filter((k) => plan.variables[k] !== undefined);
  if (shown.length) {
    lines.push('', '✦ Builtin Variables');
    for (const k of shown) lines.push(`  ${k}: ${valueToString(plan.variables[k])}`);
  }
  const hookLines = (steps: PlanStep[], title: string) => {
    if (steps.length === 0) return;
    lines.push('', `◆ ${title}`);
    steps.forEach((s, i) => lines.push(...stepLines(s, '  ', `Hook ${i + 1}`)));
  };
  hookLines(plan.hooks.pre, 'Pre-scan hooks');
  if (plan.steps.length) lines.push('');
  if (plan.route) lines.push(...routeLines(plan.steps, plan.route, ''));
  else plan.steps.forEach((s, i) => lines.push(...stepLines(s, '', `Step ${i + 1}`)));
  plan.modules.forEach((m, i) => lines.push('', ...moduleLines(m, i + 1)));
  hookLines(plan.hooks.post, 'Post-scan hooks');
  if (plan.warnings.length) {
    lines.push('', '⚠ Warnings');
    for (const w of plan.warnings) lines.push(`  - ${w}`);
  }
  return `${lines.join('\n')}\n`;
}
