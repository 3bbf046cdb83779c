/**
 * The PostgreSQL query layer: placeholders, transactions routed to their client, and
 * connection-level failures surfacing as one typed 503 error naming the server.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OsmError } from '../../../../src/errors.js';
import { isConnectionError, isReadOnly, named, pgDb, positional, type PgDb } from '../../../../src/store/pg/db.js';
import { openPgStore } from '../../../../src/store/pg/store.js';
import { withPatience } from '../../../../src/store/patience.js';
import { createPgDatabase, pgAvailable, PG_ADMIN_URL, type PgDatabase } from '../../../helpers/pg.js';
import { createServer } from 'node:net';

describe('placeholders', () => {
  it('numbers ? in order and @names once each', () => {
    expect(positional('SELECT ? + ?, ?')).toBe('SELECT $1 + $2, $3');
    expect(named('UPDATE t SET a = @a, b = @b WHERE a = @a', { a: 1, b: 2, c: 3 })).toEqual({ text: 'UPDATE t SET a = $1, b = $2 WHERE a = $1', params: [1, 2] });
    expect(() => named('SELECT @missing', {})).toThrow(/@missing/);
  });

  it('tells a read (sent again after a lost connection) from a write, however a CTE ends', () => {
    expect(isReadOnly('SELECT * FROM runs WHERE id = $1')).toBe(true);
    expect(isReadOnly('WITH x AS (SELECT 1) SELECT * FROM x')).toBe(true);
    expect(isReadOnly('SELECT 1 FROM runs WHERE id = $1 FOR UPDATE')).toBe(true);
    expect(isReadOnly('SELECT updated_at FROM runs')).toBe(true);
    // Data-modifying CTEs end with a SELECT of their rows: they are writes.
    expect(isReadOnly('WITH s AS (UPDATE step_results SET status = $1 RETURNING *), e AS (INSERT INTO event_logs (topic) VALUES ($2)) SELECT * FROM s')).toBe(false);
    expect(isReadOnly('WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d')).toBe(false);
    expect(isReadOnly('INSERT INTO t VALUES (1)')).toBe(false);
    expect(isReadOnly('UPDATE runs SET status = $1')).toBe(false);
  });

  it('tells connection failures from query errors', () => {
    expect(isConnectionError({ code: 'ECONNREFUSED' })).toBe(true);
    expect(isConnectionError({ code: '57P01' })).toBe(true);
    expect(isConnectionError({ code: '08006' })).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError({ code: '23505' })).toBe(false);
    expect(isConnectionError({ code: '42P01' })).toBe(false);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('PostgreSQL unavailable', () => {
  it('opening a store on a closed port fails with a 503 naming host:port', async () => {
    const port = await closedPort();
    const err = await openPgStore(`postgresql://osm@127.0.0.1:${port}/osm`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OsmError);
    expect(err).toMatchObject({ code: 'OSM_ERR_UNAVAILABLE', status: 503 });
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    expect((err as Error).message).toMatch(/connection refused/);
  });
});

const available = await pgAvailable('pg query layer');

describe.runIf(available)('PostgreSQL query layer', () => {
  let database: PgDatabase;
  let pool: pg.Pool;
  let db: PgDb;
  beforeAll(async () => {
    database = await createPgDatabase('osm_layer');
    pool = new pg.Pool({ connectionString: database.url, max: 3 });
    pool.on('error', () => undefined);
    db = pgDb(pool, 'test-host:5432');
    await db.query('CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it('routes a transaction’s queries to one client and rolls back on failure', async () => {
    await expect(
      db.tx(async () => {
        await db.query('INSERT INTO t VALUES (?, ?)', [1, 'a']);
        expect(db.inTx()).toBe(true);
        // Another async context does not see the uncommitted row.
        const outside = await new Promise((resolve) => setImmediate(() => resolve(pool.query('SELECT COUNT(*)::int AS n FROM t'))));
        expect((outside as pg.QueryResult).rows[0].n).toBe(0);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await db.one('SELECT COUNT(*) AS n FROM t'))?.n).toBe(0);
    await db.tx(async () => {
      await db.query('INSERT INTO t VALUES (?, ?)', [2, 'b']);
      await db.tx(async () => db.query('INSERT INTO t VALUES (?, ?)', [3, 'c']));
    });
    expect((await db.all('SELECT id FROM t ORDER BY id')).map((r) => r.id)).toEqual([2, 3]);
  });

  it('maps a connection killed by the server (57P01) to a 503 and keeps working afterwards', async () => {
    const err = await db
      .tx(async () => {
        const pid = (await db.one('SELECT pg_backend_pid() AS p'))!.p;
        const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
        await admin.connect();
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await admin.end();
        await db.one('SELECT 1');
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OsmError);
    expect(err).toMatchObject({ code: 'OSM_ERR_UNAVAILABLE', status: 503 });
    expect((err as Error).message).toContain('PostgreSQL at test-host:5432 is unavailable');
    expect((await db.one('SELECT COUNT(*) AS n FROM t'))?.n).toBe(2);
  });

  it('a run\'s write outside a transaction that the server aborts while shutting down (57P01) is sent again, and applied once', async () => {
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    // Terminates the backend of the statement starting with `text` while it executes: the server
    // rolls the statement back and answers 57P01, so the write is known not to be applied.
    const terminateWhileActive = async (text: string) => {
      for (let i = 0; i < 200; i++) {
        const r = await admin.query("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND starts_with(query, $1)", [text]);
        if (r.rows.length) return admin.query('SELECT pg_terminate_backend($1)', [r.rows[0].pid]);
        await new Promise((res) => setTimeout(res, 20));
      }
      throw new Error(`${text} never showed up in pg_stat_activity`);
    };
    try {
      const write = withPatience(10_000, () => db.query("INSERT INTO t SELECT 10, 'x' FROM pg_sleep(0.5)"));
      await terminateWhileActive('INSERT INTO t SELECT 10');
      await expect(write).resolves.toMatchObject({ rowCount: 1 });
      expect(await db.all('SELECT id FROM t WHERE id = 10')).toHaveLength(1);
      // Without a run's patience the same failure is a 503 at once, and nothing is written.
      const refused = db.query("INSERT INTO t SELECT 11, 'y' FROM pg_sleep(0.5)").catch((e: unknown) => e);
      await terminateWhileActive('INSERT INTO t SELECT 11');
      expect(await refused).toMatchObject({ code: 'OSM_ERR_UNAVAILABLE', status: 503 });
      expect(await db.all('SELECT id FROM t WHERE id = 11')).toHaveLength(0);
    } finally {
      await admin.end();
    }
  });

  it('warm opens the connections asked for, never more than the pool holds', async () => {
    const store = await openPgStore(database.url, { max: 4 });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const open = async () => Number((await admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'osm'")).rows[0].n);
    try {
      const before = await open();
      await store.warm!(3);
      expect((await open()) - before).toBeGreaterThanOrEqual(2);
      await store.warm!(50);
      expect((await open()) - before).toBeLessThanOrEqual(4);
      expect((await open()) - before).toBeGreaterThanOrEqual(3);
    } finally {
      await admin.end();
      await store.close();
    }
  });

  it('a snapshot row PostgreSQL refuses rejects the whole restore as invalid (400), leaving nothing behind', async () => {
    const store = await openPgStore(database.url);
    try {
      const rows: Record<string, Record<string, unknown>[]> = { runs: [{ id: 1, run_uuid: 'r-1', workflow_name: 'wf', workflow_kind: 'flow', target: 't', status: 'completed', total_steps: 'many' }] };
      const err = await store.workspaces.restoreDump('ws', (t) => rows[t] ?? [], { localPath: '/tmp/ws', replace: false }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400 });
      expect((err as Error).message).toMatch(/snapshot row rejected by PostgreSQL/);
      expect(await store.workspaces.get('ws')).toBeUndefined();
      expect(await store.runs.getByUuid('r-1')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
