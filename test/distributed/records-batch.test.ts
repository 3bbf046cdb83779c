/**
 * Records written in one round trip (`recordMany`): fenced like a single record (the job lock is
 * the worker's token and the attempt counter is the attempt's number), all or none, in order.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { PROTOCOL_VERSION } from '../../src/distributed/protocol.js';
import { attemptKey, lockKey, readRecords, recordMany, type EndRecord, type FileRecord } from '../../src/distributed/records.js';
import { connectionOptions, parseRedisUrl } from '../../src/distributed/redis-config.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from './helpers.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('recordMany', () => {
  const prefix = testPrefix();
  let queue: Queue;

  beforeAll(async () => {
    queue = new Queue(QUEUE_NAME, { connection: connectionOptions(parseRedisUrl(REDIS_URL)), prefix });
    await queue.waitUntilReady();
  });

  afterAll(async () => {
    await queue?.close();
    await dropPrefix(prefix);
  });

  const chunk = (uuid: string, path: string, offset: number): FileRecord => ({
    v: PROTOCOL_VERSION, kind: 'file', run_uuid: uuid, worker_id: 'w', at: new Date().toISOString(), workspace: 'ws', path, offset, data: Buffer.from(`${path}@${offset}`).toString('base64'), eof: offset > 0,
  });

  it('writes every record in order under the lock and the attempt; refuses all of them otherwise', async () => {
    const client = await queue.client;
    const uuid = randomUUID();
    await client.set(lockKey(prefix, uuid), 'token-1');
    await client.set(attemptKey(prefix, uuid), '2');
    const recs = [chunk(uuid, 'logs/a', 0), chunk(uuid, 'logs/a', 5), chunk(uuid, 'report.txt', 0)];

    expect(await recordMany(client, prefix, 'token-1', 2, recs)).toBe(true);
    const read = (await readRecords(client, prefix, 100)).filter((e) => e.record?.run_uuid === uuid);
    expect(read.map((e) => [e.record!.attempt, (e.record as FileRecord).path, (e.record as FileRecord).offset])).toEqual([
      [2, 'logs/a', 0],
      [2, 'logs/a', 5],
      [2, 'report.txt', 0],
    ]);

    // Another worker's token, or an attempt that is no longer the latest: nothing at all.
    expect(await recordMany(client, prefix, 'token-2', 2, recs)).toBe(false);
    expect(await recordMany(client, prefix, 'token-1', 1, recs)).toBe(false);
    await client.del(lockKey(prefix, uuid));
    expect(await recordMany(client, prefix, 'token-1', 2, recs)).toBe(false);
    expect((await readRecords(client, prefix, 100)).filter((e) => e.record?.run_uuid === uuid)).toHaveLength(3);

    expect(await recordMany(client, prefix, 'token-1', 2, [])).toBe(true);
    await expect(recordMany(client, prefix, 'token-1', 2, [chunk(uuid, 'x', 0), chunk(randomUUID(), 'y', 0)])).rejects.toThrow(/one run only/);
  });

  it('carries the attempt\'s end record after its last file chunks, in the same fenced call', async () => {
    const client = await queue.client;
    const uuid = randomUUID();
    await client.set(lockKey(prefix, uuid), 'token-1');
    await client.set(attemptKey(prefix, uuid), '1');
    const end: EndRecord = { v: PROTOCOL_VERSION, kind: 'end', run_uuid: uuid, worker_id: 'w', at: new Date().toISOString(), outcome: 'error', error: 'boom', final: true };
    expect(await recordMany(client, prefix, 'token-1', 1, [chunk(uuid, 'logs/j', 0), end])).toBe(true);
    const read = (await readRecords(client, prefix, 100)).filter((e) => e.record?.run_uuid === uuid);
    expect(read.map((e) => e.record!.kind)).toEqual(['file', 'end']);
    expect(read[1]!.record).toMatchObject({ kind: 'end', attempt: 1, outcome: 'error', error: 'boom' });
    // Refused together: a stale attempt's end never arrives without (or with) its chunks.
    expect(await recordMany(client, prefix, 'token-1', 0, [chunk(uuid, 'logs/j', 0), end])).toBe(false);
  });
});
