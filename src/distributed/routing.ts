/**
 * Routing of distributed tasks. BullMQ has no per-worker routing, so it is done at both ends:
 *
 * - a worker advertises what it can do in its registry entry: the workflows in its folder, the
 *   tools (commands named by those workflows' `dependencies`) found on its PATH or binaries
 *   folder, and custom labels (`osm worker join --label gpu --label region=eu`);
 * - a task carries its requirements (the workflow's declared commands, requested labels);
 * - a worker that fetches a task it cannot satisfy gives it back without using an attempt
 *   (`moveToDelayed`, BullMQ's own "not now" path) and slows its own fetching down, so an
 *   unsatisfiable task is not spun on;
 * - the master explains a task no online worker can take (`waiting_reason`, and the warnings of
 *   GET /runs and /health) from the advertised labels.
 */
import { Queue, type Job } from 'bullmq';
import type { LoadedSettings } from '../settings/index.js';
import { connectionOptions, resolveDistributedConfig } from './redis-config.js';
import { QUEUE_NAME } from './keys.js';
import type { AppContext } from '../services/context.js';
import { buildBaseEnv } from '../engine/executor.js';
import { commandExists } from '../engine/deps-check.js';
import { listWorkflowFiles } from '../workflow/lookup.js';
import type { Workflow } from '../workflow/types.js';
import { resolveWorkflowFile } from '../services/workflows.js';
import { errors, isOsmError } from '../errors.js';
import { LABEL_HINT, LABEL_PATTERN } from '../services/run-options.js';
import { taskRequirementsSchema, type TaskData, type TaskRequirements } from './protocol.js';
import { listWorkerViews, type RefusedTask, type WorkerView } from './worker-registry.js';



/** Bounds of what a worker advertises (its entry lives in one Redis hash field). */
const MAX_ADVERTISED = 2000;

/** Checks `--label` values of `osm worker join`; duplicates are dropped. */
export function parseWorkerLabels(values: string[]): string[] {
  const out = new Set<string>();
  for (const raw of values) {
    const v = raw.trim();
    if (!LABEL_PATTERN.test(v)) throw errors.validation(`invalid --label ${JSON.stringify(raw)}: ${LABEL_HINT}`);
    out.add(v);
  }
  if (out.size > 64) throw errors.validation('at most 64 --label values');
  return [...out].sort();
}

/** True when a worker's labels satisfy one requested label (`gpu` matches `gpu` and `gpu=<any>`; `k=v` only `k=v`). */
export function labelMatches(wanted: string, have: readonly string[]): boolean {
  if (wanted.includes('=')) return have.includes(wanted);
  return have.some((l) => l === wanted || l.startsWith(`${wanted}=`));
}

/** The commands a workflow declares in `dependencies` (for a flow, its modules' too). */
export function declaredTools(app: AppContext, wf: Workflow): string[] {
  const tools = new Set(wf.dependencies.commands.filter(Boolean));
  if (wf.kind === 'flow') {
    for (const m of app.loader.flowModules(wf)) for (const c of m.workflow?.dependencies.commands ?? []) if (c) tools.add(c);
  }
  return [...tools].sort();
}

/** The PATH a step sees: binaries folder first. */
function toolPath(app: AppContext): string {
  return buildBaseEnv(app.settings().paths.binaries).PATH ?? '';
}

/** What a worker advertises: its workflows, the tools they declare that it has, its custom labels. */
export interface WorkerCapabilities {
  workflows: string[];
  tools: string[];
  labels: string[];
}

/** Scans this worker's workflows folder (the loader caches unchanged files). */
export function scanCapabilities(app: AppContext, labels: string[]): WorkerCapabilities {
  const names = new Set<string>();
  const declared = new Set<string>();
  for (const file of listWorkflowFiles(app.settings().paths.workflows)) {
    let wf: Workflow;
    try {
      wf = app.loader.loadFile(file);
    } catch {
      continue; // a broken file is not a workflow this worker can run
    }
    names.add(wf.name);
    for (const c of wf.dependencies.commands) if (c) declared.add(c);
  }
  const path = toolPath(app);
  const tools = [...declared].filter((c) => commandExists(c, path));
  return { workflows: [...names].sort().slice(0, MAX_ADVERTISED), tools: tools.sort().slice(0, MAX_ADVERTISED), labels };
}

/** The tools a task of this workflow requires (the master's copy); none when it cannot be loaded. */
export function workflowTools(app: AppContext, workflowName: string): string[] {
  try {
    return declaredTools(app, app.loader.loadFile(resolveWorkflowFile(app, workflowName)));
  } catch {
    return []; // the workflow vanished from the master since the run was created: the worker decides alone
  }
}

/**
 * Why this worker cannot take a task (undefined when it can): the workflow is not in its folder
 * or is of another kind, a tool its copy of the workflow or the task requires is not on its PATH
 * or in its binaries folder, or a requested label is missing.
 * Checked against the worker's real folder and PATH, not its advertised entry.
 */
export function unmetRequirement(app: AppContext, data: TaskData, labels: readonly string[]): string | undefined {
  let wf: Workflow;
  try {
    wf = app.loader.loadFile(resolveWorkflowFile(app, data.workflow_name));
  } catch (err) {
    // Invalid names and broken files are the task runner's errors (reported as the attempt's error).
    if (isOsmError(err) && err.status === 404) return `no workflow ${data.workflow_name}`;
    return undefined;
  }
  if (wf.kind !== data.workflow_kind) return `workflow ${data.workflow_name} is a ${wf.kind} here, the task expects a ${data.workflow_kind}`;
  // The tools of this worker's own copy of the workflow, and those the task names. Names from the
  // queue are looked up on PATH only: one with a "/" would probe a path on this machine.
  const required = new Set([...declaredTools(app, wf), ...data.requires.tools.filter((t) => !t.includes('/'))]);
  const path = toolPath(app);
  const missing = [...required].filter((t) => !commandExists(t, path));
  if (missing.length > 0) return `needs tools: ${missing.join(', ')}`;
  const absent = data.requires.labels.filter((l) => !labelMatches(l, labels));
  if (absent.length > 0) return `needs labels: ${absent.join(', ')}`;
  return undefined;
}

/** What a task asks for, as the master reads it from the job data. */
export interface TaskNeeds {
  workflow_name: string;
  requires: TaskRequirements;
}

/** The part of a worker view routing reads (a worker of an older version advertises nothing). */
type RoutableWorker = Pick<WorkerView, 'status' | 'draining'> & Partial<WorkerCapabilities>;

/**
 * Why no online worker can take a task, from what the workers advertise; undefined when one can
 * (the task only waits for a free slot). A worker that advertises nothing (older version) is
 * assumed able.
 */
export function waitingReason(task: TaskNeeds, workers: readonly RoutableWorker[]): string | undefined {
  const online = workers.filter((w) => w.status !== 'offline');
  if (online.length === 0) return 'no worker online';
  const taking = online.filter((w) => !w.draining);
  if (taking.length === 0) return 'every online worker is draining';
  const withWf = taking.filter((w) => !w.workflows || w.workflows.includes(task.workflow_name));
  if (withWf.length === 0) return `no online worker has workflow ${task.workflow_name}`;
  const { tools, labels } = task.requires;
  const withTools = withWf.filter((w) => !w.tools || tools.every((t) => w.tools!.includes(t)));
  if (withTools.length === 0) {
    const missing = tools.filter((t) => !withWf.some((w) => w.tools?.includes(t)));
    return `needs tools: ${(missing.length ? missing : tools).join(', ')}`;
  }
  const able = withTools.filter((w) => labels.every((l) => labelMatches(l, w.labels ?? [])));
  if (able.length === 0) {
    const missing = labels.filter((l) => !withTools.some((w) => labelMatches(l, w.labels ?? [])));
    return `needs labels: ${(missing.length ? missing : labels).join(', ')}`;
  }
  return undefined;
}

/** The needs of a job's data (tolerant: a job of an older master has no `requires`). */
export function needsOf(data: unknown): TaskNeeds | undefined {
  const d = data as { workflow_name?: unknown; requires?: unknown } | null;
  if (!d || typeof d.workflow_name !== 'string') return undefined;
  const r = taskRequirementsSchema.safeParse(d.requires ?? {});
  return { workflow_name: d.workflow_name, requires: r.success ? r.data : { tools: [], labels: [] } };
}

/** Waiting jobs read to explain the queue (health and run list warnings). */
const WARN_SCAN = 500;

/** Needs of waiting jobs by job id (a job's data never changes), kept by a master between calls. */
export type NeedsCache = Map<string, TaskNeeds | undefined>;

/** The needs of the waiting jobs (the first WARN_SCAN of each state); only jobs not in `cache` are read. */
async function waitingNeeds(queue: Queue, cache: NeedsCache): Promise<(TaskNeeds | undefined)[]> {
  const ids = (await queue.getRanges(['prioritized', 'waiting', 'delayed'], 0, WARN_SCAN - 1, true)).filter(Boolean);
  const missing = ids.filter((id) => !cache.has(id));
  if (missing.length > 0) {
    const client = await queue.client;
    // One pipelined round trip: only the data field of each job.
    const datas = await Promise.all(missing.map((id) => client.hget(queue.toKey(id), 'data')));
    missing.forEach((id, i) => {
      let data: unknown;
      try {
        data = JSON.parse(datas[i] ?? 'null');
      } catch {
        data = undefined;
      }
      // A job removed meanwhile has no data: not remembered, it is gone from the next listing.
      if (datas[i] !== null && datas[i] !== undefined) cache.set(id, needsOf(data));
    });
  }
  const keep = new Set(ids);
  for (const id of cache.keys()) if (!keep.has(id)) cache.delete(id);
  return ids.filter((id) => cache.has(id)).map((id) => cache.get(id));
}

/**
 * The warnings of GET /runs, GET /health and `osm health`: tasks waiting while no worker is
 * online, and tasks waiting that no online worker can take (grouped by reason). `cache` (a
 * master's) keeps the needs of jobs already read, so a busy queue polled often costs the job ids only.
 */
export async function queueWarnings(queue: Queue, workers: readonly RoutableWorker[], cache: NeedsCache = new Map()): Promise<string[]> {
  const c = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
  const waiting = (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
  if (waiting === 0) {
    cache.clear();
    return [];
  }
  if (!workers.some((w) => w.status !== 'offline')) return [`${waiting} distributed task(s) waiting and no worker online (start one with osm worker join)`];
  const byReason = new Map<string, number>();
  for (const needs of await waitingNeeds(queue, cache)) {
    const reason = needs ? waitingReason(needs, workers) : undefined;
    if (reason) byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  return [...byReason].map(([reason, n]) => `${n} distributed task(s) waiting that no online worker can take: ${reason}`);
}

/** The same warnings read straight from Redis (for `osm health`, which has no daemon to ask). */
export async function distributedWarnings(settings: LoadedSettings): Promise<string[]> {
  const config = resolveDistributedConfig(settings);
  const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix: config.prefix });
  queue.on('error', () => undefined);
  try {
    return await queueWarnings(queue, await listWorkerViews(await queue.client, queue, config.prefix));
  } finally {
    await queue.close();
  }
}

/**
 * Delay before a given-back task is offered again (short: a capable worker should not wait for
 * it), and the pause of the refusing worker's slot after a give-back (what stops the spinning:
 * a paused slot does not fetch, so a capable worker gets the next offer).
 */
const RETRY_DELAY_MS = { first: 250, max: 1000 };
const PAUSE_MS = { first: 100, max: 2000 };
const REFUSED_KEPT = 10;

/**
 * A worker's side of routing: what it advertises, whether it can take a task, and giving back
 * one it cannot (no attempt used, growing delays so nothing spins).
 */
export class RoutingGate {
  private caps: WorkerCapabilities;
  private readonly refusedCount = new Map<string, number>();
  private refused: RefusedTask[] = [];
  private streak = 0;

  constructor(
    private readonly app: AppContext,
    private readonly labels: string[],
  ) {
    this.caps = scanCapabilities(app, labels);
  }

  /** Re-reads the workflows folder and PATH (workflows and tools may be installed while the worker runs). */
  refresh(): void {
    try {
      this.caps = scanCapabilities(this.app, this.labels);
    } catch {
      // keep the previous scan
    }
  }

  /** The fields of the registry entry. */
  advertised(): WorkerCapabilities & { refused: RefusedTask[] } {
    return { ...this.caps, refused: this.refused };
  }

  /** Why this worker cannot take the task, or undefined (and the give-back streak resets). */
  check(data: TaskData): string | undefined {
    const reason = unmetRequirement(this.app, data, this.labels);
    if (!reason) {
      this.streak = 0;
      this.refusedCount.delete(data.run_uuid);
    }
    return reason;
  }

  /**
   * Gives a task back: delayed (BullMQ's moveToDelayed keeps the attempt count), recorded in the
   * entry, then this processor slot pauses so a worker that can take nothing does not spin on the
   * queue. The caller throws DelayedError afterwards.
   */
  async giveBack(job: Job, token: string | undefined, reason: string): Promise<void> {
    const uuid = String(job.id);
    const n = (this.refusedCount.get(uuid) ?? 0) + 1;
    if (this.refusedCount.size > 10_000) this.refusedCount.clear();
    this.refusedCount.set(uuid, n);
    await job.moveToDelayed(Date.now() + Math.min(RETRY_DELAY_MS.max, RETRY_DELAY_MS.first * 2 ** (n - 1)), token);
    this.refused = [{ run_uuid: uuid, reason, at: new Date().toISOString() }, ...this.refused.filter((r) => r.run_uuid !== uuid)].slice(0, REFUSED_KEPT);
    const pause = Math.min(PAUSE_MS.max, PAUSE_MS.first * 2 ** this.streak);
    this.streak = Math.min(this.streak + 1, 10);
    await new Promise((r) => setTimeout(r, pause));
  }
}
