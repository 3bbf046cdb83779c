/**
 * The rows a worker ships for an attempt (ship-rows.ts): read a page at a time and sent as fenced
 * `rows` records of at most ROWS_PER_RECORD — every asset and finding the attempt created or saw,
 * once, in order, nothing older or from another workspace — and at most MAX_SHIPPED_ROWS per
 * table, beyond which the result says `capped`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext, type SqliteAppContext } from '../../src/services/context.js';
import { QUEUE_NAME } from '../../src/distributed/keys.js';
import { attemptKey, lockKey, MAX_SHIPPED_ROWS, recordsKey, ROWS_PER_RECORD, type RowsRecord } from '../../src/distributed/records.js';
import { connectionOptions, parseRedisUrl } from '../../src/distributed/redis-config.js';
import { shipRows } from '../../src/distributed/ship-rows.js';
import { nowIso } from '../../src/store/sql.js';
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from './helpers.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('rows shipped by a worker', () => {
  const prefix = testPrefix();
  let queue: Queue;
  let app: SqliteAppContext;
  let base: string;
  let redis: Redis;

  beforeAll(async () => {
    queue = new Queue(QUEUE_NAME, { connection: connectionOptions(parseRedisUrl(REDIS_URL)), prefix });
    await queue.waitUntilReady();
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    app = createAppContext({ baseFolder: base });
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    app?.close();
    redis?.disconnect();
    await queue?.close();
    await dropPrefix(prefix);
    fs.rmSync(base, { recursive: true, force: true });
  });

  const asset = (name: string) => ({ asset_value: name, url: `https://${name}/`, asset_type: 'url', status_code: 200, title: name });

  /** A run of the attempt in the worker's database, holding the job lock. */
  async function attemptOf(workspace: string): Promise<{ uuid: string; client: Awaited<Queue['client']> }> {
    const uuid = randomUUID();
    app.store.runs.create({ run_uuid: uuid, workflow_name: 'w', workflow_kind: 'module', target: 'x', status: 'running', workspace, trigger_type: 'distributed', run_mode: 'distributed', priority: 'normal', params: {} });
    const client = await queue.client;
    await client.set(lockKey(prefix, uuid), 'token');
    await client.set(attemptKey(prefix, uuid), '1');
    return { uuid, client };
  }

  /** The run's rows records in the stream, in order. */
  async function shipped(uuid: string): Promise<RowsRecord[]> {
    const entries = await redis.xrange(recordsKey(prefix), '-', '+');
    return entries
      .map(([, fields]) => JSON.parse(fields[fields.indexOf('rec') + 1]!) as RowsRecord)
      .filter((r) => r.run_uuid === uuid && r.kind === 'rows');
  }

  const w = () => ({ app, prefix, workerId: 'w-rows', log: () => undefined });

  it('every row the attempt touched travels once, in records of at most 500, pages after pages; older rows and other workspaces stay', async () => {
    app.store.assets.upsertMany('ws-a', [asset('old-1.example.com'), asset('old-2.example.com')]);
    await new Promise((r) => setTimeout(r, 20));
    const since = nowIso();
    await new Promise((r) => setTimeout(r, 5));
    const fresh = Array.from({ length: 12_345 }, (_, i) => asset(`h${i}.example.com`));
    app.store.assets.upsertMany('ws-a', fresh);
    app.store.assets.upsertMany('ws-b', [asset('elsewhere.example.com')]);
    app.store.vulns.upsertMany('ws-a', [{ template_id: 't-1', vuln_info: 'one', asset_value: 'h1.example.com', severity: 'high' }]);

    const { uuid, client } = await attemptOf('ws-a');
    const out = await shipRows(w(), client, 'token', 1, uuid, since);
    expect(out).toEqual({ rows: 12_346, capped: false });

    const recs = await shipped(uuid);
    expect(recs.map((r) => r.seq)).toEqual(recs.map((_, i) => i));
    expect(recs.every((r) => r.rows.length > 0 && r.rows.length <= ROWS_PER_RECORD && r.workspace === 'ws-a')).toBe(true);
    const assets = recs.filter((r) => r.table === 'assets').flatMap((r) => r.rows.map((row) => row.asset_value as string));
    expect(assets).toHaveLength(fresh.length);
    expect(new Set(assets)).toEqual(new Set(fresh.map((a) => a.asset_value)));
    const vulns = recs.filter((r) => r.table === 'vulnerabilities').flatMap((r) => r.rows);
    expect(vulns.map((v) => v.template_id)).toEqual(['t-1']);
    // Rows travel without the worker's ids and timestamps (the master's own).
    expect(Object.keys(recs[0]!.rows[0]!)).not.toContain('id');

    // A refused attempt (the lock is another's) ships nothing more.
    await client.set(lockKey(prefix, uuid), 'other');
    expect(await shipRows(w(), client, 'token', 1, uuid, since)).toBeUndefined();
  });

  it(`beyond ${MAX_SHIPPED_ROWS} rows of a table the rest stays on the worker and the result says capped`, async () => {
    const since = nowIso();
    await new Promise((r) => setTimeout(r, 5));
    app.store.assets.upsertMany('ws-big', Array.from({ length: MAX_SHIPPED_ROWS + 7 }, (_, i) => asset(`b${i}.example.org`)));
    const { uuid, client } = await attemptOf('ws-big');
    expect(await shipRows(w(), client, 'token', 1, uuid, since)).toEqual({ rows: MAX_SHIPPED_ROWS, capped: true });
    const recs = await shipped(uuid);
    expect(recs).toHaveLength(MAX_SHIPPED_ROWS / ROWS_PER_RECORD);
    const names = recs.flatMap((r) => r.rows.map((row) => row.asset_value as string));
    expect(new Set(names).size).toBe(MAX_SHIPPED_ROWS);
  }, 120_000);
});
