/**
 * The PostgreSQL query layer keeps each statement text prepared per connection (named prepared
 * statements), recovers when a newer schema changed a prepared SELECT *'s columns, and prepares
 * nothing with OSM_PG_PREPARE=0 / `prepare: false` (poolers that do not carry them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../helpers/pg.js';
import { openPgPool, type PgPool } from '../../../src/store/pg/pool.js';
import { pgTarget } from '../../../src/store/pg/config.js';
import { pgDb } from '../../../src/store/pg/db.js';

const ready = await pgAvailable('prepared statements');

describe.skipIf(!ready)('prepared statements on PostgreSQL', () => {
  let pgdb: PgDatabase;
  const pools: PgPool[] = [];
  const open = (prepare?: boolean) => {
    // One connection: pg_prepared_statements is per session.
    const pool = openPgPool(pgTarget(pgdb.url), { max: 1 });
    pools.push(pool);
    return pgDb(pool, 'test', prepare === undefined ? {} : { prepare });
  };
  const preparedTexts = async (db: ReturnType<typeof pgDb>) =>
    (await db.all("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'osm_%'")).map((r) => String(r.statement));

  beforeAll(async () => {
    pgdb = await createPgDatabase('osm_prepared');
  });
  afterAll(async () => {
    for (const p of pools) await p.end().catch(() => undefined);
    await pgdb?.drop();
  });

  it('prepares each text once per connection and reuses it, inside and outside transactions', async () => {
    const db = open();
    await db.query('CREATE TABLE t (id INT PRIMARY KEY, a TEXT)');
    for (let i = 0; i < 3; i++) await db.query('INSERT INTO t (id, a) VALUES (?, ?)', [i, `v${i}`]);
    await db.tx(async () => {
      expect(await db.all('SELECT a FROM t WHERE id = ?', [1])).toEqual([{ a: 'v1' }]);
    });
    expect(await db.all('SELECT a FROM t WHERE id = ?', [2])).toEqual([{ a: 'v2' }]);
    const texts = await preparedTexts(db);
    expect(texts.filter((s) => s.startsWith('INSERT INTO t'))).toHaveLength(1);
    expect(texts.filter((s) => s.startsWith('SELECT a FROM t'))).toHaveLength(1);
    // A text run once (an ad-hoc query) is not kept.
    expect(texts.filter((s) => s.startsWith('CREATE TABLE'))).toEqual([]);
  });

  it('a prepared SELECT * whose table changed columns is prepared again, outside a transaction', async () => {
    const db = open();
    await db.query('CREATE TABLE u (id INT PRIMARY KEY)');
    await db.query('INSERT INTO u (id) VALUES (1)');
    expect(await db.all('SELECT * FROM u')).toEqual([{ id: 1 }]);
    expect(await db.all('SELECT * FROM u')).toEqual([{ id: 1 }]);
    expect(await preparedTexts(db)).toContain('SELECT * FROM u');
    // A newer osm migrates the database meanwhile (another connection).
    const other = open(false);
    await other.query("ALTER TABLE u ADD COLUMN note TEXT NOT NULL DEFAULT 'x'");
    expect(await db.all('SELECT * FROM u')).toEqual([{ id: 1, note: 'x' }]);
    expect(await db.all('SELECT * FROM u')).toEqual([{ id: 1, note: 'x' }]);
  });

  it('prepare: false (OSM_PG_PREPARE=0) leaves nothing prepared', async () => {
    const db = open(false);
    await db.query('SELECT 1');
    await db.query('SELECT 1');
    expect(await preparedTexts(db)).toEqual([]);
  });
});
