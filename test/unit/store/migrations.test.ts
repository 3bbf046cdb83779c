import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { applyMigrations, latestVersion, migrations, openStore, schemaVersion } from '../../../src/store/index.js';
import { fileStore, memStore, onCleanup, tempDir } from './helpers.js';

const versions = (db: Database.Database) =>
  (db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as { version: number; name: string }[]).map((r) => r.version);

describe('migrations', () => {
  it('brings an empty database to the latest version, recording each migration', () => {
    const { store } = fileStore();
    expect(versions(store.db)).toEqual(migrations.map((m) => m.version));
    expect(schemaVersion(store.db)).toBe(latestVersion());
    const row = store.db.prepare('SELECT applied_at FROM schema_migrations WHERE version = 1').get() as { applied_at: string };
    expect(new Date(row.applied_at).toISOString()).toBe(row.applied_at);
  });

  it('creates the parent folder and turns WAL and the other pragmas on', () => {
    const dir = tempDir();
    const file = path.join(dir, 'nested', 'deeper', 'osm.sqlite');
    const store = openStore(file);
    onCleanup(() => store.close());
    expect(fs.existsSync(file)).toBe(true);
    expect(store.path).toBe(file);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(store.db.pragma('temp_store', { simple: true })).toBe(2); // MEMORY
  });

  it('applies nothing on a second open', () => {
    const { store, file } = fileStore();
    store.runs.create({ workflow_name: 'w', workflow_kind: 'flow', target: 't' });
    store.close();
    const db = new Database(file);
    onCleanup(() => db.close());
    expect(applyMigrations(db)).toEqual([]);
    const again = openStore(file);
    onCleanup(() => again.close());
    expect(versions(again.db)).toEqual(migrations.map((m) => m.version));
    expect(again.runs.list({}, { offset: 0, limit: 10 }).total).toBe(1);
  });

  it('gives a database at version 1 only the later migrations, counting its existing rows', () => {
    const dir = tempDir();
    const file = path.join(dir, 'v1.sqlite');
    const raw = new Database(file);
    expect(applyMigrations(raw, migrations.slice(0, 1))).toEqual([1]);
    const now = new Date().toISOString();
    const insertAsset = raw.prepare(`INSERT INTO assets (workspace, asset_value, created_at, updated_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`);
    insertAsset.run('a.com', 'x.a.com', now, now, now);
    insertAsset.run('a.com', 'y.a.com', now, now, now);
    insertAsset.run('b.com', 'x.b.com', now, now, now);
    const insertVuln = raw.prepare(`INSERT INTO vulnerabilities (workspace, severity, created_at, updated_at, last_seen_at) VALUES (?, ?, ?, ?, ?)`);
    insertVuln.run('a.com', 'high', now, now, now);
    insertVuln.run('c.com', 'low', now, now, now);
    raw.close();

    const store = openStore(file);
    onCleanup(() => store.close());
    expect(versions(store.db)).toEqual(migrations.map((m) => m.version));
    expect(store.stats.snapshot().assets.total).toBe(3);
    expect(store.vulns.summary()).toEqual({ critical: 0, high: 1, medium: 0, low: 1, info: 0, total: 2 });
    expect(store.workspaces.get('a.com')).toMatchObject({ total_assets: 2, total_vulns: 1, vuln_high: 1, data_source: 'local' });
    expect(store.workspaces.get('c.com')).toMatchObject({ total_assets: 0, total_vulns: 1, vuln_low: 1 });
    // …and the triggers are live from now on.
    store.assets.upsertMany('b.com', [{ asset_value: 'z.b.com' }]);
    expect(store.workspaces.get('b.com')?.total_assets).toBe(2);
  });

  it('refuses a database newer than the code', () => {
    const dir = tempDir();
    const file = path.join(dir, 'future.sqlite');
    const raw = new Database(file);
    applyMigrations(raw);
    raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(latestVersion() + 1, 'future', new Date().toISOString());
    raw.close();
    expect(() => openStore(file)).toThrow(/newer than this osm/);
  });

  it('rejects migration lists that are not increasing', () => {
    const db = new Database(':memory:');
    onCleanup(() => db.close());
    expect(() => applyMigrations(db, [migrations[1]!, migrations[0]!])).toThrow(/increasing/);
  });

  it('rolls a failing migration back and records nothing for it', () => {
    const db = new Database(':memory:');
    onCleanup(() => db.close());
    const broken = [migrations[0]!, { version: 2, name: 'broken', sql: 'CREATE TABLE half (x INT); SELECT * FROM no_such_table;' }];
    expect(() => applyMigrations(db, broken)).toThrow(/no_such_table/);
    expect(versions(db)).toEqual([1]);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'half'`).get()).toBeUndefined();
  });

  it('opens read-only without migrating, and refuses an outdated schema', () => {
    const { store, file } = fileStore();
    store.runs.create({ workflow_name: 'w', workflow_kind: 'flow', target: 't' });
    const ro = openStore(file, { readonly: true });
    onCleanup(() => ro.close());
    expect(ro.runs.list({}, { offset: 0, limit: 5 }).total).toBe(1);
    expect(() => ro.runs.create({ workflow_name: 'w', workflow_kind: 'flow', target: 't' })).toThrow(/readonly/i);

    const dir = tempDir();
    const old = path.join(dir, 'old.sqlite');
    const raw = new Database(old);
    applyMigrations(raw, migrations.slice(0, 1));
    raw.close();
    expect(() => openStore(old, { readonly: true })).toThrow(/expected/);
    expect(() => openStore(path.join(dir, 'missing.sqlite'), { readonly: true })).toThrow();
  });

  it('works in memory', () => {
    const store = memStore();
    expect(store.path).toBe(':memory:');
    expect(schemaVersion(store.db)).toBe(latestVersion());
  });

  it('nests tx() inside another transaction as a savepoint', () => {
    const store = memStore();
    store.tx(() => {
      store.runs.create({ workflow_name: 'w', workflow_kind: 'flow', target: 'outer' });
      expect(() =>
        store.tx(() => {
          store.runs.create({ workflow_name: 'w', workflow_kind: 'flow', target: 'inner' });
          throw new Error('boom');
        }),
      ).toThrow('boom');
    });
    expect(store.runs.list({}, { offset: 0, limit: 10 }).data.map((r) => r.target)).toEqual(['outer']);
  });
});
