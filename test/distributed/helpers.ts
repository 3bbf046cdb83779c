/**
 * Shared set-up of the distributed tests: a Redis check (skip with a visible message locally,
 * fail on CI), a unique key prefix per test file with cleanup, small workflows, polling.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { expect } from 'vitest';
import type { SqliteAppContext as AppContext } from '../../src/services/context.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { connectionOptions, type DistributedConfig } from '../../src/distributed/redis-config.js';

export const REDIS_URL = process.env.OSM_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** True when the local Redis answers PING; on CI an unreachable Redis is a failure, not a skip. */
export async function redisAvailable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch (err) {
    if (process.env.CI === 'true') throw new Error(`Redis is required on CI for the distributed tests (${REDIS_URL}): ${(err as Error).message}`);
    console.warn(`[distributed tests] Redis not reachable at ${REDIS_URL}: skipping (set up Redis to run them)`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** A key prefix no other test uses. */
export function testPrefix(): string {
  return `osm-test-${randomBytes(5).toString('hex')}`;
}

/** Deletes every key of a prefix. */
export async function dropPrefix(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** Number of keys of a prefix. */
export async function countKeys(prefix: string): Promise<number> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return (await client.keys(`${prefix}:*`)).length;
  } finally {
    client.disconnect();
  }
}

/** Writes small modules that run with coreutils only. */
export function writeWorkflows(dir: string, names: ('quick' | 'slow' | 'broken' | 'marker')[] = ['quick', 'slow', 'broken', 'marker']): void {
  fs.mkdirSync(path.join(dir, 'modules'), { recursive: true });
  const mod = (name: string, steps: string) => fs.writeFileSync(path.join(dir, 'modules', `${name}.yaml`), `kind: module\nname: ${name}\ndescription: test ${name}\nsteps:\n${steps}`);
  const all: Record<string, string> = {
    quick: '  - name: hello\n    type: bash\n    command: echo "hello {{Target}}"\n  - name: bye\n    type: bash\n    command: echo bye\n',
    slow: '  - name: first\n    type: bash\n    command: echo first\n  - name: nap\n    type: bash\n    command: sleep {{nap}} && echo rested\n  - name: last\n    type: bash\n    command: echo last\n',
    broken: '  - name: ok\n    type: bash\n    command: echo fine\n  - name: boom\n    type: bash\n    command: exit 3\n',
    marker: '  - name: touch\n    type: bash\n    command: touch "{{Output}}/MARKER-RAN" && echo ran {{Target}}\n',
  };
  for (const n of names) mod(n, all[n]!);
  if (names.includes('slow')) {
    // `nap` is a param with a default, so tasks can choose how long the middle step takes.
    const file = path.join(dir, 'modules', 'slow.yaml');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('steps:\n', 'params:\n  - name: nap\n    default: "1"\nsteps:\n'));
  }
}

/** Polls `fn` until it returns a truthy value (bounded, so a hang fails instead of blocking). */
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 45_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? ` (last error: ${(lastErr as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops the in-process workers of a test (gracefully) and closes their app contexts; empties the list. */
export async function stopInProcess(list: { worker: { stop(): Promise<void> }; app: { close(): void } }[]): Promise<void> {
  for (const { worker, app } of list.splice(0)) {
    await worker.stop();
    app.close();
  }
}

/** Direct children of a process (Linux /proc). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** True while any process of the group `pgid` is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Each run is completed on the master exactly once: one attempt, one `run.completed`, its steps once. */
export function expectCompletedOnce(app: AppContext, uuids: string[], steps: string[]): void {
  for (const uuid of uuids) {
    const run = app.store.runs.getByUuid(uuid)!;
    expect(run.status, `${uuid}: ${run.error_message}`).toBe('completed');
    expect(app.store.attempts.listByRun(uuid).map((a) => [a.attempt, a.outcome]), JSON.stringify(app.store.attempts.listByRun(uuid))).toEqual([[1, 'completed']]);
    expect(app.store.events.list({ run_id: uuid, topic: 'run.completed' }, { offset: 0, limit: 10 }).total).toBe(1);
    expect(app.store.steps.listByRun(run.id).map((s) => s.step_name)).toEqual(steps);
  }
}

/** Jobs of the queue still to run (active, waiting, prioritized or delayed). */
export async function pendingJobs(config: DistributedConfig): Promise<number> {
  const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix: config.prefix });
  try {
    const c = await queue.getJobCounts('active', 'wait', 'prioritized', 'delayed');
    return c.active + c.wait + c.prioritized + c.delayed;
  } finally {
    await queue.close();
  }
}
