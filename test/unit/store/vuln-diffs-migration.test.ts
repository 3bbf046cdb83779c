/** Migration 008 (vuln_diffs) on a database that already holds rows: the table is added like asset_diffs, nothing else changes. */
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { applyMigrations, latestVersion, migrations, openStore } from '../../../src/store/index.js';
import { onCleanup, page, tempDir } from './helpers.js';

const VULN_DIFFS = migrations.findIndex((m) => m.name === 'vuln-diffs');
const before = migrations.slice(0, VULN_DIFFS);

/** A database at the version just before 008 with a run and its asset diff snapshot. */
function oldDatabase(): string {
  const file = path.join(tempDir(), 'old.sqlite');
  const raw = new Database(file);
  applyMigrations(raw, before);
  const now = new Date().toISOString();
  raw.prepare(`INSERT INTO runs (run_uuid, workflow_name, workflow_kind, target, status, workspace, created_at, updated_at) VALUES ('r-1', 'w', 'module', 'a.com', 'completed', 'a.com', ?, ?)`).run(now, now);
  raw.prepare(`INSERT INTO asset_diffs (workspace_name, from_time, to_time, total_added, diff_data, run_id, created_at) VALUES ('a.com', ?, ?, 3, '{"added":[]}', 1, ?)`).run(now, now, now);
  raw.close();
  return file;
}

/** Column definitions of a table (name, type, not null, default, primary key). */
const columns = (db: Database.Database, table: string) => db.prepare(`PRAGMA table_info(${table})`).all();

/** Each index of a table as its key columns with their sort order, plus uniqueness and partiality. */
function indexes(db: Database.Database, table: string) {
  const list = db.prepare(`PRAGMA index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[];
  return list
    .map((ix) => ({
      suffix: ix.name.replace(`idx_${table}_`, ''),
      unique: ix.unique,
      origin: ix.origin,
      partial: ix.partial,
      keys: (db.prepare(`PRAGMA index_xinfo(${ix.name})`).all() as { name: string | null; desc: number; key: number }[]).filter((c) => c.key).map((c) => [c.name, c.desc]),
    }))
    .sort((a, b) => a.suffix.localeCompare(b.suffix));
}

describe('migration 008 (vuln_diffs)', () => {
  it('is registered right after 007 (orgs)', () => {
    expect(VULN_DIFFS).toBeGreaterThan(0);
    expect(migrations[VULN_DIFFS]).toMatchObject({ version: 8, name: 'vuln-diffs' });
    expect(migrations[VULN_DIFFS - 1]).toMatchObject({ version: 7, name: 'orgs' });
  });

  it('adds vuln_diffs with the columns and indexes of asset_diffs, leaving existing rows alone', () => {
    const file = oldDatabase();
    const raw = new Database(file);
    expect(raw.prepare(`SELECT name FROM sqlite_master WHERE name = 'vuln_diffs'`).get()).toBeUndefined();
    raw.close();

    const store = openStore(file);
    onCleanup(() => store.close());
    const db = store.db;
    expect((db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v).toBe(latestVersion());
    expect(columns(db, 'vuln_diffs')).toEqual(columns(db, 'asset_diffs'));
    expect(indexes(db, 'vuln_diffs')).toEqual(indexes(db, 'asset_diffs'));
    expect(indexes(db, 'vuln_diffs').map((i) => i.suffix)).toEqual(['created', 'ws']);

    // The old snapshot is untouched; the new table starts empty and works through the store.
    expect(store.assetDiffs.list({}, page()).data).toMatchObject([{ workspace_name: 'a.com', total_added: 3, run_id: 1, diff_data: '{"added":[]}' }]);
    expect(store.vulnDiffs.list({}, page())).toEqual({ data: [], total: 0 });
    const row = store.vulnDiffs.insert({ workspace_name: 'a.com', from_time: 'a', to_time: 'b', total_added: 1, total_removed: 2, total_changed: 3, diff_data: '{}', run_id: 1 });
    expect(store.vulnDiffs.list({ workspace: 'a.com' }, page()).data).toEqual([row]);
    expect(store.maintenance.adminCounts().find((t) => t.name === 'vuln_diffs')).toEqual({ name: 'vuln_diffs', row_count: 1 });
    // Clearing runs keeps both snapshots but unlinks them.
    expect(store.maintenance.clearTable('runs')).toMatchObject({ cleared: true, rows: 1 });
    expect([store.assetDiffs.list({}, page()).data[0]!.run_id, store.vulnDiffs.list({}, page()).data[0]!.run_id]).toEqual([0, 0]);
    expect(store.maintenance.clearTable('vuln_diffs')).toMatchObject({ cleared: true, rows: 1 });
    expect(store.vulnDiffs.list({}, page()).total).toBe(0);
  });

  it('a read-only open of the old database asks for the migration instead of reading a missing table', () => {
    const file = oldDatabase();
    expect(() => openStore(file, { readonly: true })).toThrow(`expected ${latestVersion()}`);
  });
});
