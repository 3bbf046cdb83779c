/**
 * What the fleet looks like from the master: tasks per queue state (`GET /tasks`, `/tasks/{id}`),
 * workers with their attempt totals (`GET /workers`, `/workers/{id}`), draining a worker, job
 * counts for `/metrics`, and the warnings the run list and health show when waiting tasks have no
 * worker that can take them.
 */
import { Job, type Queue } from 'bullmq';
import { errors } from '../errors.js';
import type { AppContext } from '../services/context.js';
import { runToApi } from '../services/run-control.js';
import { DRAIN_FLAG_TTL_S, drainKey } from './keys.js';
import { needsOf, queueWarnings, waitingReason, type NeedsCache } from './routing.js';
import { taskView, type TaskView } from './task-view.js';
import { getWorkerView, listWorkerViews, type WorkerView } from './worker-registry.js';

export interface TaskLists {
  running: TaskView[];
  waiting: TaskView[];
  completed: TaskView[];
  failed: TaskView[];
}

/** BullMQ states of a task waiting for a worker. */
export const WAITING_STATES = new Set(['waiting', 'prioritized', 'delayed', 'waiting-children', 'wait', 'paused']);

/** The master's read side of the queue and the worker registry. */
export class FleetViews {
  constructor(
    private readonly src: {
      /** The master's queue (throws when the master is not started). */
      queue: () => Queue;
      prefix: string;
      app: AppContext;
      /** Needs of waiting jobs already read (shared with the master, which forgets a job's when it is resubmitted). */
      needs: NeedsCache;
    },
  ) {}

  private get q(): Queue {
    return this.src.queue();
  }

  private get prefix(): string {
    return this.src.prefix;
  }

  private get app(): AppContext {
    return this.src.app;
  }

  private get needs(): NeedsCache {
    return this.src.needs;
  }

  /** `GET /tasks`: bounded lists per state (running and waiting oldest first, finished newest first). */
  async listTasks(limit: number): Promise<TaskLists> {
    const n = Math.max(1, limit);
    const q = this.q;
    const [active, waiting, completed, failed] = await Promise.all([
      q.getJobs(['active'], 0, n - 1, true),
      q.getJobs(['prioritized', 'waiting', 'delayed'], 0, n - 1, true),
      q.getJobs(['completed'], 0, n - 1, false),
      q.getJobs(['failed'], 0, n - 1, false),
    ]);
    const view = (jobs: (Job | undefined)[], state: string | ((j: Job) => string)) =>
      jobs.filter((j): j is Job => Boolean(j)).map((j) => taskView(j, typeof state === 'string' ? state : state(j)));
    const workers = waiting.length > 0 ? await this.listWorkers() : [];
    const explained = (t: TaskView, j: Job | undefined) => {
      const needs = j ? needsOf(j.data) : undefined;
      const reason = needs ? waitingReason(needs, workers) : undefined;
      return reason ? { ...t, waiting_reason: reason } : t;
    };
    return {
      running: view(active, 'active'),
      waiting: view(waiting, (j) => (j.delay > 0 ? 'delayed' : j.priority > 0 ? 'prioritized' : 'waiting'))
        .slice(0, n)
        .map((t) => explained(t, waiting.find((j) => j?.id === t.id))),
      completed: view(completed, 'completed'),
      failed: view(failed, 'failed'),
    };
  }

  /** `GET /tasks/{id}`: the task and, when the master has it, its run. */
  async getTask(id: string): Promise<TaskView & { run: ReturnType<typeof runToApi> | null }> {
    const state = await this.q.getJobState(id);
    const job = state === 'unknown' ? undefined : await Job.fromId(this.q, id);
    if (!job) throw errors.taskNotFound(id);
    const run = await this.app.repos.runs.getByUuid(String(job.id));
    const reason = WAITING_STATES.has(state) ? await this.waitingReason(String(job.id)) : undefined;
    return { ...taskView(job, state), ...(reason ? { waiting_reason: reason } : {}), run: run ? runToApi(run) : null };
  }

  /** `POST /workers/{id}/drain`: the worker finishes its tasks in hand and takes no new ones. */
  async drainWorker(id: string): Promise<WorkerView & { totals: Record<string, number> }> {
    const w = await this.getWorker(id);
    await (await this.q.client).set(drainKey(this.prefix, id), '1', { EX: DRAIN_FLAG_TTL_S });
    return w;
  }

  /** Jobs per BullMQ state. */
  async jobCounts(): Promise<Record<string, number>> {
    return this.q.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed');
  }

  /** Warnings for the run list and health: tasks waiting with no worker online, or none that can take them. */
  async queueWarnings(): Promise<string[]> {
    // The workers without their attempt totals (a database aggregate the warnings do not use).
    return queueWarnings(this.q, await listWorkerViews(await this.q.client, this.q, this.prefix), this.needs);
  }

  /** Why a waiting task is not taken (no online worker has its workflow, tools or labels); undefined otherwise. */
  async waitingReason(uuid: string, workers?: WorkerView[]): Promise<string | undefined> {
    const job = await Job.fromId(this.q, uuid);
    const needs = job ? needsOf(job.data) : undefined;
    if (!needs || !WAITING_STATES.has(await this.q.getJobState(uuid))) return undefined;
    return waitingReason(needs, workers ?? (await this.listWorkers()));
  }

  /** Attempt totals of workers from the master's database (they survive restarts of both). */
  private async withTotals(ws: WorkerView[]): Promise<(WorkerView & { totals: Record<string, number> })[]> {
    const totals = await this.app.repos.attempts.totalsByWorker();
    return ws.map((w) => ({ ...w, totals: totals[w.id] ?? {} }));
  }

  /** `GET /workers`. */
  async listWorkers(): Promise<(WorkerView & { totals: Record<string, number> })[]> {
    return this.withTotals(await listWorkerViews(await this.q.client, this.q, this.prefix));
  }

  /** `GET /workers/{id}`. */
  async getWorker(id: string): Promise<WorkerView & { totals: Record<string, number> }> {
    const w = await getWorkerView(await this.q.client, this.q, this.prefix, id);
    if (!w) throw errors.workerNotFound();
    return (await this.withTotals([w]))[0]!;
  }
}
