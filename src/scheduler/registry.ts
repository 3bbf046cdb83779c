/** The bookkeeping of registered triggers and how they are reported (status, listings). */
import type { ScheduledTask } from 'node-cron';
import type { Workflow } from '../workflow/types.js';
import type { TriggerSpec } from './triggers.js';
import type { FileWatch } from './watch.js';

/** One registered trigger: its spec, what runs it, and its counters. */
export interface Registered {
  spec: TriggerSpec;
  print: string;
  task?: ScheduledTask;
  watch?: FileWatch;
  nextRun: string | null;
  lastRun: string | null;
  runCount: number;
  error: string;
}

/** A registered trigger as `/event-receiver/workflows` shows it. */
export interface TriggerInfo {
  key: string;
  workflow_name: string;
  trigger_name: string;
  type: string;
  topic: string;
  schedule: string;
  watch_path: string;
  schedule_id: string;
  enabled: boolean;
  next_run: string | null;
  last_run: string | null;
  run_count: number;
  error: string;
}

/** The public view of a registered trigger. */
export function triggerInfo(r: Registered): TriggerInfo {
  return {
    key: r.spec.key,
    workflow_name: r.spec.workflowName,
    trigger_name: r.spec.triggerName,
    type: r.spec.type,
    topic: r.spec.event?.topic ?? '',
    schedule: r.spec.schedule ?? '',
    watch_path: r.spec.watchPath ?? '',
    schedule_id: r.spec.scheduleId ?? '',
    enabled: r.spec.enabled,
    next_run: r.task ? (r.task.getNextRun()?.toISOString() ?? null) : r.nextRun,
    last_run: r.lastRun,
    run_count: r.runCount,
    error: r.error,
  };
}

/** `GET /event-receiver/status` of a set of registered triggers. */
export function statusOf(triggers: Registered[], running: boolean): { enabled: boolean; running: boolean; workflow_count: number; trigger_count: number } {
  const names = new Set(triggers.map((r) => r.spec.workflowName));
  return { enabled: true, running, workflow_count: names.size, trigger_count: triggers.length };
}

export interface WorkflowSummary {
  name: string;
  kind: string;
  description: string;
  triggers: string[];
}

/** `GET /event-receiver/workflows`: the workflows behind the triggers (by name), and the triggers. */
export function workflowsOf(triggers: TriggerInfo[], find: (name: string) => Workflow | undefined): { workflows: WorkflowSummary[]; triggers: TriggerInfo[] } {
  const byName = new Map<string, WorkflowSummary>();
  for (const t of triggers) {
    let entry = byName.get(t.workflow_name);
    if (!entry) {
      const wf = find(t.workflow_name);
      entry = { name: t.workflow_name, kind: wf?.kind ?? '', description: wf?.description ?? '', triggers: [] };
      byName.set(t.workflow_name, entry);
    }
    entry.triggers.push(t.trigger_name);
  }
  return { workflows: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), triggers };
}
