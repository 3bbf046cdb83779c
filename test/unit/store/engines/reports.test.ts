/** Diff snapshots, /stats and asset facets on both engines. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';
import { runReads } from '../../../../src/store/reads.js';
import { assetDiffReads, vulnDiffReads } from '../../../../src/ingest/diff.js';
import { renderReportAsync } from '../../../../src/report/index.js';

const T1 = '2024-01-01T00:00:00.000Z';

describe.each(ENGINES)('reports on $name', (engine) => {
  const s = useStore(engine);

  it('stores diff snapshots per table and lists them newest first with totals', async () => {
    const snap = (ws: string, n: number) => ({ workspace_name: ws, from_time: T1, to_time: T1, total_added: n, total_removed: 0, total_changed: 1, diff_data: '{"added":[]}' });
    const a = await s().assetDiffs.insert(snap('ws', 1));
    expect(a).toMatchObject({ ...snap('ws', 1), run_id: 0 });
    const b = await s().assetDiffs.insert({ ...snap('ws', 2), run_id: 7 });
    await s().assetDiffs.insert(snap('other', 3));
    await s().vulnDiffs.insert(snap('ws', 9));
    const page = await s().assetDiffs.list({ workspace: 'ws' }, { offset: 0, limit: 1 });
    expect(page.total).toBe(2);
    expect(page.data.map((d) => d.id)).toEqual([b.id]);
    expect((await s().vulnDiffs.list({}, { offset: 0, limit: 10 })).data.map((d) => d.total_added)).toEqual([9]);
    expect((await s().assetDiffs.list({ org_uuid: [] }, { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('stores a run’s asset and vulnerability snapshots together', async () => {
    const snap = (n: number) => ({ workspace_name: 'pair', from_time: T1, to_time: T1, total_added: n, total_removed: 0, total_changed: 0, diff_data: `{"n":${n}}`, run_id: 5 });
    const both = await s().assetDiffs.insertRunPair(snap(1), snap(2));
    expect(both.assets).toMatchObject(snap(1));
    expect(both.vulns).toMatchObject(snap(2));
    expect((await s().assetDiffs.list({ workspace: 'pair' }, { offset: 0, limit: 10 })).data).toEqual([both.assets]);
    expect((await s().vulnDiffs.list({ workspace: 'pair' }, { offset: 0, limit: 10 })).data).toEqual([both.vulns]);
    // Both or neither: a row one table refuses leaves nothing in the other.
    await expect(s().assetDiffs.insertRunPair(snap(3), { ...snap(4), workspace_name: null as never })).rejects.toThrow();
    expect((await s().assetDiffs.list({ workspace: 'pair' }, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('gives the /stats snapshot from counters, globally and per org', async () => {
    const org = await s().orgs.create({ name: 'team' });
    await s().assets.upsertMany('ws', [{ asset_value: 'a' }, { asset_value: 'b' }], T1);
    await s().vulns.upsertMany('ws', [{ vuln_info: 'x', severity: 'high' }, { vuln_info: 'y', severity: 'low' }], T1);
    await s().assets.upsertMany('team-ws', [{ asset_value: 'c' }], T1);
    await s().orgs.assign(org.uuid, ['team-ws']);
    const r = await s().runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', workspace: 'ws', status: 'running' });
    await s().runs.transition(r.id, 'completed');
    await s().runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', workspace: 'ws' });
    await s().schedules.create({ name: 'n', workflow_name: 'wf' });
    await s().schedules.create({ name: 'm', workflow_name: 'wf', is_enabled: false });
    expect(await s().stats.snapshot()).toEqual({
      runs: { total: 2, completed: 1, running: 0, failed: 0, pending: 1, cancelled: 0 },
      workspaces: { total: 2 },
      assets: { total: 3 },
      vulnerabilities: { total: 2, critical: 0, high: 1, medium: 0, low: 1, info: 0 },
      schedules: { total: 2, enabled: 1 },
    });
    expect(await s().stats.snapshot([org.uuid])).toEqual({
      runs: { total: 0, completed: 0, running: 0, failed: 0, pending: 0, cancelled: 0 },
      workspaces: { total: 1 },
      assets: { total: 1 },
      vulnerabilities: { total: 0, critical: 0, high: 0, medium: 0, low: 0, info: 0 },
      schedules: { total: 0, enabled: 0 },
    });
  });

  it('lists asset facets bytewise and facet totals', async () => {
    await s().assets.upsertMany('ws', [
      { asset_value: 'a', tech: ['nginx', 'PHP'], source: 'subfinder', remarks: 'cdn,waf', asset_type: 'subdomain', status_code: 200 },
      { asset_value: 'b', tech: ['Zope'], source: 'amass', remarks: '["cloud", "cdn"]', asset_type: 'url', status_code: 200 },
      { asset_value: 'c', asset_type: 'url', status_code: 404 },
    ], T1);
    await s().assets.upsertMany('other', [{ asset_value: 'd', tech: ['apache'], asset_type: 'ip' }], T1);
    expect(await s().assetStats.facets('ws')).toEqual({ technologies: ['PHP', 'Zope', 'nginx'], sources: ['amass', 'subfinder'], remarks: ['cdn', 'cloud', 'waf'], asset_types: ['subdomain', 'url'] });
    expect((await s().assetStats.facets()).technologies).toEqual(['PHP', 'Zope', 'apache', 'nginx']);
    expect((await s().assetStats.facets(undefined, [])).technologies).toEqual([]);
    expect(await s().assetStats.totals({ workspace: 'ws' })).toEqual({ byType: [{ k: 'url', n: 2 }, { k: 'subdomain', n: 1 }], byStatus: [{ k: 200, n: 2 }, { k: 404, n: 1 }], total: 3 });
    expect((await s().assetStats.totals({})).total).toBe(4);
  });
});

describe.each(ENGINES)('diff and report read programs on $name', (engine) => {
  const s = useStore(engine);
  const T0 = '2024-01-01T00:00:00.000Z';
  const T2 = '2024-03-01T00:00:00.000Z';
  const T3 = '2024-04-01T00:00:00.000Z';

  it('computes the asset and vulnerability diff of a window', async () => {
    await s().assets.upsertMany('ws', [{ asset_value: 'old.io', status_code: 200 }, { asset_value: 'gone.io' }], T0);
    await s().vulns.upsertMany('ws', [{ vuln_info: 'v-old', severity: 'low', asset_value: 'old.io' }], T0);
    await s().assets.upsertMany('ws', [{ asset_value: 'new.io' }, { asset_value: 'old.io', status_code: 500 }], T2);
    await s().vulns.upsertMany('ws', [{ vuln_info: 'v-new', severity: 'high', asset_value: 'new.io' }], T2);
    const a = await runReads(assetDiffReads('ws', T1.replace('01-01', '02-01'), T3), s());
    expect(a.added.map((x) => x.asset_value)).toEqual(['new.io']);
    expect(a.removed.map((x) => x.asset_value)).toEqual(['gone.io']);
    expect(a.changed).toEqual([{ asset_id: expect.any(Number), asset_value: 'old.io', url: '', changes: [{ field: 'status_code', old_value: 200, new_value: 500 }] }]);
    expect(a.summary).toEqual({ total_added: 1, total_removed: 1, total_changed: 1 });
    const v = await runReads(vulnDiffReads('ws', '2024-02-01T00:00:00.000Z', T3), s());
    expect(v.added.map((x) => x.vuln_info)).toEqual(['v-new']);
    expect(v.summary.total_removed).toBe(1);
  });

  it('renders a workspace report with the changes since a date', async () => {
    await s().assets.upsertMany('ws', [{ asset_value: 'a.io', asset_type: 'subdomain' }], T0);
    await s().vulns.upsertMany('ws', [{ vuln_info: 'xss', severity: 'high', asset_value: 'a.io' }], T2);
    const json = JSON.parse(await renderReportAsync(s(), 'ws', 'json', { since: '2024-02-01T00:00:00.000Z' }));
    expect(json.summary).toMatchObject({ assets: 1, assets_by_type: { subdomain: 1 }, findings: 1 });
    expect(json.changes.findings.summary.total_added).toBe(1);
    expect(json.changes.assets.summary.total_added).toBe(0);
  });
});
