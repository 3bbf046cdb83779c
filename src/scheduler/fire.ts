/**
 * Launching a trigger: one queued run row (trigger_type, schedule_id, trigger_name), the
 * schedule's counters, a `schedule.triggered` event, and a kick of the run queue. The one path for
 * cron, event, watch and manual (`POST /schedules/{id}/trigger`, `osm schedule trigger`) fires.
 * A failure (unknown workflow, unsafe target) is recorded as an event with `error` and rethrown.
 */
import { randomBytes } from 'node:crypto';
import { messageOf } from '../errors.js';
import type { RunQueue } from '../engine/queue.js';
import type { RunRecord } from '../store/index.js';
import type { AppContext } from '../services/context.js';
import { createRuns } from '../services/runs.js';
import { envelopeParam } from './input-map.js';
import type { EventEnvelope } from './event-match.js';
import type { TriggerSpec, TriggerType } from './triggers.js';
import { DEFAULT_ORG_UUID } from '../store/org-constants.js';

export interface FireContext {
  triggerType: TriggerType;
  /** Overrides the spec's target (resolved from the trigger input). */
  target?: string;
  /** Merged over the spec's params. */
  params?: Record<string, string>;
  /** The event that fired an event trigger (becomes the `_event_envelope` param). */
  envelope?: EventEnvelope;
  queue?: RunQueue;
  /** Next planned fire time stored with the schedule's counters (undefined keeps it). */
  nextRun?: string | null;
}

/** Placeholder target of a run without one, as `osm run --empty-target` makes it. */
function emptyTarget(): string {
  return `empty-${randomBytes(3).toString('hex')}-${Math.floor(Date.now() / 1000)}`;
}

/** The data of a `schedule.triggered` event. */
function fireData(spec: TriggerSpec, ctx: Pick<FireContext, 'triggerType' | 'envelope'>): Record<string, unknown> {
  return {
    schedule_id: spec.scheduleId ?? '',
    trigger_type: ctx.triggerType,
    trigger_name: spec.triggerName,
    schedule: spec.schedule ?? '',
    workflow: spec.workflowName,
    ...(ctx.envelope ? { event_id: ctx.envelope.id, event_topic: ctx.envelope.topic } : {}),
  };
}

/** Creates the run of one fire and records it; throws (after recording the failure) when it cannot. */
export async function fireTrigger(app: AppContext, spec: TriggerSpec, ctx: FireContext): Promise<RunRecord> {
  const repos = app.repos;
  const baseData = fireData(spec, ctx);
  try {
    const params: Record<string, string> = { ...spec.params, ...(ctx.params ?? {}) };
    if (ctx.envelope) params._event_envelope = envelopeParam(ctx.envelope);
    const target = ctx.target ?? spec.target;
    const { runs } = await createRuns(app, {
      workflow: spec.workflowName,
      targets: [target ?? emptyTarget()],
      params,
      status: 'queued',
      triggerType: ctx.triggerType,
      triggerName: spec.triggerName,
      scheduleId: spec.scheduleId,
      options: { ...spec.options, ...(target ? {} : { emptyTarget: true }) },
      // A schedule of an org fires only into that org's workspaces (and creates new ones there).
      ...(spec.orgUuid && spec.orgUuid !== DEFAULT_ORG_UUID ? { scope: { orgs: [spec.orgUuid] }, orgUuid: spec.orgUuid } : {}),
    });
    const run = runs[0]!;
    const now = new Date().toISOString();
    if (spec.scheduleId) await repos.schedules.recordRun(spec.scheduleId, now, ctx.nextRun);
    await repos.events.insert({
      topic: 'schedule.triggered',
      name: spec.name,
      source: 'scheduler',
      source_type: 'scheduler',
      data_type: 'schedule',
      data: { ...baseData, run_uuid: run.run_uuid, target: run.target },
      workspace: run.workspace,
      run_id: run.run_uuid,
      workflow_name: spec.workflowName,
      processed: true,
    });
    ctx.queue?.kick();
    return run;
  } catch (err) {
    await recordFireFailure(app, spec, ctx, messageOf(err));
    throw err;
  }
}

/** Records a fire that could not create its run (also used before input resolution succeeded). */
export async function recordFireFailure(app: AppContext, spec: TriggerSpec, ctx: Pick<FireContext, 'triggerType' | 'envelope' | 'nextRun'>, message: string): Promise<void> {
  try {
    if (spec.scheduleId && ctx.nextRun !== undefined) await app.repos.schedules.setNextRun(spec.scheduleId, ctx.nextRun);
    await app.repos.events.insert({
      topic: 'schedule.triggered',
      name: spec.name,
      source: 'scheduler',
      source_type: 'scheduler',
      data_type: 'schedule',
      data: { ...fireData(spec, ctx), error: message },
      workflow_name: spec.workflowName,
      processed: true,
      error: message,
    });
  } catch {
    // The database itself failing: the caller logs the original error.
  }
}
