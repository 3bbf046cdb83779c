import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { indexWorkflows } from '../../src/workflow/indexer.js';
import type { RunStatus } from '../../src/store/index.js';

let t: TestServer;

beforeAll(async () => {
  t = await makeTestServer();
});

afterAll(async () => {
  await t?.close();
});

const stats = async () => {
  const res = await t.server.inject({ method: 'GET', url: '/osm/api/stats', headers: t.auth });
  expect(res.statusCode).toBe(200);
  return res.json();
};

/** Invariants that must hold for any database. */
function checkInvariants(s: Record<string, Record<string, number>>): void {
  expect(s.workflows!.total).toBe(s.workflows!.flows! + s.workflows!.modules!);
  const v = s.vulnerabilities!;
  expect(v.total).toBe(v.critical! + v.high! + v.medium! + v.low!);
  const r = s.runs!;
  expect(r.total).toBe(r.completed! + r.running! + r.failed! + r.pending! + r.cancelled!);
  expect(s.schedules!.enabled).toBeLessThanOrEqual(s.schedules!.total!);
}

describe('GET /osm/api/stats', () => {
  it('requires authentication', async () => {
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/stats' })).statusCode).toBe(401);
  });

  it('answers the spec object (not wrapped) on an empty database', async () => {
    const s = await stats();
    expect(Object.keys(s).sort()).toEqual(['assets', 'runs', 'schedules', 'vulnerabilities', 'workflows', 'workspaces']);
    expect(s.runs).toEqual({ total: 0, completed: 0, running: 0, failed: 0, pending: 0, cancelled: 0 });
    expect(s.assets).toEqual({ total: 0 });
    expect(s.workspaces).toEqual({ total: 0 });
    expect(s.vulnerabilities).toEqual({ total: 0, critical: 0, high: 0, medium: 0, low: 0, info: 0 });
    expect(s.schedules).toEqual({ total: 0, enabled: 0 });
    checkInvariants(s);
  });

  it('counts everything and keeps the invariants', async () => {
    const store = t.app.repos;
    await indexWorkflows(t.app.repos, t.app.settings().paths.workflows, { loader: t.app.loader });
    const kinds = await store.workflows.countByKind();
    expect(kinds.flows + kinds.modules).toBeGreaterThan(0);
    const statuses: RunStatus[] = ['completed', 'completed', 'failed', 'running', 'queued', 'pending', 'cancelled'];
    for (const status of statuses) {
      const initial = status === 'pending' || status === 'queued' ? status : 'running';
      const run = await store.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'x.com', status: initial });
      if (initial !== status) await store.runs.transition(run.id, status);
    }
    await store.workspaces.upsertRunInfo({ name: 'a.com', local_path: '/tmp/a' });
    await store.workspaces.upsertRunInfo({ name: 'b.com', local_path: '/tmp/b' });
    await store.assets.insert('a.com', { asset_value: 'www.a.com' });
    await store.assets.insert('a.com', { asset_value: 'api.a.com' });
    await store.assets.insert('b.com', { asset_value: 'b.com' });
    for (const severity of ['critical', 'high', 'high', 'medium', 'low', 'info', 'info'] as const) {
      await store.vulns.create({ workspace: 'a.com', vuln_info: `v-${severity}-${Math.random()}`, severity, asset_value: 'www.a.com' });
    }
    await store.schedules.create({ name: 's1', workflow_name: 'w', schedule: '0 * * * *' });
    await store.schedules.create({ name: 's2', workflow_name: 'w', schedule: '0 * * * *', is_enabled: false });

    const s = await stats();
    expect(s.workflows).toEqual({ total: kinds.flows + kinds.modules, flows: kinds.flows, modules: kinds.modules });
    expect(s.runs).toEqual({ total: 7, completed: 2, running: 1, failed: 1, pending: 2, cancelled: 1 });
    expect(s.workspaces).toEqual({ total: 2 });
    expect(s.assets).toEqual({ total: 3 });
    expect(s.vulnerabilities).toEqual({ total: 5, critical: 1, high: 2, medium: 1, low: 1, info: 2 });
    expect(s.schedules).toEqual({ total: 2, enabled: 1 });
    checkInvariants(s);
  });
});
