/**
 * Worker details in Redis. Liveness comes from BullMQ itself where it can: `queue.getWorkers()`
 * lists the Redis connections of named workers (a killed worker's connections vanish at once).
 * The hash `<prefix>:workers` only adds what BullMQ does not keep: hostname, join time, counters,
 * the task in hand and a heartbeat (every 10 s; a worker silent for 30 s is shown offline).
 */
import type { Queue } from 'bullmq';
import { OFFLINE_AFTER_MS, PRUNE_AFTER_MS, workersKey } from './keys.js';

export type WorkerStatus = 'idle' | 'busy' | 'offline';

/** What a worker writes about itself. */
export interface WorkerEntry {
  id: string;
  /** Random per process: tells a restarted worker from a second one using the same name. */
  instance: string;
  hostname: string;
  pid: number;
  status: WorkerStatus;
  current_tasks: string[];
  concurrency: number;
  joined_at: string;
  last_heartbeat: string;
  tasks_complete: number;
  tasks_failed: number;
  version: string;
  /** `osm worker drain`: finishes the tasks in hand, takes no new ones. */
  draining?: boolean;
  /** Routing labels (docs/distributed.md "Routing"): workflow names in its folder, tools found, custom labels. */
  workflows?: string[];
  tools?: string[];
  labels?: string[];
  /** The latest tasks it fetched and gave back, with why (newest first, bounded). */
  refused?: RefusedTask[];
}

/** A task a worker gave back because it cannot satisfy it. */
export interface RefusedTask {
  run_uuid: string;
  reason: string;
  at: string;
}

/** A worker as the API and `osm worker status` show it. */
export interface WorkerView {
  id: string;
  hostname: string;
  status: WorkerStatus;
  current_task: string | null;
  current_tasks: string[];
  concurrency: number;
  joined_at: string;
  last_heartbeat: string;
  tasks_complete: number;
  tasks_failed: number;
  /** Takes no new tasks (`osm worker drain`). */
  draining: boolean;
  /** Names of the workflows in the worker's folder. */
  workflows: string[];
  /** Commands the installed workflows depend on that the worker has (PATH or binaries folder). */
  tools: string[];
  /** Custom labels (`osm worker join --label`). */
  labels: string[];
  /** Tasks it recently gave back because it cannot satisfy them (newest first). */
  refused: RefusedTask[];
}

/** The hash commands used here (BullMQ's client abstraction, `await queue.client`). */
export interface HashClient {
  hset(key: string, data: Record<string, string | number>): Promise<unknown>;
  hget(key: string, field: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, ...fields: string[]): Promise<unknown>;
}

/** Writes (replaces) a worker's entry. */
export async function writeWorkerEntry(client: HashClient, prefix: string, entry: WorkerEntry): Promise<void> {
  await client.hset(workersKey(prefix), { [entry.id]: JSON.stringify(entry) });
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

function parseEntry(id: string, text: string | null | undefined): WorkerEntry | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<WorkerEntry>;
    if (!v || typeof v !== 'object') return undefined;
    return {
      id,
      instance: String(v.instance ?? ''),
      hostname: String(v.hostname ?? ''),
      pid: Number(v.pid ?? 0),
      status: v.status === 'busy' || v.status === 'offline' ? v.status : 'idle',
      current_tasks: Array.isArray(v.current_tasks) ? v.current_tasks.map(String) : [],
      concurrency: Number(v.concurrency ?? 1),
      joined_at: String(v.joined_at ?? ''),
      last_heartbeat: String(v.last_heartbeat ?? ''),
      tasks_complete: Number(v.tasks_complete ?? 0),
      tasks_failed: Number(v.tasks_failed ?? 0),
      version: String(v.version ?? ''),
      draining: v.draining === true,
      workflows: strings(v.workflows),
      tools: strings(v.tools),
      labels: strings(v.labels),
      refused: Array.isArray(v.refused)
        ? v.refused.filter((r) => r && typeof r === 'object').map((r) => ({ run_uuid: String(r.run_uuid ?? ''), reason: String(r.reason ?? ''), at: String(r.at ?? '') }))
        : [],
    };
  } catch {
    return undefined;
  }
}

/** One worker's entry as written, if any. */
export async function readWorkerEntry(client: HashClient, prefix: string, id: string): Promise<WorkerEntry | undefined> {
  return parseEntry(id, await client.hget(workersKey(prefix), id));
}

/**
 * Names of workers with a live Redis connection (BullMQ names a worker's connections
 * `<prefix>:<queue>:w:<name>`); undefined when the server does not allow CLIENT LIST.
 */
export async function liveWorkerNames(queue: Queue): Promise<Set<string> | undefined> {
  try {
    const clients = await queue.getWorkers();
    const names = new Set<string>();
    for (const c of clients) {
      const raw = String(c.rawname ?? '');
      const at = raw.indexOf(':w:');
      if (at >= 0) names.add(raw.slice(at + 3));
      else if (!raw && String(c.name ?? '').includes('does not support')) return undefined;
    }
    return names;
  } catch {
    return undefined;
  }
}

/** Status as shown: offline when the worker said so, its heartbeat is stale, or its connection is gone. */
export function effectiveStatus(e: WorkerEntry, now: number, live: Set<string> | undefined): WorkerStatus {
  if (e.status === 'offline') return 'offline';
  const hb = Date.parse(e.last_heartbeat);
  if (!Number.isFinite(hb) || now - hb > OFFLINE_AFTER_MS) return 'offline';
  if (live && !live.has(e.id)) return 'offline';
  return e.status;
}

/** An entry as shown. */
export function workerView(e: WorkerEntry, status: WorkerStatus): WorkerView {
  const current = status === 'offline' ? [] : e.current_tasks;
  return {
    id: e.id,
    hostname: e.hostname,
    status,
    current_task: current[0] ?? null,
    current_tasks: current,
    concurrency: e.concurrency,
    joined_at: e.joined_at,
    last_heartbeat: e.last_heartbeat,
    tasks_complete: e.tasks_complete,
    tasks_failed: e.tasks_failed,
    draining: e.draining === true && status !== 'offline',
    workflows: e.workflows ?? [],
    tools: e.tools ?? [],
    labels: e.labels ?? [],
    refused: e.refused ?? [],
  };
}

/**
 * Every known worker, oldest first; entries offline for more than a day are pruned so the
 * hash cannot grow without bound.
 */
export async function listWorkerViews(client: HashClient, queue: Queue, prefix: string, now = Date.now()): Promise<WorkerView[]> {
  const [all, live] = await Promise.all([client.hgetall(workersKey(prefix)), liveWorkerNames(queue)]);
  const views: WorkerView[] = [];
  const stale: string[] = [];
  for (const [id, text] of Object.entries(all ?? {})) {
    const e = parseEntry(id, text);
    if (!e) {
      stale.push(id);
      continue;
    }
    const status = effectiveStatus(e, now, live);
    const hb = Date.parse(e.last_heartbeat);
    if (status === 'offline' && (!Number.isFinite(hb) || now - hb > PRUNE_AFTER_MS)) {
      stale.push(id);
      continue;
    }
    views.push(workerView(e, status));
  }
  if (stale.length > 0) await client.hdel(workersKey(prefix), ...stale);
  return views.sort((a, b) => a.joined_at.localeCompare(b.joined_at) || a.id.localeCompare(b.id));
}

/** One worker as shown, or undefined. */
export async function getWorkerView(client: HashClient, queue: Queue, prefix: string, id: string, now = Date.now()): Promise<WorkerView | undefined> {
  const e = await readWorkerEntry(client, prefix, id);
  if (!e) return undefined;
  return workerView(e, effectiveStatus(e, now, await liveWorkerNames(queue)));
}
