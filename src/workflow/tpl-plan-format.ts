/**
 * Human text of a plan for `--dry-run` (reference §3.16: the output must contain `DRY-RUN`, the
 * workflow name and every step name). Plain text: the CLI adds colour if it wants to.
 */
import { durationText } from '../util/duration.js';
import type { Plan, PlanModule, PlanStep } from './plan.js';
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

function moduleLines(mod: PlanModule, n: number): string[] {
  const lines = [`◆ Module ${n}: ${mod.name}${mod.path ? ` (${mod.path})` : ''}`];
  if (mod.dependsOn.length) lines.push(`    depends on: ${mod.dependsOn.join(', ')}`);
  if (mod.condition) lines.push(`    condition: ${mod.condition}`);
  if (mod.skipReason) lines.push(`    ◌ skipped (${mod.skipReason})`);
  if (mod.error) lines.push(`    ✘ ${mod.error}`);
  mod.steps.forEach((s, i) => lines.push(...stepLines(s, '    ', `Step ${i + 1}`)));
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
  plan.steps.forEach((s, i) => lines.push(...stepLines(s, '', `Step ${i + 1}`)));
  plan.modules.forEach((m, i) => lines.push('', ...moduleLines(m, i + 1)));
  hookLines(plan.hooks.post, 'Post-scan hooks');
  if (plan.warnings.length) {
    lines.push('', '⚠ Warnings');
    for (const w of plan.warnings) lines.push(`  - ${w}`);
  }
  return `${lines.join('\n')}\n`;
}
