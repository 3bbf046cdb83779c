/**
 * openSyncBridge: the synchronous Store face of an AsyncStore living in a worker thread, on both
 * engines (SQLite file in a temp folder; PostgreSQL on a fresh database, skipped with a visible
 * message when the server is absent, failing under CI=true). The bridge thread runs from dist/
 * (npm run build).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OsmError } from '../../../src/errors.js';
import { openStore } from '../../../src/store/db.js';
import type { DbLocator } from '../../../src/store/locator.js';
import { openSyncBridge, type SyncStore } from '../../../src/store/sync-bridge.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../helpers/pg.js';
import { tempDir } from '../../helpers/tmp.js';

interface Target {
  locator: DbLocator;
  /** Holds the write lock of `runs` from another connection until the returned release is called. */
  lockRuns(): Promise<() => Promise<void>>;
  dispose(): Promise<void>;
}

type EngineCase = { name: 'sqlite' | 'postgresql'; open(): Promise<Target> };

const sqliteCase: EngineCase = {
  name: 'sqlite',
  async open() {
    const tmp = tempDir('osm-bridge-');
    const file = path.join(tmp.dir, 'db.sqlite');
    openStore(file).close(); // created and migrated
    return {
      locator: { engine: 'sqlite', path: file },
      async lockRuns() {
        const other = new Database(file);
        other.exec('BEGIN IMMEDIATE');
        return async () => {
          other.exec('ROLLBACK');
          other.close();
        };
      },
      dispose: async () => tmp.cleanup(),
    };
  },
};

const pgDbs: PgDatabase[] = [];
const pgCase: EngineCase = {
  name: 'postgresql',
  async open() {
    const db = await createPgDatabase('osm_bridge');
    pgDbs.push(db);
    return {
      locator: { engine: 'postgresql', url: db.url },
      async lockRuns() {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        await c.query('BEGIN');
        await c.query('LOCK TABLE runs IN ACCESS EXCLUSIVE MODE');
        return async () => {
          await c.query('ROLLBACK');
          await c.end();
        };
      },
      dispose: () => db.drop(),
    };
  },
};

afterAll(async () => {
  for (const db of pgDbs.splice(0)) await db.drop().catch(() => undefined);
});

const CASES: EngineCase[] = (await pgAvailable('sync bridge')) ? [sqliteCase, pgCase] : [sqliteCase];

describe.each(CASES)('sync bridge on $name', (engine) => {
  let target: Target;
  let s: SyncStore;
  beforeEach(async () => {
    target = await engine.open();
    s = openSyncBridge(target.locator);
  });
  afterEach(async () => {
    s.close();
    await target.dispose();
  });

  it('forwards repository calls synchronously and reports its engine', () => {
    expect(s.engine).toBe(engine.name);
    const run = s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 'a.example.com', workspace: 'ws' });
    expect(s.runs.get(run.id)).toMatchObject({ id: run.id, workflow_name: 'wf', target: 'a.example.com' });
    expect(s.runs.getByUuid(run.run_uuid)?.id).toBe(run.id);
    expect(s.runs.get(run.id + 1000)).toBeUndefined();
    const up = s.assets.upsertMany('ws', [{ asset_value: 'a.example.com', asset_type: 'subdomain' }], new Date().toISOString(), {});
    expect(up).toBeTruthy();
    expect(s.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 }).data.map((a) => a.asset_value)).toEqual(['a.example.com']);
    expect(s.maintenance.readOnlyQuery('SELECT COUNT(*) AS n FROM assets', 10).rows).toEqual([{ n: 1 }]);
  });

  it('tx commits on return, rolls back on a throw, and nested tx joins the open one', () => {
    const n = () => s.maintenance.count('runs');
    const made = s.tx(() => {
      expect(s.inTransaction()).toBe(true);
      s.runs.create({ workflow_name: 'one', workflow_kind: 'flow', target: 't' });
      s.tx(() => s.runs.create({ workflow_name: 'two', workflow_kind: 'flow', target: 't' }));
      return 'done';
    });
    expect(made).toBe('done');
    expect(s.inTransaction()).toBe(false);
    expect(n()).toBe(2);
    expect(() =>
      s.tx(() => {
        s.runs.create({ workflow_name: 'three', workflow_kind: 'flow', target: 't' });
        s.tx(() => s.runs.create({ workflow_name: 'four', workflow_kind: 'flow', target: 't' }));
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.inTransaction()).toBe(false);
    expect(n()).toBe(2);
    expect(s.runs.list({}, { offset: 0, limit: 10 }).data.map((r) => r.workflow_name).sort()).toEqual(['one', 'two']);
  });

  it('rollbackOpen rolls back a transaction left open, and answers false when none is', () => {
    expect(s.rollbackOpen()).toBe(false);
    // The script was cut off inside the transaction: the runtime rolls back from outside.
    expect(() =>
      s.tx(() => {
        s.runs.create({ workflow_name: 'cut', workflow_kind: 'flow', target: 't' });
        expect(s.rollbackOpen()).toBe(true);
      }),
    ).toThrow(/no transaction is open/);
    expect(s.maintenance.count('runs')).toBe(0);
    expect(s.rollbackOpen()).toBe(false);
  });

  it('errors keep their class, code and status', () => {
    let err: unknown;
    try {
      s.maintenance.count('no_such_table');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OsmError);
    expect(err).toMatchObject({ code: 'OSM_ERR_VALIDATION', status: 400, message: 'unknown table "no_such_table"' });
    expect(() => (s.runs as unknown as { nope: () => void }).nope()).toThrow('runs.nope is not a store method');
    expect(() => s.maintenance.readOnlyQuery('DELETE FROM runs', 10)).toThrow(OsmError);
  });

  it('a call that cannot finish by the deadline throws "script timed out"; the bridge keeps working', async () => {
    const release = await target.lockRuns();
    try {
      s.setDeadline(Date.now() + 300);
      expect(() => s.runs.create({ workflow_name: 'late', workflow_kind: 'flow', target: 't' })).toThrow(/script timed out/);
    } finally {
      await release();
    }
    s.setDeadline(undefined);
    // The late answer of the timed-out call is skipped; this call gets its own.
    expect(s.runs.list({}, { offset: 0, limit: 10 }).data.map((r) => r.workflow_name)).toEqual(['late']);
  });

  it('close ends the thread; later calls fail', () => {
    s.close();
    expect(() => s.runs.get(1)).toThrow('the store bridge is closed');
  });
});

describe('sync bridge open failures', () => {
  it('an unreachable PostgreSQL is a 503 unavailable error naming host:port, not a hang', () => {
    let err: unknown;
    try {
      openSyncBridge({ engine: 'postgresql', url: 'postgresql://postgres@127.0.0.1:19101/none' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OsmError);
    expect(err).toMatchObject({ status: 503, code: 'OSM_ERR_UNAVAILABLE' });
    expect((err as Error).message).toContain('127.0.0.1:19101');
  });
});
