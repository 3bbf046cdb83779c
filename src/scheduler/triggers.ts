/**
 * One model for everything the scheduler registers: rows of the `schedules` table (API and CLI)
 * and `triggers:` declared in workflow YAML. Keys: `schedule:<id>` and `<workflow>:<trigger>`.
 */
import type { ScheduleRecord } from '../store/index.js';
import type { RunOptions } from '../services/runs.js';
import type { AppContext } from '../services/context.js';
import type { TriggerEvent, Workflow } from '../workflow/types.js';
import { listWorkflowFiles } from '../workflow/lookup.js';
import { messageOf } from '../errors.js';
import { parseDuration } from '../util/duration.js';

export type TriggerType = 'cron' | 'event' | 'watch' | 'manual';
export const TRIGGER_TYPES: readonly TriggerType[] = ['cron', 'event', 'watch', 'manual'];

export interface TriggerSpec {
  key: string;
  origin: 'schedule' | 'workflow';
  scheduleId?: string;
  /** Schedule name, or the trigger name of a workflow trigger. */
  name: string;
  triggerName: string;
  workflowName: string;
  workflowKind?: string;
  type: TriggerType;
  schedule?: string;
  event?: TriggerEvent;
  watchPath?: string;
  debounceMs?: number;
  /** Input mapping (workflow triggers). */
  input?: Record<string, unknown>;
  /** Fixed target and params (schedules' input_config). */
  target?: string;
  params: Record<string, string>;
  options: RunOptions;
  enabled: boolean;
  /** The org of a schedule: runs it creates go into that org's workspaces (the default org: unrestricted). */
  orgUuid?: string;
}

/** What a schedule stores in `input_config`. */
export interface ScheduleInputConfig {
  target?: string;
  params?: Record<string, string>;
  workspace?: string;
  runner_type?: 'host' | 'docker' | 'ssh';
  [key: string]: unknown;
}

/** Key of a schedule row's trigger. */
export function scheduleKey(id: string): string {
  return `schedule:${id}`;
}

function stringParams(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** The trigger of a schedule row. */
export function specFromSchedule(row: ScheduleRecord): TriggerSpec {
  const cfg = (row.input_config ?? {}) as ScheduleInputConfig;
  const type = (TRIGGER_TYPES as readonly string[]).includes(row.trigger_type) ? (row.trigger_type as TriggerType) : 'manual';
  const options: RunOptions = {};
  if (typeof cfg.workspace === 'string' && cfg.workspace) options.space = cfg.workspace;
  if (cfg.runner_type === 'host' || cfg.runner_type === 'docker' || cfg.runner_type === 'ssh') options.runnerType = cfg.runner_type;
  return {
    key: scheduleKey(row.id),
    origin: 'schedule',
    scheduleId: row.id,
    name: row.name,
    triggerName: row.trigger_name || row.name,
    workflowName: row.workflow_name,
    workflowKind: row.workflow_kind || undefined,
    type,
    schedule: row.schedule || undefined,
    event: type === 'event' ? { topic: row.event_topic } : undefined,
    watchPath: row.watch_path || undefined,
    target: typeof cfg.target === 'string' && cfg.target ? cfg.target : undefined,
    params: stringParams(cfg.params),
    options,
    enabled: row.is_enabled,
    orgUuid: row.org_uuid,
  };
}

/** The cron, event and watch triggers declared in a workflow (manual ones are not scheduled). */
export function specsFromWorkflow(wf: Workflow): TriggerSpec[] {
  return (wf.triggers ?? [])
    .filter((t) => t.on === 'cron' || t.on === 'event' || t.on === 'watch')
    .map((t) => {
      let debounceMs: number | undefined;
      try {
        debounceMs = parseDuration(t.debounce ?? '');
      } catch {
        debounceMs = undefined;
      }
      return {
        key: `${wf.name}:${t.name}`,
        origin: 'workflow' as const,
        name: t.name,
        triggerName: t.name,
        workflowName: wf.name,
        workflowKind: wf.kind,
        type: t.on,
        schedule: t.schedule,
        event: t.on === 'event' ? (t.event ?? {}) : undefined,
        watchPath: t.path,
        debounceMs,
        input: t.input,
        params: {},
        options: {},
        enabled: t.enabled === true,
      };
    });
}

/** Every trigger declared by the workflows of the workflows folder, with files that failed to load. */
export function loadWorkflowTriggers(app: AppContext): { specs: TriggerSpec[]; errors: string[]; workflows: Workflow[] } {
  const specs: TriggerSpec[] = [];
  const problems: string[] = [];
  const workflows: Workflow[] = [];
  const seen = new Set<string>();
  for (const file of listWorkflowFiles(app.settings().paths.workflows)) {
    let wf: Workflow;
    try {
      wf = app.loader.loadFile(file);
    } catch (err) {
      // A broken workflow without triggers is not the scheduler's business; only mention it when it declares some.
      if (/\btriggers\b/.test(messageOf(err))) problems.push(`${file}: ${messageOf(err).split('\n')[0]}`);
      continue;
    }
    if (!wf.triggers?.length || seen.has(wf.name)) continue;
    seen.add(wf.name);
    workflows.push(wf);
    specs.push(...specsFromWorkflow(wf));
  }
  return { specs, errors: problems, workflows };
}

/** A stable text of the fields that decide how a trigger is registered (to notice changes). */
export function fingerprint(spec: TriggerSpec): string {
  return JSON.stringify([spec.type, spec.enabled, spec.schedule, spec.event, spec.watchPath, spec.debounceMs, spec.input, spec.target, spec.params, spec.options, spec.workflowName, spec.triggerName, spec.name]);
}
