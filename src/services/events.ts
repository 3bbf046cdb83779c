/**
 * The event receiver: `POST /events/emit` records the event in the event log (processed false)
 * and pokes the live scheduler, which matches it against event triggers and marks it processed.
 * Without a running scheduler the event waits in the log and is replayed when one starts.
 */
import { z } from 'zod';
import { errors } from '../errors.js';
import { liveScheduler, schedulerRole, type SchedulerRole } from '../scheduler/live.js';
import type { AppContext } from './context.js';

const noControl = (what: string) => z.string().max(200, `${what} must be at most 200 characters`).refine((v) => !/[\u0000-\u001f\u007f]/.test(v), `${what} must not contain control characters`);

/** The body of `POST /events/emit` (workspace, run_uuid, workflow_name are accepted as context). */
export const emitShape = z.object({
  topic: z.unknown().optional(),
  name: noControl('name').optional(),
  source: noControl('source').optional(),
  data_type: noControl('data_type').optional(),
  data: z.unknown().optional(),
  workspace: noControl('workspace').optional(),
  run_uuid: noControl('run_uuid').optional(),
  workflow_name: noControl('workflow_name').optional(),
});
export type EmitInput = z.infer<typeof emitShape>;

/** Records an incoming event and hands it to the scheduler. */
export async function emitEvent(app: AppContext, input: EmitInput): Promise<{ success: true; message: string; event_id: string; receiver_running: boolean }> {
  if (typeof input.topic !== 'string' || input.topic.trim() === '') throw errors.topicRequired();
  const topic = input.topic.trim();
  const check = noControl('topic').safeParse(topic);
  if (!check.success) throw errors.validation(check.error.issues.map((i) => i.message).join('; '));
  const rec = await app.repos.events.insert({
    topic,
    name: input.name ?? '',
    source: input.source || 'api',
    // Forced: an emitted event can never pass for one of the scheduler's own records.
    source_type: 'api',
    data_type: input.data_type ?? '',
    data: input.data === undefined ? {} : input.data,
    workspace: input.workspace ?? '',
    run_id: input.run_uuid ?? '',
    workflow_name: input.workflow_name ?? '',
    processed: false,
  });
  const scheduler = liveScheduler(app);
  scheduler?.poke();
  return { success: true, message: 'Event emitted successfully', event_id: rec.event_id, receiver_running: Boolean(scheduler?.status().running) };
}

/** `GET /event-receiver/status`; a master (`serve --master`) adds whether it holds the scheduler lock. */
export function receiverStatus(app: AppContext): { enabled: boolean; running: boolean; workflow_count: number; trigger_count: number; scheduler_leader?: SchedulerRole } {
  const status = liveScheduler(app)?.status() ?? { enabled: false, running: false, workflow_count: 0, trigger_count: 0 };
  const role = schedulerRole(app);
  return role ? { ...status, scheduler_leader: role } : status;
}

/** `GET /event-receiver/workflows`. */
export function receiverWorkflows(app: AppContext): { workflows: unknown[]; triggers: unknown[] } {
  return liveScheduler(app)?.workflows() ?? { workflows: [], triggers: [] };
}
