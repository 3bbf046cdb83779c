/** The orgs and workspaces repositories on both engines. */
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../../../src/store/async.js';
import { DEFAULT_ORG_UUID } from '../../../../src/store/org-constants.js';
import { ENGINES, useStore } from './engines.js';

const run = (s: AsyncStore, workspace: string, status: 'queued' | 'running' = 'queued') => s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', workspace, status });

describe.each(ENGINES)('orgs on $name', (engine) => {
  const s = useStore(engine);

  it('creates, lists (default first, then by name ignoring case), finds by name ignoring case and updates', async () => {
    const b = await s().orgs.create({ name: 'beta', tags: ['x'] });
    const a = await s().orgs.create({ name: 'Alpha', description: 'd' });
    const c = await s().orgs.create({ name: 'charlie', uuid: 'c0000000-0000-0000-0000-000000000000' });
    expect((await s().orgs.list()).map((o) => o.name)).toEqual(['default', 'Alpha', 'beta', 'charlie']);
    expect(await s().orgs.getByName('ALPHA')).toEqual(a);
    expect(await s().orgs.get(c.uuid)).toMatchObject({ uuid: c.uuid, is_default: false, tags: [] });
    expect((await s().orgs.get(DEFAULT_ORG_UUID))?.is_default).toBe(true);
    await expect(s().orgs.create({ name: 'BETA' })).rejects.toThrow();
    expect(await s().orgs.update(b.uuid, {})).toEqual(b);
    expect(await s().orgs.update(b.uuid, { name: 'bravo', tags: ['y', 'z'] })).toMatchObject({ name: 'bravo', tags: ['y', 'z'], description: '' });
    expect(await s().orgs.update('missing', { name: 'x' })).toBeUndefined();
  });

  it('assigns workspaces with their runs, reports stats and removes (move or purge)', async () => {
    const org = await s().orgs.create({ name: 'team' });
    await s().workspaces.upsertRunInfo({ name: 'w1', local_path: '/w1' });
    await s().workspaces.upsertRunInfo({ name: 'w2', local_path: '/w2' });
    await run(s(), 'w1', 'running');
    await run(s(), 'w1');
    await run(s(), 'w2');
    const res = await s().orgs.assign(org.uuid, ['w1', 'w1', 'nope']);
    expect(res).toEqual({ counts: { workspaces: 1, assets: 0, vulnerabilities: 0, runs: 2 }, missing: ['nope'] });
    expect((await s().orgs.assign(org.uuid, ['w1'])).counts).toEqual({ workspaces: 0, assets: 0, vulnerabilities: 0, runs: 0 });
    expect(await s().orgs.orgOfWorkspace('w1')).toBe(org.uuid);
    expect(await s().orgs.orgOfWorkspace('unknown')).toBe(DEFAULT_ORG_UUID);
    expect(await s().orgs.activeRuns(org.uuid)).toBe(2);
    // A run created in w1 now lands in the org.
    expect((await run(s(), 'w1')).org_uuid).toBe(org.uuid);
    const stats = await s().orgs.stats(org);
    expect(stats).toEqual({ org_uuid: org.uuid, org_name: 'team', total_workspaces: 1, total_assets: 0, total_vulns: 0, total_runs: 3, workspaces: ['w1'] });
    const def = (await s().orgs.get(DEFAULT_ORG_UUID))!;
    const all = await s().orgs.statsAll([def, org]);
    expect(all.get(org.uuid)).toEqual(stats);
    expect(all.get(DEFAULT_ORG_UUID)).toMatchObject({ total_workspaces: 1, total_runs: 1, workspaces: ['w2'] });
    await expect(s().orgs.remove(DEFAULT_ORG_UUID, false)).rejects.toThrow();
    const other = await s().orgs.create({ name: 'other' });
    await s().orgs.assign(other.uuid, ['w2']);
    expect(await s().orgs.remove(other.uuid, false)).toEqual({ workspaces: 1, assets: 0, vulnerabilities: 0, runs: 1 });
    expect(await s().orgs.orgOfWorkspace('w2')).toBe(DEFAULT_ORG_UUID);
    await s().events.insert({ topic: 't', workspace: 'w1' });
    expect(await s().orgs.remove(org.uuid, true)).toEqual({ workspaces: 1, assets: 0, vulnerabilities: 0, runs: 3 });
    expect(await s().workspaces.get('w1')).toBeUndefined();
    expect((await s().events.list({ workspace: 'w1' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect(await s().orgs.get(org.uuid)).toBeUndefined();
  });
  it('imports into an assigned workspace land in its org; into a new workspace, in the default org', async () => {
    const org = await s().orgs.create({ name: 'importers' });
    await s().workspaces.upsertRunInfo({ name: 'team-ws', local_path: '/team-ws' });
    await s().orgs.assign(org.uuid, ['team-ws']);
    const a = await s().assets.upsertMany('team-ws', [{ asset_value: 'a.example.com' }, { asset_value: 'b.example.com' }]);
    const v = await s().vulns.upsertMany('team-ws', [{ vuln_info: 'x', asset_value: 'a.example.com' }]);
    const lone = await s().assets.upsertMany('fresh-ws', [{ asset_value: 'c.example.com' }]);
    for (const id of a.newIds) expect((await s().assets.get(id))?.org_uuid).toBe(org.uuid);
    expect((await s().vulns.get(v.newIds[0]!))?.org_uuid).toBe(org.uuid);
    expect((await s().assets.get(lone.newIds[0]!))?.org_uuid).toBe(DEFAULT_ORG_UUID);
    expect(await s().orgs.stats(org)).toMatchObject({ total_assets: 2, total_vulns: 1 });
  });
});

describe.each(ENGINES)('workspaces on $name', (engine) => {
  const s = useStore(engine);

  it('upserts run info keeping fields not given, lists by name with a case-insensitive search', async () => {
    const w = await s().workspaces.upsertRunInfo({ name: 'b-ws', local_path: '/b', run_workflow: 'wf', last_run: '2024-01-01T00:00:00.000Z' });
    expect(w).toMatchObject({ name: 'b-ws', local_path: '/b', data_source: 'local', run_workflow: 'wf', total_assets: 0, org_uuid: DEFAULT_ORG_UUID });
    const again = await s().workspaces.upsertRunInfo({ name: 'b-ws', local_path: '/b2', data_source: 'imported' });
    expect(again).toMatchObject({ id: w.id, local_path: '/b2', data_source: 'imported', run_workflow: 'wf', last_run: '2024-01-01T00:00:00.000Z', created_at: w.created_at });
    await s().workspaces.upsertRunInfo({ name: 'A_ws', local_path: '/a' });
    await s().workspaces.upsertRunInfo({ name: 'c%ws', local_path: '/c' });
    expect(await s().workspaces.names()).toEqual(['A_ws', 'b-ws', 'c%ws']);
    const page = await s().workspaces.list({}, { offset: 1, limit: 1 });
    expect(page.total).toBe(3);
    expect(page.data.map((x) => x.name)).toEqual(['b-ws']);
    expect((await s().workspaces.list({ search: 'a_' }, { offset: 0, limit: 10 })).data.map((x) => x.name)).toEqual(['A_ws']);
    expect((await s().workspaces.list({ search: '%' }, { offset: 0, limit: 10 })).data.map((x) => x.name)).toEqual(['c%ws']);
    expect((await s().workspaces.list({ data_source: 'imported' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect(await s().workspaces.setDataSource('A_ws', 'cloud')).toBe(true);
    expect(await s().workspaces.setDataSource('none', 'cloud')).toBe(false);
  });

  it('keeps file counters, recomputes exact ones and deletes a workspace with its data', async () => {
    expect(await s().workspaces.addToCounter('new-ws', 'total_urls', 5)).toBe(5);
    expect(await s().workspaces.addToCounter('new-ws', 'total_urls', 2.9)).toBe(7);
    expect(await s().workspaces.counter('new-ws', 'total_urls')).toBe(7);
    expect(await s().workspaces.addToCounter('new-ws', 'total_urls', 0, true)).toBe(0);
    await expect(s().workspaces.addToCounter('new-ws', 'total_assets' as never, 1)).rejects.toThrow(/unknown workspace counter/);
    await expect(s().workspaces.counter('new-ws', 'nope' as never)).rejects.toThrow(/unknown workspace counter/);
    expect(await s().workspaces.counter('missing', 'total_vulns')).toBe(0);
    await s().workspaces.addToCounter('new-ws', 'total_subdomains', 3);
    expect(await s().workspaces.recomputeCounters('new-ws')).toMatchObject({ total_subdomains: 0, total_assets: 0, vuln_info: 0 });
    expect(await s().workspaces.recomputeCounters('missing')).toBeUndefined();
    const r = await run(s(), 'new-ws');
    await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'x', step_type: 'bash', workspace: 'new-ws' });
    await s().artifacts.upsert({ run_id: r.id, workspace: 'elsewhere', name: 'n', artifact_path: '/p', artifact_type: 'output', content_type: 'text', size_bytes: 0, line_count: 0, optional: false, description: '' });
    await s().events.insert({ topic: 't', workspace: 'new-ws' });
    await run(s(), 'kept');
    expect(await s().workspaces.deleteData('new-ws')).toEqual({ assets: 0, vulns: 0, runs: 1 });
    expect(await s().runs.get(r.id)).toBeUndefined();
    expect(await s().artifacts.listByRun(r.id)).toEqual([]);
    expect((await s().steps.list({ run_id: r.id }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().runs.list({}, { offset: 0, limit: 10 })).total).toBe(1);
    expect(await s().workspaces.delete('new-ws')).toBe(true);
    expect(await s().workspaces.delete('new-ws')).toBe(false);
  });
});
