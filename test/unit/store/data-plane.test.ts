import { describe, expect, it } from 'vitest';
import { memStore, page } from './helpers.js';
import type { Store } from '../../../src/store/index.js';
import { DUMP_TABLES, type DumpTable } from '../../../src/store/workspace-dump.js';
import type { Row } from '../../../src/store/sql.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';

describe('asset and vulnerability field history', () => {
  it('records old and new values of every meaningful field a merge changes', () => {
    const store = memStore();
    const [id] = store.assets.upsertMany('ws', [{ asset_value: 'a.com', status_code: 200, title: 'Old', tech: ['nginx'], time: '1ms' }], T0).ids;
    store.assets.upsertMany('ws', [{ asset_value: 'a.com', status_code: 200, title: 'Old', time: '9ms' }], T1);
    expect(store.assets.history('ws', T0, T2)).toEqual([]); // unchanged and volatile-only changes leave no history
    store.assets.upsertMany('ws', [{ asset_value: 'a.com', status_code: 301, title: 'New', tech: ['caddy', 'php'] }], T2);
    const h = store.assets.history('ws', T0, T2);
    expect(h.map((c) => [c.row_id, c.field, c.old_value, c.new_value, c.changed_at])).toEqual([
      [id, 'title', 'Old', 'New', T2],
      [id, 'status_code', 200, 301, T2],
      [id, 'tech', ['nginx'], ['caddy', 'php'], T2],
    ]);
    expect(store.assets.history('ws', T0, T1)).toEqual([]);
    expect(store.assets.history('other', T0, T2)).toEqual([]);
    store.assets.delete(id!);
    expect(store.assets.history('ws', T0, T2)).toEqual([]); // cascades with the asset
  });

  it('records vulnerability changes (severity, title, tags)', () => {
    const store = memStore();
    const [id] = store.vulns.upsertMany('ws', [{ template_id: 'cve-1', asset_value: 'a.com', severity: 'low', vuln_title: 'T', tags: ['x'] }], T0).ids;
    store.vulns.upsertMany('ws', [{ template_id: 'cve-1', asset_value: 'a.com', severity: 'high', vuln_title: 'T', tags: ['x', 'y'] }], T1);
    expect(store.vulns.history('ws', T0, T2).map((c) => [c.row_id, c.field, c.old_value, c.new_value])).toEqual([
      [id, 'severity', 'low', 'high'],
      [id, 'tags', ['x'], ['x', 'y']],
    ]);
    expect(store.workspaces.get('ws')).toMatchObject({ vuln_low: 0, vuln_high: 1, total_vulns: 1 });
  });
});

describe('assets: matchByValue and plain insert', () => {
  it('merges a value-only input into the row of that value, keeping its url', () => {
    const store = memStore();
    const [id] = store.assets.upsertMany('ws', [{ asset_value: 'a.com', url: 'https://a.com', title: 'x' }], T0).ids;
    const res = store.assets.upsertMany('ws', [{ asset_value: 'a.com', asset_type: 'domain' }], T1, { matchByValue: true });
    expect(res).toMatchObject({ new: 0, updated: 1, ids: [id] });
    expect(store.assets.get(id!)).toMatchObject({ url: 'https://a.com', asset_type: 'domain', title: 'x' });
    // Without the option the same input is a different asset (url '').
    expect(store.assets.upsertMany('ws', [{ asset_value: 'a.com' }], T1).new).toBe(1);
  });

  it('insert refuses an existing (workspace, asset_value, url)', () => {
    const store = memStore();
    const a = store.assets.insert('ws', { asset_value: 'a.com', status_code: 200 });
    expect(a).toMatchObject({ id: expect.any(Number), status_code: 200, workspace: 'ws' });
    expect(() => store.assets.insert('ws', { asset_value: 'a.com' })).toThrow('asset already exists: a.com');
    expect(() => store.assets.insert('ws', { asset_value: ' ' })).toThrow('asset_value: required');
  });
});

describe('workspace counters', () => {
  it('adds to and resets file counters, creating the row', () => {
    const store = memStore();
    expect(store.workspaces.addToCounter('ws', 'total_subdomains', 3)).toBe(3);
    expect(store.workspaces.addToCounter('ws', 'total_subdomains', 2)).toBe(5);
    expect(store.workspaces.addToCounter('ws', 'total_links', 4)).toBe(4);
    expect(store.workspaces.addToCounter('ws', 'total_subdomains', 0, true)).toBe(0);
    expect(store.workspaces.counter('ws', 'total_links')).toBe(4);
    expect(store.workspaces.counter('nope', 'total_links')).toBe(0);
    expect(() => store.workspaces.addToCounter('ws', 'total_assets' as 'total_urls', 1)).toThrow('unknown workspace counter');
  });

  it('recomputes every counter exactly from the tables', () => {
    const store = memStore();
    store.assets.upsertMany('ws', [
      { asset_value: 'a.com', asset_type: 'subdomain' },
      { asset_value: 'b.com', asset_type: 'domain' },
      { asset_value: 'https://a.com/x', asset_type: 'url' },
      { asset_value: '10.0.0.1', asset_type: 'ip' },
    ]);
    store.vulns.upsertMany('ws', [{ vuln_info: 'a', severity: 'critical' }, { vuln_info: 'b', severity: 'info' }]);
    store.db.prepare(`UPDATE workspaces SET total_assets = 99, vuln_critical = 7, total_urls = 50 WHERE name = 'ws'`).run();
    const w = store.workspaces.recomputeCounters('ws')!;
    expect(w).toMatchObject({ total_assets: 4, total_subdomains: 2, total_urls: 1, total_ips: 1, total_vulns: 2, vuln_critical: 1, vuln_info: 1, vuln_high: 0 });
    expect(store.workspaces.recomputeCounters('missing')).toBeUndefined();
  });
});

/** Every dumped row of a workspace, by table. */
function dumpAll(store: Store, name: string, pageSize = 2): Record<DumpTable, Row[]> {
  const out = {} as Record<DumpTable, Row[]>;
  for (const t of DUMP_TABLES) {
    out[t] = [];
    let after = 0;
    for (;;) {
      const p = store.workspaces.dumpPage(name, t, after, pageSize);
      if (p.rows.length === 0) break;
      out[t].push(...p.rows);
      after = p.last;
    }
  }
  return out;
}

function seed(store: Store, ws: string): void {
  store.workspaces.upsertRunInfo({ name: ws, local_path: `/old/${ws}`, state_execution_log: `/old/${ws}/run-execution.log` });
  store.workspaces.addToCounter(ws, 'total_subdomains', 12);
  const run = store.runs.create({ workflow_name: 'wf', workflow_kind: 'module', target: ws, workspace: ws, status: 'running' });
  store.runs.transition(run.id, 'completed');
  const queued = store.runs.create({ workflow_name: 'wf', workflow_kind: 'module', target: ws, workspace: ws });
  store.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace: ws, step_name: 's1', step_type: 'bash', log_file: `/old/${ws}/log/s1.log` });
  store.artifacts.upsert({ run_id: run.id, workspace: ws, name: 'report', artifact_path: `/old/${ws}/report.md`, artifact_type: 'report', content_type: 'md', size_bytes: 3, line_count: 1, optional: false, description: '' });
  store.assets.upsertMany(ws, [{ asset_value: 'a.com', title: 'v1' }, { asset_value: 'b.com' }, { asset_value: 'c.com' }], T0);
  store.assets.upsertMany(ws, [{ asset_value: 'a.com', title: 'v2' }], T1);
  store.vulns.upsertMany(ws, [{ template_id: 't1', asset_value: 'a.com', severity: 'high' }]);
  store.vulns.create({ workspace: ws, vuln_info: 'manual', severity: 'low' });
  store.assetDiffs.insert({ workspace_name: ws, from_time: T0, to_time: T1, total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id });
  store.vulnDiffs.insert({ workspace_name: ws, from_time: T0, to_time: T1, total_added: 2, total_removed: 0, total_changed: 0, diff_data: '{"added":[]}', run_id: run.id });
  store.vulnDiffs.insert({ workspace_name: ws, from_time: T0, to_time: T1, total_added: 0, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: 0 });
  store.events.insert({ topic: 'run.completed', workspace: ws, run_id: run.run_uuid });
  void queued;
}

describe('workspace dump and restore', () => {
  it('pages through every table of one workspace only', () => {
    const store = memStore();
    seed(store, 'ws');
    seed(store, 'other');
    const d = dumpAll(store, 'ws');
    expect(Object.fromEntries(DUMP_TABLES.map((t) => [t, d[t].length]))).toEqual({
      workspace: 1, runs: 2, step_results: 1, artifacts: 1, assets: 3, vulnerabilities: 2, asset_diffs: 1, vuln_diffs: 2, event_logs: 1, asset_history: 1, vuln_history: 0,
    });
    expect(d.assets.every((a) => a.workspace === 'ws')).toBe(true);
    expect(d.assets[0]).not.toHaveProperty('__rowid__');
  });

  it('restores under a new name with new ids, re-linked children, rebased paths and inert runs', () => {
    const src = memStore();
    seed(src, 'ws');
    const d = dumpAll(src, 'ws');
    const dst = memStore();
    seed(dst, 'unrelated'); // ids in the target are already taken
    const counts = dst.workspaces.restoreDump('copy', (t) => d[t], { localPath: '/new/copy', replace: false });
    expect(counts).toMatchObject({ workspace: 1, runs: 2, step_results: 1, artifacts: 1, assets: 3, vulnerabilities: 2, asset_diffs: 1, vuln_diffs: 2, asset_history: 1 });
    const w = dst.workspaces.get('copy')!;
    expect(w).toMatchObject({ data_source: 'imported', local_path: '/new/copy', total_subdomains: 12, total_assets: 3, total_vulns: 2, vuln_high: 1, vuln_low: 1, state_execution_log: '/new/copy/run-execution.log' });
    const runs = dst.runs.list({ workspace: 'copy' }, page()).data;
    expect(runs.map((r) => r.run_uuid).sort()).toEqual(d.runs.map((r) => r.run_uuid).sort());
    const completed = runs.find((r) => r.status === 'completed')!;
    expect(runs.find((r) => r.status !== 'completed')).toMatchObject({ status: 'cancelled', error_message: 'imported from a snapshot while queued' });
    expect(dst.steps.listByRun(completed.id)).toMatchObject([{ step_name: 's1', log_file: '/new/copy/log/s1.log', workspace: 'copy' }]);
    expect(dst.artifacts.listByRun(completed.id)).toMatchObject([{ name: 'report', artifact_path: '/new/copy/report.md' }]);
    const a = dst.assets.list({ workspace: 'copy', search: 'a.com' }, page()).data[0]!;
    expect(dst.assets.history('copy', T0, T2)).toMatchObject([{ row_id: a.id, field: 'title', old_value: 'v1', new_value: 'v2' }]);
    // Re-importing the same findings in the new workspace dedupes against the restored fingerprints.
    expect(dst.vulns.upsertMany('copy', [{ template_id: 't1', asset_value: 'a.com' }]).new).toBe(0);
    expect(dst.assetDiffs.list({ workspace: 'copy' }, page()).data[0]).toMatchObject({ run_id: completed.id });
    // Vulnerability diffs are re-linked to the restored run the same way (unlinked ones stay unlinked).
    const vd = dst.vulnDiffs.list({ workspace: 'copy' }, page()).data;
    expect(vd.map((r) => [r.run_id, r.total_added, r.diff_data])).toEqual([[0, 0, '{}'], [completed.id, 2, '{"added":[]}']]);
    expect(dst.events.list({ workspace: 'copy' }, page()).data.every((e) => e.processed)).toBe(true);
  });

  it('clears stored paths that a snapshot points outside the workspace folder, and closes unfinished steps', () => {
    const src = memStore();
    seed(src, 'ws');
    const d = dumpAll(src, 'ws');
    d.artifacts[0]!.artifact_path = '/etc/passwd';
    d.workspace[0]!.state_execution_log = '/old/ws/../../etc/shadow';
    d.step_results[0]!.status = 'running';
    const dst = memStore();
    dst.workspaces.restoreDump('ws', (t) => d[t], { localPath: '/new/ws', replace: false });
    expect(dst.artifacts.list({ workspace: 'ws' }, page()).data[0]!.artifact_path).toBe('');
    expect(dst.workspaces.get('ws')!.state_execution_log).toBe('');
    expect(dst.steps.list({ workspace: 'ws' }, page()).data[0]).toMatchObject({ status: 'failed', error_message: 'imported from a snapshot while running' });
  });

  it('rolls everything back when one row is invalid', () => {
    const store = memStore();
    seed(store, 'ws');
    const before = dumpAll(store, 'ws');
    const bad = dumpAll(store, 'ws');
    bad.assets.push({ ...bad.assets[0]!, asset_value: 'dup.com' }, { ...bad.assets[0]!, asset_value: 'dup.com' });
    expect(() => store.workspaces.restoreDump('ws', (t) => bad[t], { localPath: '/x', replace: true })).toThrow();
    const after = dumpAll(store, 'ws');
    expect(after).toEqual(before);
  });
});
