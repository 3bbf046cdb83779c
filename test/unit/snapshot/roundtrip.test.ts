import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import unzipper from 'unzipper';
import { asyncSqlite, openStore, type Store } from '../../../src/store/index.js';
import { DUMP_TABLES, type DumpTable } from '../../../src/store/workspace-dump.js';
import type { Row } from '../../../src/store/sql.js';
import { writeSnapshotZip } from '../../../src/snapshot/export.js';
import { importSnapshotZip } from '../../../src/snapshot/import.js';
import { writeZip } from './zip-builder.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else if (st.isSymbolicLink()) out[r] = 'link';
      else out[r] = `${(st.mode & 0o111) !== 0 ? 'x:' : ''}${crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, r))).digest('hex')}`;
    }
  };
  walk('');
  return out;
}

function dumpAll(store: Store, name: string): Record<DumpTable, Row[]> {
  const out = {} as Record<DumpTable, Row[]>;
  for (const t of DUMP_TABLES) {
    out[t] = [];
    for (let after = 0; ; ) {
      const p = store.workspaces.dumpPage(name, t, after, 100);
      if (p.rows.length === 0) break;
      out[t].push(...p.rows);
      after = p.last;
    }
  }
  return out;
}

/** Rows without the ids a restore re-assigns; links expressed through run_uuid / asset_value. */
function comparable(store: Store, d: Record<DumpTable, Row[]>) {
  const runUuid = new Map(d.runs.map((r) => [r.id, r.run_uuid]));
  const assetKey = new Map(d.assets.map((a) => [a.id, `${a.asset_value}|${a.url}`]));
  const vulnKey = new Map(d.vulnerabilities.map((v) => [v.id, v.fingerprint ?? v.vuln_info]));
  const strip = ({ id: _id, ...rest }: Row) => rest;
  const sort = (rows: Row[]) => rows.map((r) => JSON.stringify(r)).sort();
  void store;
  return {
    workspace: d.workspace.map(({ id: _i, data_source: _d, updated_at: _u, created_at: _c, ...rest }) => rest),
    runs: sort(d.runs.map(strip)),
    step_results: sort(d.step_results.map((r) => ({ ...strip(r), run_id: runUuid.get(r.run_id) }))),
    artifacts: sort(d.artifacts.map((r) => ({ ...strip(r), run_id: runUuid.get(r.run_id) ?? 0 }))),
    assets: sort(d.assets.map(strip)),
    vulnerabilities: sort(d.vulnerabilities.map(strip)),
    asset_diffs: sort(d.asset_diffs.map((r) => ({ ...strip(r), run_id: runUuid.get(r.run_id) ?? 0 }))),
    vuln_diffs: sort(d.vuln_diffs.map((r) => ({ ...strip(r), run_id: runUuid.get(r.run_id) ?? 0 }))),
    // Restored events are marked processed so a start-up replay cannot trigger workflows from a snapshot.
    event_logs: sort(d.event_logs.map(({ processed: _p, processed_at: _pa, ...r }) => strip(r))),
    asset_history: sort(d.asset_history.map((r) => ({ ...strip(r), asset_id: assetKey.get(r.asset_id) }))),
    vuln_history: sort(d.vuln_history.map((r) => ({ ...strip(r), vuln_id: vulnKey.get(r.vuln_id) }))),
  };
}

/** A workspace with files of every kind and rows in every table. */
function seedWorkspace(store: Store, workspaces: string, ws: string): string {
  const dir = path.join(workspaces, ws);
  fs.mkdirSync(path.join(dir, 'subdomain'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'empty-folder'));
  fs.writeFileSync(path.join(dir, 'run-state.json'), '{"run":{}}\n');
  fs.writeFileSync(path.join(dir, 'run-execution.log'), 'started\n');
  fs.writeFileSync(path.join(dir, 'subdomain', 'final.txt'), 'a.example.com\nb.example.com\n');
  fs.writeFileSync(path.join(dir, 'big.bin'), crypto.randomBytes(300_000));
  fs.writeFileSync(path.join(dir, 'hook.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  fs.symlinkSync('/etc/passwd', path.join(dir, 'outside-link'));

  store.workspaces.upsertRunInfo({ name: ws, local_path: dir, state_execution_log: path.join(dir, 'run-execution.log'), run_workflow: 'recon' });
  store.workspaces.addToCounter(ws, 'total_subdomains', 2);
  const run = store.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: ws, workspace: ws, status: 'running', params: { threads: '10' } });
  const step = store.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace: ws, step_name: 'enum', step_type: 'bash', status: 'running', log_file: path.join(dir, 'log.txt') });
  store.steps.transition(step.id, 'completed', { output: 'done', exports: { n: 2 } });
  store.runs.transition(run.id, 'completed');
  store.artifacts.upsert({ run_id: run.id, workspace: ws, name: 'final', artifact_path: path.join(dir, 'subdomain', 'final.txt'), artifact_type: 'output', content_type: 'txt', size_bytes: 28, line_count: 2, optional: false, description: 'subs' });
  store.assets.upsertMany(ws, [{ asset_value: 'a.example.com', url: 'https://a.example.com', status_code: 200, tech: ['nginx'], is_cdn: true }, { asset_value: 'b.example.com' }], '2026-01-01T00:00:00.000Z');
  store.assets.upsertMany(ws, [{ asset_value: 'a.example.com', url: 'https://a.example.com', status_code: 301 }], '2026-01-02T00:00:00.000Z');
  store.vulns.upsertMany(ws, [{ template_id: 'cve-1', vuln_info: 'cve-1', asset_value: 'a.example.com', severity: 'low', tags: ['t'] }], '2026-01-01T00:00:00.000Z');
  store.vulns.upsertMany(ws, [{ template_id: 'cve-1', vuln_info: 'cve-1', asset_value: 'a.example.com', severity: 'critical' }], '2026-01-02T00:00:00.000Z');
  store.vulns.create({ workspace: ws, vuln_info: 'manual', severity: 'medium', raw_vuln_json: '{"a":1}' });
  store.assetDiffs.insert({ workspace_name: ws, from_time: 'a', to_time: 'b', total_added: 2, total_removed: 0, total_changed: 1, diff_data: '{"added":[]}', run_id: run.id });
  store.vulnDiffs.insert({ workspace_name: ws, from_time: 'a', to_time: 'b', total_added: 1, total_removed: 0, total_changed: 1, diff_data: '{"changed":[]}', run_id: run.id });
  store.events.insert({ topic: 'run.completed', workspace: ws, run_id: run.run_uuid, data: { target: ws } });
  return dir;
}

async function exportTo(store: Store, ws: string, folder: string, includeArtifacts = true): Promise<string> {
  const file = path.join(tmp(), `${ws}_1767225600.zip`);
  await writeSnapshotZip(asyncSqlite(store), { workspace: ws, folder, includeArtifacts }, fs.createWriteStream(file));
  return file;
}

describe('snapshot round trip', () => {
  it('export → delete → import restores every file and every row', async () => {
    const root = tmp();
    const workspaces = path.join(root, 'workspaces');
    const store = openStore(path.join(root, 'db.sqlite'));
    cleanups.push(() => store.close());
    const ws = 'example.com';
    const dir = seedWorkspace(store, workspaces, ws);
    seedWorkspace(store, path.join(root, 'elsewhere'), 'other.org'); // must not leak into the export
    const filesBefore = tree(dir);
    const rowsBefore = dumpAll(store, ws);
    const otherBefore = dumpAll(store, 'other.org');
    const zip = await exportTo(store, ws, dir);

    const names = (await unzipper.Open.file(zip)).files.map((f) => f.path).sort();
    expect(names).toContain('example.com/subdomain/final.txt');
    expect(names).toContain('example.com/empty-folder/');
    expect(names).toContain('example.com/.osm-db/assets.jsonl');
    expect(names).toContain('example.com/.osm-db/vuln_diffs.jsonl');
    expect(names.every((n) => n.startsWith('example.com/'))).toBe(true);
    expect(names.some((n) => n.includes('outside-link'))).toBe(false); // links are never packed

    store.workspaces.delete(ws);
    fs.rmSync(dir, { recursive: true });
    expect(dumpAll(store, ws).assets).toEqual([]);

    const r = await importSnapshotZip(asyncSqlite(store), { file: zip, workspacesDir: workspaces, force: false, skipDb: false });
    expect(r).toMatchObject({ workspace: ws, local_path: dir, files_count: 5 });
    expect(r.rows).toMatchObject({ workspace: 1, runs: 1, step_results: 1, artifacts: 1, assets: 2, vulnerabilities: 2, asset_diffs: 1, vuln_diffs: 1, event_logs: 1, asset_history: 1, vuln_history: 1 });

    const { 'outside-link': _link, ...expectedFiles } = filesBefore;
    expect(tree(dir)).toEqual(expectedFiles);
    const rowsAfter = dumpAll(store, ws);
    expect(comparable(store, rowsAfter)).toEqual(comparable(store, rowsBefore));
    expect(rowsAfter.workspace[0]).toMatchObject({ data_source: 'imported', total_assets: 2, total_vulns: 2, vuln_critical: 1, vuln_medium: 1, total_subdomains: 2 });
    expect(rowsAfter.event_logs.every((e) => e.processed === 1 && typeof e.processed_at === 'string')).toBe(true);
    expect(dumpAll(store, 'other.org')).toEqual(otherBefore);
    // The restored rows behave like any others: diffs still see the field history, imports still dedupe.
    expect(store.assets.history(ws, '2026-01-01T12:00:00.000Z', '2026-01-03T00:00:00.000Z')).toMatchObject([{ field: 'status_code', old_value: 200, new_value: 301 }]);
    expect(store.vulns.upsertMany(ws, [{ template_id: 'cve-1', vuln_info: 'cve-1', asset_value: 'a.example.com', severity: 'critical' }]).new).toBe(0);
  });

  it('without artifacts packs only the run state files and the rows', async () => {
    const root = tmp();
    const store = openStore(':memory:');
    cleanups.push(() => store.close());
    const dir = seedWorkspace(store, path.join(root, 'workspaces'), 'ex.io');
    const zip = await exportTo(store, 'ex.io', dir, false);
    const files = (await unzipper.Open.file(zip)).files.map((f) => f.path).filter((p) => !p.includes('/.osm-db/')).sort();
    expect(files).toEqual(['ex.io/', 'ex.io/run-execution.log', 'ex.io/run-state.json']);
  });

  it('a failed database restore leaves the existing folder and rows untouched', async () => {
    const root = tmp();
    const workspaces = path.join(root, 'workspaces');
    const store = openStore(path.join(root, 'db.sqlite'));
    cleanups.push(() => store.close());
    const dir = seedWorkspace(store, workspaces, 'keep.io');
    const filesBefore = tree(workspaces);
    const rowsBefore = dumpAll(store, 'keep.io');
    const zip = writeZip(path.join(tmp(), 'keep.io.zip'), [
      { name: 'keep.io/new.txt', data: Buffer.from('replacement') },
      { name: 'keep.io/.osm-db/workspace.jsonl', data: Buffer.from('{"name":"keep.io"}\n') },
      { name: 'keep.io/.osm-db/assets.jsonl', data: Buffer.from('{"id":1,"asset_value":"ok.io","created_at":"x","updated_at":"x","last_seen_at":"x"}\n{"id":2,"asset_value":null}\n') },
    ]);
    const err = await importSnapshotZip(asyncSqlite(store), { file: zip, workspacesDir: workspaces, force: true, skipDb: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 500, message: expect.stringMatching(/^Failed to import snapshot: database restore failed: NOT NULL constraint failed: assets.asset_value/) });
    expect(tree(workspaces)).toEqual(filesBefore);
    expect(dumpAll(store, 'keep.io')).toEqual(rowsBefore);
    expect(fs.existsSync(path.join(dir, 'new.txt'))).toBe(false);
  });

  it('refuses to replace a workspace that has a running scan', async () => {
    const root = tmp();
    const workspaces = path.join(root, 'workspaces');
    const store = openStore(':memory:');
    cleanups.push(() => store.close());
    const dir = seedWorkspace(store, workspaces, 'busy.io');
    const zip = await exportTo(store, 'busy.io', dir);
    store.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'busy.io', workspace: 'busy.io', status: 'running' });
    const before = tree(workspaces);
    const err = await importSnapshotZip(asyncSqlite(store), { file: zip, workspacesDir: workspaces, force: true, skipDb: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409, message: 'Workspace busy.io has 1 active run(s); cancel them before deleting it' });
    expect(tree(workspaces)).toEqual(before);
  });

  it('skip_db extracts the files only and leaves the database alone', async () => {
    const root = tmp();
    const store = openStore(':memory:');
    cleanups.push(() => store.close());
    const dir = seedWorkspace(store, path.join(root, 'src'), 'files.io');
    const zip = await exportTo(store, 'files.io', dir);
    const target = openStore(':memory:');
    cleanups.push(() => target.close());
    const r = await importSnapshotZip(asyncSqlite(target), { file: zip, workspacesDir: path.join(root, 'dst'), force: false, skipDb: true });
    expect(r.rows).toBeUndefined();
    expect(target.workspaces.names()).toEqual([]);
    expect(fs.existsSync(path.join(root, 'dst', 'files.io', '.osm-db'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'dst', 'files.io', 'subdomain', 'final.txt'), 'utf8')).toBe('a.example.com\nb.example.com\n');
  });
});
