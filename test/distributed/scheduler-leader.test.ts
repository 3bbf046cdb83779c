/**
 * One scheduler per Redis prefix (src/distributed/scheduler-leader.ts), in process with a short
 * lock lifetime: of two masters exactly one runs its scheduler (the other's has no trigger
 * registered and says standby); a clean stop hands over at once; a leader cut off from Redis
 * steps down before a standby takes over, so at no sampled instant do both run. The real CLI
 * (two `osm serve --master`) is in cli-leader.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAppContext, type SqliteAppContext as AppContext } from '../../src/services/context.js';
import { startLeaderScheduler } from '../../src/distributed/scheduler-leader.js';
import { resolveDistributedConfig } from '../../src/distributed/redis-config.js';
import { liveScheduler } from '../../src/scheduler/live.js';
import { createSchedule } from '../../src/services/schedules.js';
import { receiverStatus } from '../../src/services/events.js';
import { tempDir } from '../helpers/tmp.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix, until } from './helpers.js';

const hasRedis = await redisAvailable();
const prefix = testPrefix();
const TTL = 1200;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(async () => {
  if (hasRedis) await dropPrefix(prefix);
});

/** A master's app context with one enabled cron schedule, and its leader-gated scheduler. */
async function master(name: string, p = prefix) {
  const { dir, cleanup } = tempDir();
  const app: AppContext = createAppContext({ baseFolder: dir });
  await createSchedule(app, { name: `nightly-${name}`, workflow_name: 'sample-recon', trigger_type: 'cron', schedule: '0 5 * * *', target: 'example.com' });
  const logs: string[] = [];
  const config = resolveDistributedConfig(app.settings(), { redisUrl: REDIS_URL, prefix: p });
  const handle = await startLeaderScheduler(app, config, { ttlMs: TTL, log: (msg) => logs.push(msg) });
  cleanups.push(() => {
    app.close();
    cleanup();
  });
  cleanups.push(() => handle.stop());
  return { app, handle, logs, leading: () => handle.leader.isLeader };
}

describe.skipIf(!hasRedis)('scheduler leader lock', () => {
  it('of two masters on one prefix exactly one runs its scheduler; the other is a standby', async () => {
    const a = await master('a');
    const b = await master('b');
    expect(a.leading()).toBe(true); // first come
    expect(b.leading()).toBe(false);
    const sa = receiverStatus(a.app);
    const sb = receiverStatus(b.app);
    expect(sa).toMatchObject({ running: true, trigger_count: 1, scheduler_leader: { role: 'leader', lock_key: `${prefix}:scheduler-leader`, holder: a.handle.leader.id } });
    expect(sb).toMatchObject({ running: false, trigger_count: 0, scheduler_leader: { role: 'standby', holder: a.handle.leader.id } });
    expect(liveScheduler(b.app)).toBeUndefined();
    expect(b.logs).toContain('scheduler: standby, another master runs the schedules of this Redis prefix');

    // A clean stop releases the lock: the standby takes over at its next tick.
    await a.handle.stop();
    await until(() => b.leading(), 'the standby to take over');
    expect(receiverStatus(b.app)).toMatchObject({ running: true, trigger_count: 1, scheduler_leader: { role: 'leader' } });
  });

  it('a leader that cannot reach Redis steps down before the standby takes over', async () => {
    const p = testPrefix();
    cleanups.push(() => dropPrefix(p));
    const a = await master('a', p);
    const b = await master('b', p);
    expect([a.leading(), b.leading()]).toEqual([true, false]);
    let both = 0;
    const sampler = setInterval(() => {
      if (liveScheduler(a.app) && liveScheduler(b.app)) both++;
    }, 20);
    cleanups.push(() => clearInterval(sampler));
    // Cut the leader's connection, as a network partition would: it can no longer renew.
    (a.handle.leader as unknown as { lock: { close(): void } }).lock.close();
    await until(() => b.leading(), 'the standby to take over');
    clearInterval(sampler);
    expect(a.leading()).toBe(false);
    expect(liveScheduler(a.app)).toBeUndefined();
    expect(a.logs).toContain('scheduler: stopped, the scheduler lock could not be renewed');
    expect(both).toBe(0);
  });
});
