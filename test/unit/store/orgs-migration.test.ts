/** Migration 007 (orgs) on a database that already holds rows: every row joins the default org, nothing is rewritten. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { applyMigrations, DEFAULT_ORG_UUID, migrations, openStore } from '../../../src/store/index.js';
import { memStore, onCleanup, tempDir } from './helpers.js';

const ORGS = migrations.findIndex((m) => m.name === 'orgs');
const before = migrations.slice(0, ORGS);

/** A database at the version just before 007 with two workspaces of data. */
function oldDatabase(assets = 3): string {
  const file = path.join(tempDir(), 'old.sqlite');
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  applyMigrations(raw, before);
  const now = new Date().toISOString();
  const insertAsset = raw.prepare(`INSERT INTO assets (workspace, asset_value, raw_json_data, created_at, updated_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const blob = 'x'.repeat(400);
  raw.transaction(() => {
    for (let i = 0; i < assets; i++) insertAsset.run(i % 2 === 0 ? 'a.com' : 'b.com', `h${i}.example`, blob, now, now, now);
  })();
  raw.prepare(`INSERT INTO vulnerabilities (workspace, severity, created_at, updated_at, last_seen_at) VALUES ('a.com', 'high', ?, ?, ?)`).run(now, now, now);
  raw.prepare(`INSERT INTO runs (run_uuid, workflow_name, workflow_kind, target, status, workspace, created_at, updated_at) VALUES ('r-1', 'w', 'module', 'a.com', 'completed', 'a.com', ?, ?)`).run(now, now);
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
  return file;
}

describe('migration 007 (orgs)', () => {
  it('is registered after every earlier migration', () => {
    expect(ORGS).toBeGreaterThan(0);
    expect(migrations[ORGS]!.version).toBe(7);
  });

  it('gives existing rows the default org, seeds the default org and adds NOT NULL columns with indexes', () => {
    const file = oldDatabase();
    const store = openStore(file);
    onCleanup(() => store.close());
    const db = store.db;
    expect(db.prepare('SELECT uuid, name, description, tags FROM orgs').all()).toEqual([
      { uuid: DEFAULT_ORG_UUID, name: 'default', description: 'Default organization', tags: '[]' },
    ]);
    for (const table of ['workspaces', 'assets', 'vulnerabilities', 'runs']) {
      const col = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; notnull: number; dflt_value: string }[]).find((c) => c.name === 'org_uuid');
      expect(col, table).toMatchObject({ notnull: 1, dflt_value: `'${DEFAULT_ORG_UUID}'` });
      const orgs = db.prepare(`SELECT org_uuid, COUNT(*) AS n FROM ${table} GROUP BY org_uuid`).all();
      expect(orgs, table).toEqual([{ org_uuid: DEFAULT_ORG_UUID, n: expect.any(Number) }]);
    }
    expect(store.workspaces.get('a.com')).toMatchObject({ org_uuid: DEFAULT_ORG_UUID, total_assets: 2, total_vulns: 1 });
    // (migration 012 adds the schedules' org index)
    const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%org%'`).all() as { name: string }[]).map((r) => r.name).sort();
    expect(indexes).toEqual(['idx_assets_org_created', 'idx_runs_org_created', 'idx_schedules_org', 'idx_vulns_org_created', 'idx_workspaces_org']);
    // The stores see it: stats of the default org count everything.
    const stats = store.orgs.stats(store.orgs.get(DEFAULT_ORG_UUID)!);
    expect(stats).toMatchObject({ total_workspaces: 2, total_assets: 3, total_vulns: 1, total_runs: 1, workspaces: ['a.com', 'b.com'] });
    // Names are unique whatever their case.
    expect(() => store.orgs.create({ name: 'DEFAULT' })).toThrow(/UNIQUE/);
  });

  it('does not rewrite big tables (ADD COLUMN with a constant default; the asset index skips default-org rows)', () => {
    const file = oldDatabase(20_000);
    const sizeBefore = fs.statSync(file).size;
    const started = performance.now();
    const store = openStore(file);
    const elapsed = performance.now() - started;
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    store.close();
    const sizeAfter = fs.statSync(file).size;
    // ~9 MB of assets; the migration adds a few pages (orgs table, small indexes), not a copy of the table.
    expect(sizeAfter - sizeBefore).toBeLessThan(sizeBefore * 0.05);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('applies on top of a database whose earlier migrations ran long ago, and only once', () => {
    const file = oldDatabase();
    openStore(file).close();
    const again = new Database(file);
    onCleanup(() => again.close());
    expect(applyMigrations(again)).toEqual([]);
    expect((again.prepare('SELECT COUNT(*) AS n FROM orgs').get() as { n: number }).n).toBe(1);
  });

  it('serves ?org= listings of another org than the default from the org indexes', () => {
    const store = memStore();
    const acme = store.orgs.create({ name: 'acme' });
    store.assets.upsertMany('a.com', [{ asset_value: 'x.a.com' }]);
    store.vulns.create({ workspace: 'a.com', vuln_info: 'v' });
    store.orgs.assign(acme.uuid, ['a.com']);
    const plans: string[] = [];
    const original = store.db.prepare.bind(store.db);
    store.db.prepare = ((sql: string) => {
      if (/^SELECT \* FROM (assets|vulnerabilities|runs) WHERE/.test(sql)) {
        plans.push((original(`EXPLAIN QUERY PLAN ${sql}`).all(acme.uuid, 20, 0) as { detail: string }[]).map((r) => r.detail).join(' | '));
      }
      return original(sql);
    }) as typeof store.db.prepare;
    try {
      expect(store.assets.list({ org_uuid: acme.uuid }, { offset: 0, limit: 20 }).total).toBe(1);
      expect(store.vulns.list({ org_uuid: acme.uuid }, { offset: 0, limit: 20 }).total).toBe(1);
      store.runs.list({ org_uuid: acme.uuid }, { offset: 0, limit: 20 });
    } finally {
      store.db.prepare = original;
    }
    expect(plans).toEqual([
      expect.stringContaining('USING INDEX idx_assets_org_created'),
      expect.stringContaining('USING INDEX idx_vulns_org_created'),
      expect.stringContaining('USING INDEX idx_runs_org_created'),
    ]);
    for (const p of plans) expect(p).not.toMatch(/TEMP B-TREE/);
  });
});
