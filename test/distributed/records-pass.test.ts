/**
 * The master applies a batch of attempt records in one transaction. When that fails, the batch is
 * applied record by record up to the first record that fails: the ones before it are recorded and
 * acknowledged, that one and the rest stay in the stream and are applied at a later read. Nothing
 * is lost and nothing is recorded twice.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSqliteTestServer, type SqliteTestServer } from '../helpers/server.js';
import { DistributedMaster } from '../../src/distributed/master.js';
import { recordsKey } from '../../src/distributed/records.js';
import { PROTOCOL_VERSION } from '../../src/distributed/protocol.js';
import { resolveDistributedConfig } from '../../src/distributed/redis-config.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from './helpers.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('a batch of attempt records', () => {
  const prefix = testPrefix();
  let t: SqliteTestServer;
  let master: DistributedMaster;
  let redis: Redis;

  beforeAll(async () => {
    t = await makeSqliteTestServer();
    const config = resolveDistributedConfig(t.app.settings(), { redisUrl: REDIS_URL, prefix });
    // Records are read when the test says so (no timers in the way).
    master = new DistributedMaster(t.app, { config, attempts: 1, sweepMs: 600_000, recordsMs: 600_000 });
    await master.start();
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await master?.stop();
    await t?.close();
    redis?.disconnect();
    await dropPrefix(prefix);
  });

  const forge = (rec: Record<string, unknown>) => redis.xadd(recordsKey(prefix), '*', 'attempt', '1', 'rec', JSON.stringify(rec));
  const start = (uuid: string) => ({ v: PROTOCOL_VERSION, kind: 'start', run_uuid: uuid, worker_id: 'w1', at: new Date().toISOString(), attempts_made: 0, stalled: 0 });
  const end = (uuid: string) => ({ v: PROTOCOL_VERSION, kind: 'end', run_uuid: uuid, worker_id: 'w1', at: new Date().toISOString(), outcome: 'error', error: `boom ${uuid}`, final: true });

  it('a record that cannot be applied stops the batch there; the ones before it are recorded, the rest wait', async () => {
    const runs = ['a', 'b', 'c'].map((n) => t.app.store.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: `${n}.pass.example.com`, workspace: `${n}.pass.example.com`, status: 'queued', run_mode: 'distributed' }));
    for (const r of runs) {
      await forge(start(r.run_uuid));
      await forge(end(r.run_uuid));
    }
    // The end of run b cannot be written (a busy database, say) until the patch is removed.
    const attempts = t.app.repos.attempts;
    const realEnd = attempts.end;
    attempts.end = async (...args: Parameters<typeof realEnd>) => {
      if (args[0] === runs[1]!.run_uuid) throw new Error('database is locked');
      return realEnd(...args);
    };
    try {
      await master.consume();
    } finally {
      attempts.end = realEnd;
    }
    const status = () => runs.map((r) => t.app.store.runs.get(r.id)!.status);
    // a recorded (failed, with its attempt ended); b started but its end waits; c untouched.
    expect(status()).toEqual(['failed', 'running', 'queued']);
    expect(t.app.store.attempts.listByRun(runs[0]!.run_uuid).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'error']]);
    expect(t.app.store.attempts.listByRun(runs[1]!.run_uuid).map((a) => [a.attempt, a.ended_at])).toEqual([[1, null]]);
    expect(await redis.xlen(recordsKey(prefix))).toBe(3);

    // The next read applies the rest, in one go: every run recorded once.
    await master.consume();
    expect(status()).toEqual(['failed', 'failed', 'failed']);
    expect(await redis.xlen(recordsKey(prefix))).toBe(0);
    for (const r of runs) {
      expect(t.app.store.attempts.listByRun(r.run_uuid).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'error']]);
      expect(t.app.store.runs.get(r.id)!.error_message).toBe(`boom ${r.run_uuid}`);
      const failedEvents = t.app.store.events.list({ run_id: r.run_uuid }, { limit: 50, offset: 0 }).data.filter((e) => e.topic === 'run.failed');
      expect(failedEvents).toHaveLength(1);
    }
  });
});
