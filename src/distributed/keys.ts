/**
 * Names and timings of distributed mode. The task queue itself is BullMQ's (`<prefix>:osm-tasks:*`
 * keys, written only by BullMQ's scripts); osm adds two small things next to it: a hash of worker
 * details and one short-lived cancellation flag per cancelled active task.
 */

/** The BullMQ queue every master and worker of one prefix shares. */
export const QUEUE_NAME = 'osm-tasks';

/** Default key prefix (`redis.prefix` in settings, `OSM_REDIS_PREFIX`, `--redis-prefix`). */
export const DEFAULT_PREFIX = 'osm';

/** Workers refresh their entry this often. */
export const HEARTBEAT_MS = 10_000;

/** A worker whose last heartbeat is older than this is shown offline. */
export const OFFLINE_AFTER_MS = 30_000;

/** Entries of workers offline for longer than this are pruned from the hash. */
export const PRUNE_AFTER_MS = 24 * 60 * 60 * 1000;

/** How long a cancellation flag lives (a worker polls it every second while the task runs). */
export const CANCEL_FLAG_TTL_S = 24 * 60 * 60;

/** How often a worker looks for cancellation flags of its running tasks and reports progress. */
export const WORKER_POLL_MS = 1000;

/** The hash of worker details: worker id → WorkerEntry JSON. */
export function workersKey(prefix: string): string {
  return `${prefix}:workers`;
}

/** The cancellation flag of one task. */
export function cancelKey(prefix: string, runUuid: string): string {
  return `${prefix}:cancel:${runUuid}`;
}

/** A prefix is used inside Redis key names: keep it to a safe alphabet. */
export function isValidPrefix(prefix: string): boolean {
  return /^[A-Za-z0-9._-]{1,64}$/.test(prefix);
}

/** The scheduler lock of a prefix: held (with an expiry) by the one master whose scheduler runs. */
export function schedulerLeaderKey(prefix: string): string {
  return `${prefix}:scheduler-leader`;
}

/** How long the scheduler lock lives without renewal; the leader renews it every third of that. */
export const SCHEDULER_LOCK_TTL_MS = 15_000;

/** Default `distributed.lease_seconds`: how long a worker that stops renewing keeps its task at most. */
export const DEFAULT_LEASE_S = 30;
