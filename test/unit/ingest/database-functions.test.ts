import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { DATABASE_UNAVAILABLE } from '../../../src/engine/functions/registry.js';
import { openStore, type Store } from '../../../src/store/index.js';
import { runReadOnlyQuery } from '../../../src/store/readonly-query.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../../fixtures/data/', import.meta.url)), name);
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
function fileStore(): Store {
  const s = openStore(path.join(tmp(), 'db.sqlite'));
  cleanups.push(() => s.close());
  return s;
}
/** Evaluates `script` with the store in the function context and Workspace = ws. */
function ev(store: Store | undefined, script: string, vars: Record<string, unknown> = {}) {
  return evaluate(script, { Workspace: 'ws', ...vars }, { ctx: { store, log: () => undefined } }).value;
}
const q = (s: string) => JSON.stringify(s);

describe('database functions: imports', () => {
  it('db_import_asset_from_file / db_import_vuln_from_file return stats and dedupe', () => {
    const s = fileStore();
    expect(ev(s, `db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`)).toMatchObject({ new: 5, updated: 0, unchanged: 0, errors: 0, total: 5 });
    expect(ev(s, `db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`)).toMatchObject({ new: 0, updated: 0, unchanged: 5 });
    expect(ev(s, `db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))}, 'httpx')`)).toMatchObject({ new: 0, updated: 5 }); // the source changed
    expect(ev(s, `db_import_asset_from_file('ws', ${q(fx('httpx-broken.jsonl'))})`)).toMatchObject({ errors: 4, error_lines: [{ line: 2 }, { line: 4 }, { line: 5 }, { line: 6 }] });
    expect(ev(s, `db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`)).toMatchObject({ new: 6, errors: 0 });
    expect(ev(s, `db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`)).toMatchObject({ new: 0, unchanged: 6 });
    expect(ev(s, `db_import_asset_from_file('ws', '/nope.jsonl')`)).toMatchObject({ new: 0, error: 'Import file not found: /nope.jsonl' });
    expect(ev(s, `db_import_custom_asset('ws', ${q(fx('custom-assets.jsonl'))}, 'web')`)).toMatchObject({ new: 1, skipped: 1, errors: 1 });
    expect(s.workspaces.get('ws')).toMatchObject({ total_assets: 6, total_vulns: 6 });
  });

  it('db_import_asset / db_insert_asset take httpx or osm JSON (text or object); db_import_vuln takes nuclei or osm', () => {
    const s = fileStore();
    const line = fs.readFileSync(fx('httpx-run1.jsonl'), 'utf8').split('\n')[0]!;
    expect(ev(s, `db_import_asset('ws', ${q(line)})`)).toBe(true);
    expect(ev(s, `db_insert_asset('ws', { asset_value: 'x.example.com', asset_type: 'subdomain' })`)).toBe(true);
    expect(ev(s, `dbImportAsset('ws', '{"title": "no value"}')`)).toBe(false);
    expect(ev(s, `db_import_asset('ws', 'not json')`)).toBe(false);
    expect(s.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 }).data.map((a) => a.asset_value).sort()).toEqual(['www.example.com', 'x.example.com']);
    const finding = fs.readFileSync(fx('nuclei.jsonl'), 'utf8').split('\n')[0]!;
    expect(ev(s, `db_import_vuln('ws', ${q(finding)})`)).toBe(true);
    expect(ev(s, `db_import_vuln('ws', { vuln_info: 'manual', severity: 'high' })`)).toBe(true);
    expect(ev(s, `db_import_vuln('ws', { severity: 'high' })`)).toBe(false);
    expect(s.workspaces.get('ws')).toMatchObject({ vuln_critical: 1, vuln_high: 1 });
  });

  it('quick and partial imports match on the value, classify, and record discovery events', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', [{ asset_value: 'a.example.com', url: 'https://a.example.com' }]);
    expect(ev(s, `db_quick_import_asset('ws', 'a.example.com')`)).toBe(true);
    expect(s.assets.list({ workspace: 'ws' }, { offset: 0, limit: 10 }).total).toBe(1); // merged into the row with a url
    expect(ev(s, `db_quick_import_asset('ws', '10.0.0.1')`, { RunUUID: 'r-1' })).toBe(true);
    expect(s.assets.list({ asset_type: 'ip' }, { offset: 0, limit: 10 }).data[0]).toMatchObject({ asset_value: '10.0.0.1' });
    expect(s.events.list({ topic: 'asset.discovered' }, { offset: 0, limit: 10 }).data).toMatchObject([{ name: '10.0.0.1', run_id: 'r-1' }]);
    expect(ev(s, `db_partial_import_asset('ws', 'subdomain', 'b.example.com')`)).toBe(true);
    const list = path.join(tmp(), 'subs.txt');
    fs.writeFileSync(list, 'c.example.com\n\n  d.example.com  \nb.example.com\n');
    expect(ev(s, `db_partial_import_asset_file('ws', 'subdomain', ${q(list)})`)).toBe(3);
    expect(s.assets.list({ asset_type: 'subdomain' }, { offset: 0, limit: 10 }).total).toBe(3);
    expect(ev(s, `db_quick_import_asset('', 'x')`)).toBe(false);
  });

  it('db_raw_insert_asset inserts plainly and returns the id (0 on conflict)', () => {
    const s = fileStore();
    const id = ev(s, `db_raw_insert_asset('ws', { asset_value: 'raw.io', status_code: 200 })`) as number;
    expect(id).toBeGreaterThan(0);
    expect(s.assets.get(id)).toMatchObject({ asset_value: 'raw.io', status_code: 200 });
    expect(ev(s, `db_raw_insert_asset('ws', { asset_value: 'raw.io' })`)).toBe(0);
  });
});

describe('database functions: counters', () => {
  it('db_total_* add non-blank line counts (0 resets); exact counters stay exact', () => {
    const s = fileStore();
    const f = path.join(tmp(), 'subs.txt');
    fs.writeFileSync(f, 'a\n\n b \n   \nc');
    expect(ev(s, `db_total_subdomains(${q(f)})`)).toBe(3);
    expect(ev(s, `db_total_subdomains(${q(f)})`)).toBe(6);
    expect(ev(s, `db_select_total_subdomains()`)).toBe(6);
    expect(ev(s, `db_total_subdomains('0')`)).toBe(0);
    expect(ev(s, `db_total_links(${q(f)})`)).toBe(3);
    s.assets.upsertMany('ws', [{ asset_value: 'a.io' }]);
    expect(ev(s, `db_total_assets(${q(f)})`)).toBe(1);
    expect(ev(s, `db_vuln_critical(${q(f)})`)).toBe(0);
    expect(s.workspaces.get('ws')).toMatchObject({ total_assets: 1, vuln_critical: 0 });
    expect(ev(s, `db_total_urls(${q(f)})`, { Workspace: '' })).toBe(0); // no workspace context
  });

  it('db_update_workspace_stats recomputes every counter from the tables', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', [{ asset_value: 'a.io', asset_type: 'subdomain' }, { asset_value: 'https://a.io/x', asset_type: 'url' }]);
    s.vulns.upsertMany('ws', [{ vuln_info: 'v', severity: 'high' }]);
    s.db.prepare(`UPDATE workspaces SET total_assets = 40, vuln_high = 9, total_urls = 77`).run();
    expect(ev(s, `db_update_workspace_stats('ws')`)).toBe(true);
    expect(s.workspaces.get('ws')).toMatchObject({ total_assets: 2, total_subdomains: 1, total_urls: 1, vuln_high: 1, total_vulns: 1 });
    expect(ev(s, `db_update_workspace_stats('missing')`)).toBe(false);
  });
});

describe('database functions: queries', () => {
  it('db_select_assets / _vulnerabilities (and filtered) as markdown or jsonl', () => {
    const s = fileStore();
    ev(s, `db_import_asset_from_file('ws', ${q(fx('httpx-run1.jsonl'))})`);
    ev(s, `db_import_vuln_from_file('ws', ${q(fx('nuclei.jsonl'))})`);
    const md = ev(s, `db_select_assets('ws', 'markdown')`) as string;
    expect(md.split('\n')[0]).toBe('| id | asset_value | url | status_code | title | asset_type | tech | host_ip | source | last_seen_at |');
    expect(md.split('\n').filter(Boolean)).toHaveLength(7);
    const jsonl = (ev(s, `db_select_assets_filtered('ws', 403, '', 'jsonl')`) as string).trim().split('\n').map((l) => JSON.parse(l));
    expect(jsonl.map((a) => a.asset_value)).toEqual(['cdn.example.com']);
    expect(jsonl[0]).not.toHaveProperty('raw_json_data');
    const crit = (ev(s, `db_select_vulnerabilities_filtered('ws', 'critical,high', '', 'jsonl')`) as string).trim().split('\n');
    expect(crit).toHaveLength(2);
    expect(ev(s, `db_select_vulnerabilities('ws', 'markdown')`)).toContain('| CVE-2021-41773 |');
    expect((ev(s, `db_query_assets('ws', '{"status_code": 302}')`) as string).trim().split('\n')).toHaveLength(1);
    expect((ev(s, `db_query_assets('ws', 'api')`) as string).trim().split('\n')).toHaveLength(1);
  });

  it('db_select runs SELECTs only, read-only, capped at 1000 rows', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', Array.from({ length: 1200 }, (_, i) => ({ asset_value: `h${i}.io` })));
    const out = ev(s, `db_select('SELECT asset_value, updated_at FROM assets ORDER BY id', 'jsonl')`) as string;
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1000);
    expect(JSON.parse(lines[0]!)).toMatchObject({ asset_value: 'h0.io' });
    expect(ev(s, `db_select('SELECT COUNT(*) AS n FROM assets')`)).toBe('| n |\n| --- |\n| 1200 |\n');
    for (const bad of ['DELETE FROM assets', 'SELECT 1; DROP TABLE assets', 'SELECT * FROM assets -- x', "SELECT * FROM assets WHERE asset_value = 'UPDATE'", 'WITH x AS (SELECT 1) DELETE FROM assets', "SELECT load_extension('/tmp/x.so')"]) {
      expect(ev(s, `db_select(${q(bad)}, 'jsonl')`), bad).toMatch(/^error: /);
    }
    expect(ev(s, `db_select('SELECT * FROM no_such_table')`)).toMatch(/^error: no such table/);
    expect(s.assets.list({}, { offset: 0, limit: 1 }).total).toBe(1200);
  });

  it('the read-only connection refuses writes even past the keyword screen', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', [{ asset_value: 'a.io' }]);
    expect(() => runReadOnlyQuery(s, 'DELETE FROM assets')).toThrow('only read-only SELECT queries are allowed');
    expect(() => runReadOnlyQuery(s, "INSERT INTO counters (name, value) VALUES ('x', 1) RETURNING name")).toThrow();
    const mem = openStore(':memory:');
    cleanups.push(() => mem.close());
    expect(() => runReadOnlyQuery(mem, 'DELETE FROM assets')).toThrow('only read-only SELECT queries are allowed');
    expect(runReadOnlyQuery(mem, 'SELECT 1 AS one').rows).toEqual([{ one: 1 }]);
    mem.assets.upsertMany('ws', [{ asset_value: 'still-writable.io' }]); // query_only is switched back off
    expect(s.assets.list({}, { offset: 0, limit: 5 }).total).toBe(1);
  });

  it('db_select_to_file and db_select_to_jsonl write files', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', [{ asset_value: 'a.io', title: 'A|B' }]);
    const dir = tmp();
    expect(ev(s, `db_select_to_file('SELECT asset_value, title FROM assets', ${q(path.join(dir, 'out.md'))})`)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'out.md'), 'utf8')).toBe('| asset_value | title |\n| --- | --- |\n| a.io | A\\|B |\n');
    expect(ev(s, `db_select_to_jsonl('SELECT * FROM assets', 'asset_value,missing', ${q(path.join(dir, 'out.jsonl'))})`)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'out.jsonl'), 'utf8')).toBe('{"asset_value":"a.io","missing":null}\n');
    expect(ev(s, `db_select_to_file('DROP TABLE assets', ${q(path.join(dir, 'x.md'))})`)).toBe(false);
  });

  it('db_asset_diff / db_vuln_diff emit JSONL with diff_type and workspace_name', () => {
    const s = fileStore();
    s.assets.upsertMany('ws', [{ asset_value: 'a.io' }]);
    s.vulns.upsertMany('ws', [{ vuln_info: 'v1', severity: 'low' }]);
    const lines = (ev(s, `db_asset_diff('ws')`) as string).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([expect.objectContaining({ diff_type: 'added', workspace_name: 'ws', asset_value: 'a.io' })]);
    const dest = path.join(tmp(), 'vd.jsonl');
    expect(ev(s, `db_vuln_diff_to_file('ws', ${q(dest)})`)).toBe(true);
    expect(JSON.parse(fs.readFileSync(dest, 'utf8'))).toMatchObject({ diff_type: 'added', vuln_info: 'v1', severity: 'low' });
    expect(ev(s, `db_vuln_diff('ws')`)).toContain('"diff_type":"added"');
  });
});

describe('database functions: artifacts and run state', () => {
  it('register_artifact, store_artifact and runtime_export need the run context', () => {
    const s = fileStore();
    const dir = tmp();
    const run = s.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'ws.io', workspace: 'ws', status: 'running' });
    const report = path.join(dir, 'report.md');
    fs.writeFileSync(report, '# r\n\nline\n');
    const vars = { DBRunID: run.id, RunUUID: run.run_uuid, Output: dir, StateFile: path.join(dir, 'state', 'run-state.json') };
    expect(ev(s, `register_artifact(${q(report)}, 'markdown')`, vars)).toBe(true);
    expect(ev(s, `store_artifact(${q(dir)})`, vars)).toBe(true);
    expect(ev(s, `register_artifact(${q(report)}, 'exe')`, vars)).toBe(false);
    expect(ev(s, `register_artifact(${q(report)})`)).toBe(false); // no run
    const arts = s.artifacts.listByRun(run.id);
    expect(arts.find((a) => a.name === 'report.md')).toMatchObject({ id: expect.stringMatching(/^artifact-\d+$/), artifact_type: 'markdown', content_type: 'md', size_bytes: 10, line_count: 2, workspace: 'ws' });
    expect(arts.find((a) => a.artifact_path === dir)).toMatchObject({ artifact_type: 'output', content_type: 'folder' });
    expect(ev(s, 'runtime_export()', vars)).toBe(true);
    const state = JSON.parse(fs.readFileSync(vars.StateFile, 'utf8'));
    expect(state).toMatchObject({ run: { run_uuid: run.run_uuid, status: 'running', workflow_name: 'recon' }, workspace: { name: 'ws', local_path: dir } });
    expect(state.artifacts).toContain(report);
  });

  it('without a store every function answers its failure value', () => {
    expect(ev(undefined, `db_select_assets('ws', 'jsonl')`)).toBe(DATABASE_UNAVAILABLE);
    expect(ev(undefined, `db_select('SELECT 1')`)).toBe(DATABASE_UNAVAILABLE);
    expect(ev(undefined, `db_import_asset('ws', '{}')`)).toBe(false);
    expect(ev(undefined, `db_total_urls('/etc/hosts')`)).toBe(0);
    expect(ev(undefined, `db_import_asset_from_file('ws', '/etc/hosts')`)).toMatchObject({ new: 0, error: expect.any(String) });
    expect(ev(undefined, 'runtime_export()')).toBe(false);
  });
});
