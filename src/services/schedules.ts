/**
 * Schedule use cases shared by the API and `osm schedule`: create, list, get, update, delete,
 * enable/disable and trigger now. Everything is validated before it is stored — the cron
 * expression, the workflow, the target and params (untrusted), and a watch path (which must stay
 * inside the base or data folder) — and every change is handed to the live scheduler at once.
 */
import { z } from 'zod';
import { errors } from '../errors.js';
import type { RunQueue } from '../engine/queue.js';
import type { ListResult, Page, RunRecord, ScheduleRecord } from '../store/index.js';
import type { Workflow } from '../workflow/types.js';
import { validateTarget } from '../workflow/target.js';
import { validateRunParams } from '../workflow/reserved-params.js';
import { resolveWorkflowFile } from './workflows.js';
import { isSafeName } from '../util/fs-safe.js';
import { nextCronRun, normaliseCron } from '../scheduler/cron.js';
import { fireTrigger } from '../scheduler/fire.js';
import { liveScheduler } from '../scheduler/live.js';
import { specFromSchedule, TRIGGER_TYPES, type ScheduleInputConfig, type TriggerType } from '../scheduler/triggers.js';
import { checkWatchPath } from '../scheduler/watch.js';
import type { AppContext } from './context.js';
import { inScope, UNRESTRICTED, type Scope } from '../auth/scope.js';

const paramsShape = z.record(z.string(), z.string({ error: 'must be a string' }));
const runnerShape = z.enum(['host', 'docker', 'ssh']);

const inputConfigShape = z
  .object({
    target: z.string().optional(),
    params: paramsShape.optional(),
    workspace: z.string().optional(),
    runner_type: runnerShape.optional(),
  })
  .loose();

/** Fields a schedule can be created or updated with (API body and CLI flags). */
export const scheduleFieldsShape = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  workflow_name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  workflow: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  workflow_kind: z.enum(['flow', 'module']).optional(),
  target: z.string().max(2048).optional(),
  trigger_type: z.enum(TRIGGER_TYPES as [TriggerType, ...TriggerType[]]).optional(),
  schedule: z.string().max(200).optional(),
  event_topic: z.string().max(200).optional(),
  watch_path: z.string().max(4096).optional(),
  enabled: z.boolean().optional(),
  is_enabled: z.boolean().optional(),
  params: paramsShape.optional(),
  input_config: inputConfigShape.optional(),
  runner_type: runnerShape.optional(),
  workspace: z.string().optional(),
});
export type ScheduleFields = z.infer<typeof scheduleFieldsShape>;

/** The public shape of a schedule (the table row). */
export type Schedule = ScheduleRecord;

/** The daemon fires a schedule by workflow name, so only an installed workflow can be scheduled (never a path). */
async function loadWorkflow(app: AppContext, name: string): Promise<Workflow> {
  return app.loader.loadFile(await resolveWorkflowFile(app, name));
}

interface Resolved {
  name: string;
  workflow: Workflow;
  triggerType: TriggerType;
  schedule: string;
  eventTopic: string;
  watchPath: string;
  inputConfig: ScheduleInputConfig;
  enabled: boolean;
}

/** Checks a complete schedule definition; every problem is an error of the catalogue. */
async function resolveDefinition(app: AppContext, f: ScheduleFields, base?: ScheduleRecord): Promise<Resolved> {
  const name = f.name ?? base?.name;
  if (!name) throw errors.scheduleInvalid('name is required');
  const workflowName = f.workflow_name ?? f.workflow ?? base?.workflow_name;
  if (!workflowName) throw errors.scheduleInvalid('workflow_name is required');
  const triggerType: TriggerType = f.trigger_type ?? ((base?.trigger_type as TriggerType | undefined) && (TRIGGER_TYPES as readonly string[]).includes(base!.trigger_type) ? (base!.trigger_type as TriggerType) : 'cron');
  let schedule = (f.schedule ?? base?.schedule ?? '').trim();
  const eventTopic = (f.event_topic ?? base?.event_topic ?? '').trim();
  let watchPath = (f.watch_path ?? base?.watch_path ?? '').trim();

  if (triggerType === 'cron' && schedule === '') throw errors.invalidCron('schedule is required for cron triggers');
  if (schedule !== '') schedule = normaliseCron(schedule);
  if (triggerType === 'event' && eventTopic === '') throw errors.scheduleInvalid('event_topic is required for event triggers');
  if (eventTopic !== '' && /[\u0000-\u001f\u007f]/.test(eventTopic)) throw errors.scheduleInvalid('event_topic must not contain control characters');
  if (triggerType === 'watch' && watchPath === '') throw errors.scheduleInvalid('watch_path is required for watch triggers');
  if (watchPath !== '') watchPath = checkWatchPath(app, watchPath);

  const prev = (base?.input_config ?? {}) as ScheduleInputConfig;
  const given = f.input_config ?? {};
  const inputConfig: ScheduleInputConfig = { ...prev, ...given };
  if (f.input_config?.params === undefined && prev.params) inputConfig.params = prev.params;
  if (f.params !== undefined) inputConfig.params = { ...(f.input_config?.params ?? {}), ...f.params };
  if (f.target !== undefined) inputConfig.target = f.target;
  if (f.runner_type !== undefined) inputConfig.runner_type = f.runner_type;
  if (f.workspace !== undefined) inputConfig.workspace = f.workspace;
  if (typeof inputConfig.target === 'string') {
    inputConfig.target = inputConfig.target.trim();
    if (inputConfig.target === '') delete inputConfig.target;
    else validateTarget(inputConfig.target);
  }
  validateRunParams(inputConfig.params ?? {});
  if (inputConfig.workspace !== undefined && inputConfig.workspace !== '' && !isSafeName(inputConfig.workspace)) throw errors.invalidWorkspaceName();

  const workflow = await loadWorkflow(app, workflowName);
  if (f.workflow_kind && f.workflow_kind !== workflow.kind) {
    throw errors.scheduleInvalid(`workflow_kind is ${f.workflow_kind} but ${workflow.name} is a ${workflow.kind}`);
  }
  const enabled = f.enabled ?? f.is_enabled ?? base?.is_enabled ?? true;
  return { name, workflow, triggerType, schedule, eventTopic, watchPath, inputConfig, enabled };
}

/** Parses schedule fields from untrusted input; every issue as `path: message`. */
export function parseScheduleFields(value: unknown): ScheduleFields {
  const r = scheduleFieldsShape.safeParse(value ?? {});
  if (!r.success) {
    throw errors.invalidBody(r.error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; '));
  }
  return r.data;
}

/** Creates a schedule (enabled unless told otherwise) and registers it with the live scheduler. */
export async function createSchedule(app: AppContext, fields: ScheduleFields, scope: Scope = UNRESTRICTED): Promise<ScheduleRecord> {
  const d = await resolveDefinition(app, fields);
  const row = await app.repos.schedules.create({
    // A bound credential's schedule belongs to its (first) org; its runs are created there.
    ...(scope.orgs ? { org_uuid: scope.orgs[0] } : {}),
    name: d.name,
    workflow_name: d.workflow.name,
    workflow_kind: d.workflow.kind,
    workflow_path: d.workflow.file_path,
    trigger_name: d.name,
    trigger_type: d.triggerType,
    schedule: d.schedule,
    event_topic: d.eventTopic,
    watch_path: d.watchPath,
    input_config: d.inputConfig,
    is_enabled: d.enabled,
    next_run: d.enabled && d.triggerType === 'cron' ? nextCronRun(d.schedule) : null,
  });
  await liveScheduler(app)?.syncSchedule(row.id);
  return (await app.repos.schedules.get(row.id)) ?? row;
}

/** A page of schedules, newest first. */
export async function listSchedules(app: AppContext, page: Page, scope: Scope = UNRESTRICTED): Promise<ListResult<ScheduleRecord>> {
  return app.repos.schedules.list(page, scope.orgs ?? undefined);
}

/** One schedule; 404 `Schedule not found` (also outside the caller's orgs). */
export async function getSchedule(app: AppContext, id: string, scope: Scope = UNRESTRICTED): Promise<ScheduleRecord> {
  const row = await app.repos.schedules.get(id);
  if (!row || !inScope(scope, row.org_uuid)) throw errors.scheduleNotFound();
  return row;
}

/** Applies a partial change (validated as a whole) and re-registers the schedule. */
export async function updateSchedule(app: AppContext, id: string, fields: ScheduleFields, scope: Scope = UNRESTRICTED): Promise<ScheduleRecord> {
  const base = await getSchedule(app, id, scope);
  const d = await resolveDefinition(app, fields, base);
  const row = await app.repos.schedules.update(id, {
    name: d.name,
    trigger_name: d.name,
    workflow_name: d.workflow.name,
    workflow_kind: d.workflow.kind,
    workflow_path: d.workflow.file_path,
    trigger_type: d.triggerType,
    schedule: d.schedule,
    event_topic: d.eventTopic,
    watch_path: d.watchPath,
    input_config: d.inputConfig,
    is_enabled: d.enabled,
  });
  if (!row) throw errors.scheduleNotFound();
  await app.repos.schedules.setNextRun(id, d.enabled && d.triggerType === 'cron' ? nextCronRun(d.schedule) : null);
  await liveScheduler(app)?.syncSchedule(id);
  return (await app.repos.schedules.get(id)) ?? row;
}

/** Deletes a schedule and drops its live trigger. */
export async function deleteSchedule(app: AppContext, id: string, scope: Scope = UNRESTRICTED): Promise<void> {
  await getSchedule(app, id, scope);
  if (!(await app.repos.schedules.delete(id))) throw errors.scheduleNotFound();
  await liveScheduler(app)?.syncSchedule(id);
}

/** Enables or disables a schedule (next_run recomputed or cleared) and re-registers it. */
export async function setScheduleEnabled(app: AppContext, id: string, enabled: boolean, scope: Scope = UNRESTRICTED): Promise<ScheduleRecord> {
  const row = await getSchedule(app, id, scope);
  if (enabled && row.trigger_type === 'cron') {
    // A row written by an older version or by hand must still be valid to be switched on.
    normaliseCron(row.schedule);
  }
  await app.repos.schedules.setEnabled(id, enabled);
  await app.repos.schedules.setNextRun(id, enabled && row.trigger_type === 'cron' ? nextCronRun(row.schedule) : null);
  await liveScheduler(app)?.syncSchedule(id);
  return getSchedule(app, id);
}

/** Fires a schedule now (trigger_type manual), whatever its type or enabled state. */
export async function triggerSchedule(app: AppContext, id: string, queue?: RunQueue, scope: Scope = UNRESTRICTED): Promise<{ schedule: ScheduleRecord; run: RunRecord }> {
  const row = await getSchedule(app, id, scope);
  const run = await fireTrigger(app, specFromSchedule(row), { triggerType: 'manual', queue });
  return { schedule: row, run };
}
