/** A BullMQ job as the API shows a task (`GET /tasks`, `GET /tasks/{id}`). */
import type { Job } from 'bullmq';
import { needsOf } from './routing.js';
import { taskProgressSchema, taskResultSchema, type TaskData } from './protocol.js';

export type TaskStatus = 'waiting' | 'running' | 'completed' | 'failed';

export interface TaskView {
  id: string;
  run_uuid: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  priority: string;
  status: TaskStatus;
  /** BullMQ's own state (waiting, prioritized, delayed, active, completed, failed). */
  state: string;
  worker_id: string | null;
  created_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  attempts: number;
  stalled: number;
  progress: { completed_steps: number; total_steps: number; current_step: string } | null;
  error: string | null;
  /** Status of the run the worker reported (completed tasks only). */
  run_status: string | null;
  /** What a worker needs to take the task: its workflow's declared tools, requested labels. */
  requires: { tools: string[]; labels: string[] };
  /** Waiting tasks no online worker can take: why (docs/distributed.md "Routing"). */
  waiting_reason?: string;
}

/** BullMQ state → task status. */
export function taskStatusOf(state: string): TaskStatus {
  if (state === 'active') return 'running';
  if (state === 'completed') return 'completed';
  if (state === 'failed') return 'failed';
  return 'waiting';
}

const iso = (ms: number | undefined | null): string | null => (typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString() : null);

/** The view of one job in `state`. */
export function taskView(job: Job, state: string): TaskView {
  const data = (job.data ?? {}) as Partial<TaskData>;
  const progress = taskProgressSchema.safeParse(job.progress);
  const result = state === 'completed' ? taskResultSchema.safeParse(job.returnvalue) : undefined;
  // A waiting task has no worker (one that fetched it and gave it back, or stalled, is not its worker).
  const waiting = taskStatusOf(state) === 'waiting';
  const worker = waiting ? '' : job.processedBy || (progress.success ? progress.data.worker_id : '') || (result?.success ? result.data.worker_id : '');
  return {
    id: String(job.id),
    run_uuid: String(data.run_uuid ?? job.id),
    workflow_name: String(data.workflow_name ?? job.name),
    workflow_kind: String(data.workflow_kind ?? ''),
    target: String(data.target ?? ''),
    priority: String(data.priority ?? 'normal'),
    status: taskStatusOf(state),
    state,
    worker_id: worker || null,
    created_at: iso(job.timestamp),
    started_at: waiting ? null : iso(job.processedOn),
    finished_at: iso(job.finishedOn),
    attempts: job.attemptsMade ?? 0,
    stalled: job.stalledCounter ?? 0,
    progress: progress.success ? { completed_steps: progress.data.completed_steps, total_steps: progress.data.total_steps, current_step: progress.data.current_step } : null,
    error: state === 'failed' ? job.failedReason || 'task failed' : null,
    run_status: result?.success ? result.data.run.status : null,
    requires: needsOf(data)?.requires ?? { tools: [], labels: [] },
  };
}
