import Table from 'cli-table3';
import type { Workflow } from '../workflow/types.js';
import { formatDuration } from '../util/duration.js';
import type { Execution } from './types.js';
import type { StepSummary } from './step-exec.js';
import type { ModuleSummary } from './flow-exec.js';

const STATUS_ICON: Record<string, string> = { completed: '✔', failed: '⏹', skipped: '◌', cancelled: '⏹' };

/** The header printed when a module or flow starts (reference §3.2 step 9). */
export function printModuleHeader(exec: Execution, wf: Workflow, name: string, totalSteps: number): void {
  const p = exec.printer;
  p.line(`${p.c.bold('★ Executing:')} ${name}${wf.kind === 'flow' ? ' (flow)' : ''}`);
  if (wf.description) p.line(`  Description: ${wf.description}`);
  if (wf.tags.length) p.line(`  Tags: ${wf.tags.join(', ')}`);
  p.line(`  Total ${wf.kind === 'flow' ? 'Modules' : 'Steps'}: ${wf.kind === 'flow' ? wf.modules.length : totalSteps}`);
  p.line(`  Tip: osm workflow show ${wf.name}`);
}

function table(head: string[], rows: string[][], color: boolean): string {
  const t = new Table({ head, style: { head: color ? ['cyan'] : [], border: color ? ['grey'] : [] } });
  for (const r of rows) t.push(r);
  return t.toString();
}

export interface SummaryInput {
  workflow: string;
  kind: string;
  runUuid: string;
  target: string;
  status: string;
  durationMs: number;
  error?: string;
  steps: StepSummary[];
  modules?: ModuleSummary[];
  totalSteps: number;
  artifacts?: string[];
  /** Target scope drops of the run (docs/scope.md), when it had a scope. */
  scope?: { dropped: number; by_source: Record<string, number> };
}

/** The Execution Summary block (tests grep `Status: completed`, the step table and `completed_steps`). */
export function printSummary(exec: Execution, s: SummaryInput, color: boolean, verbose: boolean): void {
  const p = exec.printer;
  const c = p.c;
  const statusText = s.status === 'completed' ? c.green(s.status) : c.red(s.status);
  const lines = [
    '',
    `${c.bold('▶ Execution Summary')}`,
    `  Workflow: ${s.workflow}`,
    `  Run ID: ${s.runUuid}`,
    `  Target: ${s.target}`,
    `  Status: ${statusText}`,
    `  Duration: ${formatDuration(s.durationMs)}`,
  ];
  if (s.error) lines.push(`  ${s.status === 'completed' ? 'Note' : 'Error'}: ${s.error}`);
  if (s.scope) {
    const by = Object.entries(s.scope.by_source).map(([k, n]) => `${k}: ${n}`).join(', ');
    lines.push(`  Scope: ${s.scope.dropped} out-of-scope item(s) dropped${by ? ` (${by})` : ''}`);
  }
  p.always(lines.join('\n'));
  if (s.modules && s.modules.length) {
    p.always(`\n${c.bold('∴ Module Results:')}`);
    p.always(table(['Status', 'Module', 'Duration'], s.modules.map((m) => [`${STATUS_ICON[m.status] ?? ''} ${m.status}`, m.name, formatDuration(m.durationMs)]), color));
  }
  if (s.steps.length) {
    p.always(`\n${c.bold('∴ Step Results:')}`);
    p.always(table(['Status', 'Step', 'Duration'], s.steps.map((r) => [`${STATUS_ICON[r.status] ?? ''} ${r.status}`, s.modules?.length ? `${r.module}/${r.name}` : r.name, formatDuration(r.durationMs)]), color));
  }
  if (verbose && s.artifacts?.length) {
    p.always(`\n${c.bold('∴ Artifacts:')}`);
    for (const a of s.artifacts) p.always(`  ${a}`);
  }
  const counts = {
    workflow: s.workflow,
    run_uuid: s.runUuid,
    target: s.target,
    status: s.status,
    duration: formatDuration(s.durationMs),
    total_steps: s.totalSteps,
    completed_steps: s.steps.filter((r) => r.status === 'completed').length,
    failed_steps: s.steps.filter((r) => r.status === 'failed').length,
    skipped_steps: s.steps.filter((r) => r.status === 'skipped').length,
    ...(s.scope ? { scope_dropped: s.scope.dropped } : {}),
  };
  p.logLine(`${new Date().toISOString()} INFO Execution Summary ${JSON.stringify(counts)}`);
}
