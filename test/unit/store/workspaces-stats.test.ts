import { describe, expect, it } from 'vitest';
import { memStore, page } from './helpers.js';

describe('workspaces', () => {
  it('upserts run info without touching counters, and keeps unspecified fields', () => {
    const store = memStore();
    store.assets.upsertMany('a.com', [{ asset_value: 'x.a.com' }]);
    const ws = store.workspaces.upsertRunInfo({ name: 'a.com', local_path: '/w/a.com', last_run: '2026-01-01T00:00:00.000Z', run_workflow: 'general', state_execution_log: '/w/a.com/run-execution.log' });
    expect(ws).toMatchObject({ name: 'a.com', local_path: '/w/a.com', data_source: 'local', total_assets: 1, run_workflow: 'general' });
    const again = store.workspaces.upsertRunInfo({ name: 'a.com', local_path: '/w2/a.com', data_source: 'imported' });
    expect(again).toMatchObject({ local_path: '/w2/a.com', data_source: 'imported', run_workflow: 'general', last_run: '2026-01-01T00:00:00.000Z', total_assets: 1, state_execution_log: '/w/a.com/run-execution.log' });
    expect(again.created_at).toBe(ws.created_at);
    expect(store.workspaces.upsertRunInfo({ name: 'new.io', local_path: '/w/new.io' })).toMatchObject({ data_source: 'local', last_run: null, total_assets: 0 });
  });

  it('lists by name with data_source and search filters, and lists names', () => {
    const store = memStore();
    for (const name of ['b.io', 'a.com', 'c.net']) store.workspaces.upsertRunInfo({ name, local_path: `/w/${name}` });
    expect(store.workspaces.setDataSource('c.net', 'cloud')).toBe(true);
    expect(store.workspaces.setDataSource('nope', 'cloud')).toBe(false);
    expect(store.workspaces.list({}, page()).data.map((w) => w.name)).toEqual(['a.com', 'b.io', 'c.net']);
    expect(store.workspaces.list({ data_source: 'cloud' }, page()).data.map((w) => w.name)).toEqual(['c.net']);
    expect(store.workspaces.list({ search: '.io' }, page()).total).toBe(1);
    expect(store.workspaces.list({}, page(1, 1))).toMatchObject({ total: 3, data: [{ name: 'b.io' }] });
    expect(store.workspaces.names()).toEqual(['a.com', 'b.io', 'c.net']);
  });

  it('deleteData removes every row of the workspace and nothing of others, in one go', () => {
    const store = memStore();
    const seed = (ws: string) => {
      store.assets.upsertMany(ws, [{ asset_value: `x.${ws}` }, { asset_value: `y.${ws}` }]);
      store.vulns.create({ workspace: ws, vuln_info: 'v', severity: 'high' });
      const run = store.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: ws, workspace: ws });
      store.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace: ws, step_name: 's', step_type: 'bash' });
      store.artifacts.upsert({ run_id: run.id, workspace: ws, name: 'r', artifact_path: `/w/${ws}/r`, artifact_type: 'report', content_type: 'html', size_bytes: 1, line_count: 1, optional: false, description: '' });
      store.events.insert({ topic: 'run.started', workspace: ws, run_id: run.run_uuid });
      store.assetDiffs.insert({ workspace_name: ws, from_time: 'a', to_time: 'b', total_added: 0, total_removed: 0, total_changed: 0, diff_data: '{}' });
      store.vulnDiffs.insert({ workspace_name: ws, from_time: 'a', to_time: 'b', total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id });
      return run;
    };
    const gone = seed('gone.com');
    const kept = seed('kept.com');
    expect(store.workspaces.deleteData('gone.com')).toEqual({ assets: 2, vulns: 1, runs: 1 });
    expect(store.assets.list({ workspace: 'gone.com' }, page()).total).toBe(0);
    expect(store.vulns.list({ workspace: 'gone.com' }, page()).total).toBe(0);
    expect(store.runs.get(gone.id)).toBeUndefined();
    expect(store.steps.listByRun(gone.id)).toEqual([]);
    expect(store.artifacts.listByRun(gone.id)).toEqual([]);
    expect(store.events.list({ workspace: 'gone.com' }, page()).total).toBe(0);
    expect(store.assetDiffs.list({ workspace: 'gone.com' }, page()).total).toBe(0);
    expect(store.vulnDiffs.list({ workspace: 'gone.com' }, page()).total).toBe(0);
    expect(store.vulnDiffs.list({ workspace: 'kept.com' }, page()).data).toMatchObject([{ run_id: kept.id }]);
    expect(store.workspaces.get('gone.com')).toMatchObject({ total_assets: 0, total_vulns: 0, vuln_high: 0 });

    expect(store.runs.get(kept.id)).toBeDefined();
    expect(store.steps.listByRun(kept.id)).toHaveLength(1);
    expect(store.artifacts.listByRun(kept.id)).toHaveLength(1);
    expect(store.workspaces.get('kept.com')).toMatchObject({ total_assets: 2, total_vulns: 1 });
    expect(store.stats.snapshot()).toMatchObject({ assets: { total: 2 }, vulnerabilities: { total: 1, high: 1 }, runs: { total: 1 } });

    expect(store.workspaces.delete('kept.com')).toBe(true);
    expect(store.workspaces.get('kept.com')).toBeUndefined();
    expect(store.stats.snapshot()).toMatchObject({ assets: { total: 0 }, vulnerabilities: { total: 0 }, runs: { total: 0 } });
    expect([store.assetDiffs.list({}, page()).total, store.vulnDiffs.list({}, page()).total]).toEqual([0, 0]);
    expect(store.workspaces.delete('kept.com')).toBe(false);
  });
});

describe('stats.snapshot', () => {
  it('has the documented shape and adds up', () => {
    const store = memStore();
    expect(store.stats.snapshot()).toEqual({
      runs: { total: 0, completed: 0, running: 0, failed: 0, pending: 0, cancelled: 0 },
      workspaces: { total: 0 },
      assets: { total: 0 },
      vulnerabilities: { total: 0, critical: 0, high: 0, medium: 0, low: 0, info: 0 },
      schedules: { total: 0, enabled: 0 },
    });
    const base = { workflow_name: 'w', workflow_kind: 'module', target: 't' };
    store.runs.create({ ...base, status: 'pending' });
    store.runs.create({ ...base });
    const r = store.runs.create({ ...base, status: 'running' });
    store.runs.create({ ...base, status: 'running' });
    store.runs.transition(r.id, 'completed');
    const f = store.runs.create({ ...base, status: 'running' });
    store.runs.transition(f.id, 'failed');
    const c = store.runs.create({ ...base });
    store.runs.transition(c.id, 'cancelled');
    store.assets.upsertMany('a.com', [{ asset_value: '1' }, { asset_value: '2' }]);
    store.vulns.upsertMany('b.com', ['critical', 'high', 'high', 'medium', 'low', 'info', 'unknown'].map((severity, i) => ({ vuln_info: `v${i}`, severity })));
    store.schedules.create({ name: 's1', workflow_name: 'w' });
    store.schedules.create({ name: 's2', workflow_name: 'w', is_enabled: false });

    const s = store.stats.snapshot();
    expect(s).toEqual({
      runs: { total: 6, completed: 1, running: 1, failed: 1, pending: 2, cancelled: 1 },
      workspaces: { total: 2 },
      assets: { total: 2 },
      vulnerabilities: { total: 7, critical: 1, high: 2, medium: 1, low: 1, info: 2 },
      schedules: { total: 2, enabled: 1 },
    });
    const v = s.vulnerabilities;
    expect(v.total).toBe(v.critical + v.high + v.medium + v.low + v.info);
    const r2 = s.runs;
    expect(r2.total).toBe(r2.completed + r2.running + r2.failed + r2.pending + r2.cancelled);
  });
});
