/**
 * The workflow functions on PostgreSQL: the synchronous function library runs on the sync bridge
 * (openSyncBridge) and what it writes is read back through openPgStore; an evaluator process of
 * the real script pool opens the bridge itself from `db: { engine: 'postgresql', url }`.
 * PostgreSQL absent: skipped with a visible message (a failure under CI=true).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { ScriptPool, ScriptCallError } from '../../../src/engine/scripts/pool.js';
import { RecordImporter, type ImportKind } from '../../../src/ingest/importer.js';
import type { AssetInput } from '../../../src/store/index.js';
import type { AsyncStore } from '../../../src/store/async.js';
import { openStore } from '../../../src/store/db.js';
import { openPgStore } from '../../../src/store/pg/store.js';
import { openSyncBridge, type SyncStore } from '../../../src/store/sync-bridge.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../helpers/pg.js';
import { ROOT } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../../fixtures/data/', import.meta.url)), name);
const tool = (name: string) => path.join(ROOT, 'test/fixtures/tools', name);
const q = (s: string) => JSON.stringify(s);

const HAVE_PG = await pgAvailable('workflow functions on PostgreSQL');

describe.runIf(HAVE_PG)('workflow functions on PostgreSQL (sync bridge)', () => {
  let db: PgDatabase;
  let bridge: SyncStore;
  let repos: AsyncStore;
  let tmp: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    db = await createPgDatabase('osm_bridge');
    repos = await openPgStore(db.url);
    bridge = openSyncBridge({ engine: 'postgresql', url: db.url });
    tmp = tempDir('osm-fnpg-');
  });
  afterEach(async () => {
    bridge.close();
    await repos.close();
    await db.drop();
    tmp.cleanup();
  });

  const ev = (script: string, vars: Record<string, unknown> = {}, logs: string[] = []) =>
    evaluate(script, { Workspace: 'ws', ...vars }, { ctx: { store: bridge, log: (l) => logs.push(l) } }).value;

  it('file imports (httpx, nuclei, a tool file) store rows, dedupe, and keep the workspace counters', async () => {
    expect(ev(`db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`)).toMatchObject({ new: 5, updated: 0, errors: 0, total: 5 });
    expect(ev(`db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`)).toMatchObject({ new: 0, unchanged: 5 });
    expect(ev(`db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`)).toMatchObject({ new: 6, errors: 0 });
    expect(ev(`db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`)).toMatchObject({ new: 0, unchanged: 6 });
    expect(ev(`db_import_subfinder('ws', ${q(tool('subfinder.jsonl'))})`)).toMatchObject({ new: 3, errors: 0 });
    expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 100 })).data).toHaveLength(8);
    expect((await repos.vulns.list({ workspace: 'ws' }, { offset: 0, limit: 100 })).data).toHaveLength(6);
    expect(await repos.workspaces.get('ws')).toMatchObject({ total_assets: 8, total_vulns: 6 });
    expect(ev('db_select_total_assets()')).toBe(8);
  });

  it('db_total_* counters add line counts and db_select_total_* reads them', async () => {
    const f = path.join(tmp.dir, 'subs.txt');
    fs.writeFileSync(f, 'a.example.com\n\nb.example.com\nc.example.com\n');
    expect(ev(`db_total_subdomains(${q(f)})`)).toBe(3);
    expect(ev(`db_total_subdomains(${q(f)})`)).toBe(6);
    expect(ev('db_select_total_subdomains()')).toBe(6);
    expect(ev(`db_total_subdomains('0')`)).toBe(0);
    expect(await repos.workspaces.counter('ws', 'total_subdomains')).toBe(0);
  });

  it('db_select runs read-only on PostgreSQL; its errors are the function answer', async () => {
    ev(`db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`);
    expect(ev(`db_select('SELECT COUNT(*) AS n FROM assets')`)).toBe('| n |\n| --- |\n| 5 |\n');
    const lines = (ev(`db_select('SELECT asset_value FROM assets ORDER BY asset_value', 'jsonl')`) as string).trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(JSON.parse(lines[0]!)).toHaveProperty('asset_value');
    expect(ev(`db_select('SELECT * FROM no_such_table')`)).toMatch(/^error: relation "no_such_table" does not exist/);
    expect(ev(`db_select('SELECT nextval(\\'assets_id_seq\\')')`)).toMatch(/^error: .*read-only transaction/);
    expect(ev(`db_select('DELETE FROM assets')`)).toMatch(/^error: /);
    expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 100 })).data).toHaveLength(5);
  });

  it('generate_event, store_artifact, runtime_export and a diff read and write through the bridge', async () => {
    const run = await repos.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'ws.io', workspace: 'ws', status: 'running' });
    const dir = tmp.dir;
    const vars = { DBRunID: run.id, RunUUID: run.run_uuid, WorkflowName: 'recon', Output: dir, StateFile: path.join(dir, 'state', 'run-state.json') };
    expect(ev(`generate_event('ws', 'assets.new', 'httpx', 'url', 'https://a.example.com')`, vars)).toBe(true);
    const events = (await repos.events.list({}, { offset: 0, limit: 10 })).data;
    expect(events.find((e) => e.topic === 'assets.new')).toMatchObject({ source: 'httpx', data_type: 'url', workspace: 'ws', run_id: run.run_uuid, processed: false });
    const report = path.join(dir, 'report.md');
    fs.writeFileSync(report, '# r\n\nline\n');
    expect(ev(`store_artifact(${q(report)})`, vars)).toBe(true);
    expect((await repos.artifacts.listByRun(run.id)).map((a) => a.name)).toContain('report.md');
    expect(ev('runtime_export()', vars)).toBe(true);
    expect(JSON.parse(fs.readFileSync(vars.StateFile, 'utf8'))).toMatchObject({ run: { run_uuid: run.run_uuid, status: 'running', workflow_name: 'recon' } });
    ev(`db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`);
    const diff = (ev(`db_asset_diff('ws')`) as string).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(diff).toHaveLength(5);
    expect(diff.every((d) => d.diff_type === 'added' && d.workspace_name === 'ws')).toBe(true);
  });

  it('generate_workspace_report renders from PostgreSQL data', () => {
    ev(`db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`);
    ev(`db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`);
    const dest = path.join(tmp.dir, 'report.md');
    const logs: string[] = [];
    expect(ev(`generate_workspace_report('ws', 'markdown', ${q(dest)})`, {}, logs), logs.join('\n')).toBe(true);
    const text = fs.readFileSync(dest, 'utf8');
    expect(text).toContain('CVE-2021-41773');
  });

  it('an error inside an import batch rolls the whole batch back', async () => {
    const failing: ImportKind<AssetInput> = {
      kind: 'asset',
      map: (r) => ({ ok: true, value: { asset_value: String(r.asset_value), asset_type: 'subdomain' } }) as never,
      upsert: {
        sync: (store, ws, rows, now) => {
          store.assets.upsertMany(ws, rows, now, {});
          throw new Error('boom after the write');
        },
        async: () => Promise.reject(new Error('unused')),
      },
    };
    const imp = new RecordImporter(bridge as never, 'ws', failing, { summaryEvent: false });
    imp.record(1, { asset_value: 'a.example.com' });
    expect(() => imp.finish()).toThrow('boom after the write');
    expect(bridge.inTransaction()).toBe(false);
    expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 })).data).toHaveLength(0);
    // The bridge is usable after the rollback.
    expect(ev(`db_import_asset('ws', { asset_value: 'b.example.com', asset_type: 'subdomain' })`)).toBe(true);
    expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 })).data.map((a) => a.asset_value)).toEqual(['b.example.com']);
  });

  it('a database that stops answering connections makes the function fail, not hang', async () => {
    const admin = new pg.Client({ connectionString: db.url.replace(`/${db.name}`, '/postgres') });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db.name]);
      const logs: string[] = [];
      expect(ev(`db_import_asset('ws', { asset_value: 'c.example.com', asset_type: 'subdomain' })`, {}, logs)).toBe(false);
      expect(ev(`db_select('SELECT 1 AS one')`)).toMatch(/^error: /);
      expect(ev(`generate_event('ws', 't', 's', 'text', 'x')`, {}, logs)).toBe(false);
      expect(logs.join('\n')).toMatch(/generate_event: /);
    } finally {
      await admin.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    // Connections allowed again: the same bridge works (its pool reconnects).
    expect(ev(`db_import_asset('ws', { asset_value: 'd.example.com', asset_type: 'subdomain' })`)).toBe(true);
  });
});

describe.runIf(HAVE_PG)('an evaluator process on PostgreSQL (real script pool)', () => {
  let db: PgDatabase;
  let repos: AsyncStore;
  let pool: ScriptPool;
  beforeAll(async () => {
    db = await createPgDatabase('osm_bridge');
    repos = await openPgStore(db.url);
    pool = new ScriptPool(path.join(ROOT, 'dist/engine/scripts/worker.js'), { size: 1, reuse: true });
  });
  afterAll(async () => {
    await pool?.close();
    await repos?.close();
    await db?.drop();
  });

  it('a function step imports a file; the rows are visible through openPgStore', async () => {
    const ctx = { workspace: 'ws', db: { engine: 'postgresql' as const, url: db.url } };
    const stats = await pool.run({ script: `db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`, vars: { Workspace: 'ws' }, ctx, timeoutMs: 30_000 });
    expect(stats).toMatchObject({ new: 5, errors: 0 });
    expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 })).data).toHaveLength(5);
    // The evaluator keeps its bridge for the next call.
    expect(await pool.run({ script: `db_select_total_assets()`, vars: { Workspace: 'ws' }, ctx, timeoutMs: 30_000 })).toBe(5);
  });

  it('one evaluator follows the locator of each call: SQLite, PostgreSQL, the older dbPath form', async () => {
    const tmp = tempDir('osm-fnpg-');
    try {
      const a = path.join(tmp.dir, 'a.sqlite');
      const b = path.join(tmp.dir, 'b.sqlite');
      const imp = (v: string) => `db_import_asset('ws', { asset_value: '${v}', asset_type: 'subdomain' })`;
      const call = (script: string, ctx: Record<string, unknown>) => pool.run({ script, vars: { Workspace: 'ws' }, ctx: { workspace: 'ws', ...ctx }, timeoutMs: 30_000 });
      expect(await call(imp('sqlite-a.example.com'), { db: { engine: 'sqlite', path: a } })).toBe(true);
      expect(await call(imp('pg.example.com'), { db: { engine: 'postgresql', url: db.url } })).toBe(true);
      expect(await call(imp('sqlite-b.example.com'), { dbPath: b })).toBe(true);
      const values = (file: string) => {
        const st = openStore(file);
        try {
          return st.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 }).data.map((r) => r.asset_value);
        } finally {
          st.close();
        }
      };
      expect(values(a)).toEqual(['sqlite-a.example.com']);
      expect(values(b)).toEqual(['sqlite-b.example.com']);
      expect((await repos.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 })).data.map((r) => r.asset_value)).toContain('pg.example.com');
    } finally {
      tmp.cleanup();
    }
  });

  it('a database call blocked past the script budget ends the script as a time-out', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE assets IN ACCESS EXCLUSIVE MODE');
    try {
      const ctx = { workspace: 'ws', db: { engine: 'postgresql' as const, url: db.url } };
      const err = await pool.run({ script: `db_import_asset('ws', { asset_value: 'late.example.com', asset_type: 'subdomain' })`, vars: { Workspace: 'ws' }, ctx, timeoutMs: 1500 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ScriptCallError);
      expect((err as ScriptCallError).kind).toBe('timeout');
      // Reported by the evaluator itself (the pool's watchdog says "script timed out after …ms").
      expect((err as ScriptCallError).message).toMatch(/^error executing expression: script timed out|^script timed out: the database did not answer/);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});
