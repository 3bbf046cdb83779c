/** Organizations over HTTP: CRUD, default-org protection, assignment, delete (move vs purge), ?org= filters, org resolution of new rows. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlAll, sqlCount, sqlGet } from '../helpers/engine-sql.js';
import { importAssetsJsonl, importVulnsJsonl } from '../../src/ingest/index.js';
import { DEFAULT_ORG_UUID } from '../../src/store/index.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
let t: TestServer;

beforeEach(async () => {
  t = await makeTestServer();
});
afterEach(async () => {
  await t.close();
});

const inject = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.server.inject({ method, url, headers: t.auth, ...(payload === undefined ? {} : { payload: payload as object }) });
const get = (url: string) => inject('GET', url);
const orgOf = async (table: string, where: string, ...params: unknown[]) =>
  (await sqlAll<{ org_uuid: string }>(t, `SELECT DISTINCT org_uuid FROM ${table} WHERE ${where}`, ...params)).map((r) => r.org_uuid);
const count = (table: string, where = '1=1', ...params: unknown[]) => sqlCount(t, `SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, ...params);

/** Two workspaces with assets (httpx), findings (nuclei) and a finished run each. */
async function seed(): Promise<void> {
  await importAssetsJsonl(t.app.repos, 'example.com', fx('httpx-run1.jsonl'));
  await importAssetsJsonl(t.app.repos, 'other.org', fx('httpx-run2.jsonl'));
  await importVulnsJsonl(t.app.repos, 'example.com', fx('nuclei.jsonl'));
  for (const ws of ['example.com', 'other.org']) {
    const run = await t.app.repos.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: ws, workspace: ws, status: 'running' });
    await t.app.repos.runs.transition(run.id, 'completed');
  }
}

async function createOrg(body: Record<string, unknown>) {
  const r = await inject('POST', '/osm/api/orgs', body);
  expect(r.statusCode, r.body).toBe(201);
  return r.json().data as { uuid: string; name: string };
}

describe('org CRUD', () => {
  it('starts with the default org, with stats', async () => {
    await seed();
    const r = await get('/osm/api/orgs');
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.total).toBe(1);
    expect(body.data[0]).toMatchObject({ uuid: DEFAULT_ORG_UUID, name: 'default', is_default: true, tags: [] });
    expect(body.data[0].stats).toEqual({
      org_uuid: DEFAULT_ORG_UUID, org_name: 'default', total_workspaces: 2, total_assets: await count('assets'), total_vulns: await count('vulnerabilities'), total_runs: 2,
      workspaces: ['example.com', 'other.org'],
    });
  });

  it('creates orgs (201 {data}), lists the default first then by name, and finds them by name (any case) or uuid', async () => {
    const zeta = await createOrg({ name: 'zeta', description: 'last', tags: ['b', 'a', 'b', ' '] });
    expect(zeta).toMatchObject({ name: 'zeta', description: 'last', tags: ['b', 'a'], is_default: false });
    expect(zeta.uuid).toMatch(/^[0-9a-f-]{36}$/);
    const acme = await createOrg({ name: '  Acme ', uuid: 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE' });
    expect(acme).toMatchObject({ name: 'Acme', uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' });
    const list = (await get('/osm/api/orgs')).json();
    expect(list.data.map((o: { name: string }) => o.name)).toEqual(['default', 'Acme', 'zeta']);
    expect(list.total).toBe(3);
    expect(list.data[1].stats).toMatchObject({ total_workspaces: 0, total_assets: 0, workspaces: [] });

    for (const ref of ['acme', 'ACME', acme.uuid, acme.uuid.toUpperCase()]) {
      const r = await get(`/osm/api/orgs/${encodeURIComponent(ref)}`);
      expect(r.statusCode, ref).toBe(200);
      expect(r.json().data.uuid).toBe(acme.uuid);
    }
    const stats = (await get('/osm/api/orgs/zeta/stats')).json();
    expect(stats.data).toEqual({ org_uuid: zeta.uuid, org_name: 'zeta', total_workspaces: 0, total_assets: 0, total_vulns: 0, total_runs: 0, workspaces: [] });
  });

  it('rejects bad bodies with the reference messages, never a raw SQL error', async () => {
    await createOrg({ name: 'acme' });
    const cases: [unknown, number, string][] = [
      [{}, 400, 'name is required'],
      [{ name: '   ' }, 400, 'name is required'],
      [{ name: 5 }, 400, 'invalid request body: name: '],
      [{ name: 'x', tags: 'a,b' }, 400, 'invalid request body: tags: '],
      [{ name: 'x', uuid: 'not-a-uuid' }, 400, 'invalid request body: uuid: must be a uuid'],
      [{ name: DEFAULT_ORG_UUID }, 400, 'invalid request body: name: must not be a uuid'],
      [{ name: 'ACME' }, 400, 'failed to create org "ACME": an org named "acme" already exists'],
      [{ name: 'Default' }, 400, 'failed to create org "Default": an org named "default" already exists'],
      [{ name: 'other', uuid: DEFAULT_ORG_UUID }, 400, `failed to create org "other": an org with uuid ${DEFAULT_ORG_UUID} already exists`],
      [[1, 2], 400, 'Invalid request body'],
    ];
    for (const [body, status, message] of cases) {
      const r = await inject('POST', '/osm/api/orgs', body);
      expect(r.statusCode, JSON.stringify(body)).toBe(status);
      expect(r.json().error).toBe(true);
      expect(r.json().message, JSON.stringify(body)).toContain(message);
      expect(r.json().message).not.toMatch(/SQLITE|constraint/i);
    }
    expect((await get('/osm/api/orgs')).json().total).toBe(2);
  });

  it('404 org not found: <ref> on every /orgs/:uuid route', async () => {
    for (const [method, url] of [['GET', '/osm/api/orgs/nope'], ['GET', '/osm/api/orgs/nope/stats'], ['PUT', '/osm/api/orgs/nope'], ['DELETE', '/osm/api/orgs/nope']] as const) {
      const r = await inject(method, url, method === 'PUT' ? { description: 'x' } : undefined);
      expect(r.statusCode, url).toBe(404);
      expect(r.json()).toEqual({ error: true, message: 'org not found: nope' });
    }
    const r = await get(`/osm/api/orgs/${'12345678-1234-4234-8234-123456789abc'}`);
    expect(r.json().message).toBe('org not found: 12345678-1234-4234-8234-123456789abc');
  });

  it('PUT renames, describes and tags; empty name and description are ignored; names stay unique', async () => {
    const acme = await createOrg({ name: 'acme', description: 'first', tags: ['x'] });
    await createOrg({ name: 'beta' });
    let r = await inject('PUT', '/osm/api/orgs/acme', { name: 'Acme Corp', description: 'second', tags: ['p', 'q'] });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ data: expect.objectContaining({ uuid: acme.uuid, name: 'Acme Corp', description: 'second', tags: ['p', 'q'] }) });
    expect(r.json()).not.toHaveProperty('assigned');
    r = await inject('PUT', `/osm/api/orgs/${acme.uuid}`, { name: '', description: '' });
    expect(r.json().data).toMatchObject({ name: 'Acme Corp', description: 'second', tags: ['p', 'q'] });
    r = await inject('PUT', '/osm/api/orgs/acme%20corp', { tags: [] });
    expect(r.json().data.tags).toEqual([]);
    r = await inject('PUT', '/osm/api/orgs/acme%20corp', { name: 'BETA' });
    expect(r.statusCode).toBe(409);
    expect(r.json().message).toBe('an org named "beta" already exists');
    r = await inject('PUT', '/osm/api/orgs/beta', { name: 'Beta' });
    expect(r.statusCode).toBe(200);
    expect(r.json().data.name).toBe('Beta');
    r = await inject('PUT', '/osm/api/orgs/beta', { workspaces: 'example.com' });
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(/^invalid request body: workspaces: /);
  });
});

describe('default org protection', () => {
  it('cannot be renamed or deleted (403); its description, tags and assignments can change', async () => {
    for (const ref of ['default', DEFAULT_ORG_UUID]) {
      let r = await inject('PUT', `/osm/api/orgs/${ref}`, { name: 'main' });
      expect(r.statusCode).toBe(403);
      expect(r.json()).toEqual({ error: true, message: 'the default org cannot be deleted or renamed' });
      for (const purge of ['', '?purge=true', '?purge=false']) {
        r = await inject('DELETE', `/osm/api/orgs/${ref}${purge}`);
        expect(r.statusCode).toBe(403);
        expect(r.json().message).toBe('the default org cannot be deleted or renamed');
      }
    }
    const r = await inject('PUT', '/osm/api/orgs/default', { name: 'default', description: 'everything else', tags: ['base'] });
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ name: 'default', description: 'everything else', tags: ['base'], is_default: true });
  });
});

describe('assigning workspaces', () => {
  it('moves the workspace rows, assets, findings and runs in one go and returns the counts', async () => {
    await seed();
    const acme = await createOrg({ name: 'acme' });
    const assets = await count('assets', 'workspace = ?', 'example.com');
    const vulns = await count('vulnerabilities', 'workspace = ?', 'example.com');
    let r = await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['example.com', 'missing.net'] });
    expect(r.statusCode).toBe(200);
    expect(r.json().assigned).toEqual({ workspaces: 1, assets, vulnerabilities: vulns, runs: 1 });
    expect(r.json().unknown_workspaces).toEqual(['missing.net']);
    for (const table of ['assets', 'vulnerabilities', 'runs']) expect(await orgOf(table, 'workspace = ?', 'example.com'), table).toEqual([acme.uuid]);
    expect(await orgOf('workspaces', 'name = ?', 'example.com')).toEqual([acme.uuid]);
    expect(await orgOf('assets', 'workspace = ?', 'other.org')).toEqual([DEFAULT_ORG_UUID]);
    // Again: nothing left to move.
    r = await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['example.com'] });
    expect(r.json().assigned).toEqual({ workspaces: 0, assets: 0, vulnerabilities: 0, runs: 0 });

    const stats = (await get('/osm/api/orgs/acme/stats')).json().data;
    expect(stats).toEqual({ org_uuid: acme.uuid, org_name: 'acme', total_workspaces: 1, total_assets: assets, total_vulns: vulns, total_runs: 1, workspaces: ['example.com'] });
    const list = (await get('/osm/api/orgs')).json().data;
    expect(list[0].stats).toMatchObject({ total_workspaces: 1, total_assets: await count('assets', 'workspace = ?', 'other.org'), total_vulns: 0, total_runs: 1, workspaces: ['other.org'] });
    expect(list[1].stats).toEqual(stats);
  });

  it('new rows of an assigned workspace take its org; rows of other workspaces stay in the default org', async () => {
    await seed();
    const acme = await createOrg({ name: 'acme' });
    await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['example.com'] });
    // Bulk import (the ingest path), the API's plain insert, a single asset insert and a new run.
    await importAssetsJsonl(t.app.repos, 'example.com', fx('httpx-run2.jsonl'));
    const created = await inject('POST', '/osm/api/vulnerabilities', { workspace: 'example.com', vuln_info: 'manual-1', severity: 'high' });
    expect(created.statusCode).toBe(201);
    expect(created.json().data.org_uuid).toBe(acme.uuid);
    await t.app.repos.assets.insert('example.com', { asset_value: 'manual.example.com' });
    const run = await t.app.repos.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'example.com', workspace: 'example.com' });
    expect((await t.app.repos.runs.get(run.id))?.org_uuid).toBe(acme.uuid);
    for (const table of ['assets', 'vulnerabilities', 'runs']) expect(await orgOf(table, 'workspace = ?', 'example.com'), table).toEqual([acme.uuid]);
    // A new workspace, and a run that moves into the assigned workspace.
    await importVulnsJsonl(t.app.repos, 'fresh.io', fx('nuclei.jsonl'));
    expect(await orgOf('vulnerabilities', 'workspace = ?', 'fresh.io')).toEqual([DEFAULT_ORG_UUID]);
    expect(await orgOf('workspaces', 'name = ?', 'fresh.io')).toEqual([DEFAULT_ORG_UUID]);
    const moving = await t.app.repos.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'https://example.com/x', workspace: 'https___example.com_x' });
    expect((await t.app.repos.runs.get(moving.id))?.org_uuid).toBe(DEFAULT_ORG_UUID);
    await t.app.repos.runs.update(moving.id, { workspace: 'example.com' });
    expect((await t.app.repos.runs.get(moving.id))?.org_uuid).toBe(acme.uuid);
    // Totals stay exact after the new rows.
    const stats = (await get('/osm/api/orgs/acme/stats')).json().data;
    expect(stats.total_assets).toBe(await count('assets', 'workspace = ?', 'example.com'));
    expect(stats.total_vulns).toBe(await count('vulnerabilities', 'workspace = ?', 'example.com'));
  });
});

describe('?org= filters', () => {
  it('narrow runs, workspaces, assets and vulnerabilities (and their totals); unknown org → 400', async () => {
    await seed();
    const acme = await createOrg({ name: 'acme' });
    await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['other.org'] });
    const other = { assets: await count('assets', 'workspace = ?', 'other.org'), http: await count('assets', "workspace = 'other.org' AND asset_type = 'http'") };
    for (const ref of ['acme', 'ACME', acme.uuid]) {
      const assets = (await get(`/osm/api/assets?org=${ref}&limit=100`)).json();
      expect(assets.pagination.total).toBe(other.assets);
      expect(assets.data).toHaveLength(other.assets);
      expect(assets.data.every((a: { workspace: string; org_uuid: string }) => a.workspace === 'other.org' && a.org_uuid === acme.uuid)).toBe(true);
    }
    const byType = (await get('/osm/api/assets?org=acme&asset_type=http')).json();
    expect(byType.pagination.total).toBe(other.http);
    expect(byType.data).toHaveLength(other.http);
    const code = (await sqlGet<{ status_code: number }>(t, "SELECT status_code FROM assets WHERE workspace = 'other.org' AND status_code > 0 LIMIT 1"))!.status_code;
    const byCode = (await get(`/osm/api/assets?org=acme&status_code=${code}`)).json();
    expect(byCode.pagination.total).toBe(await count('assets', "workspace = 'other.org' AND status_code = ?", code));
    expect(byCode.data.length).toBe(byCode.pagination.total);
    expect((await get('/osm/api/assets?org=acme&search=example')).json().pagination.total).toBe(await count('assets', "workspace = 'other.org' AND (asset_value LIKE '%example%' OR url LIKE '%example%' OR title LIKE '%example%' OR host_ip LIKE '%example%')"));
    expect((await get('/osm/api/assets?org=acme&workspace=example.com')).json().pagination).toMatchObject({ total: 0 });
    expect((await get('/osm/api/assets?org=default')).json().pagination.total).toBe(await count('assets', 'workspace = ?', 'example.com'));

    expect((await get('/osm/api/vulnerabilities?org=acme')).json()).toMatchObject({ data: [], pagination: { total: 0 } });
    const dv = (await get('/osm/api/vulnerabilities?org=default&severity=critical,high&limit=100')).json();
    expect(dv.pagination.total).toBe(await count('vulnerabilities', "severity IN ('critical','high')"));
    expect(dv.data).toHaveLength(dv.pagination.total);
    expect(dv.data[0].org_uuid).toBe(DEFAULT_ORG_UUID);

    const runs = (await get('/osm/api/runs?org=acme')).json();
    expect(runs.pagination.total).toBe(1);
    expect(runs.data.map((r: { workspace: string }) => r.workspace)).toEqual(['other.org']);
    expect((await get('/osm/api/runs?org=default&status=completed')).json().pagination.total).toBe(1);

    const ws = (await get('/osm/api/workspaces?org=acme')).json();
    expect(ws.data.map((w: { name: string; org_uuid: string }) => [w.name, w.org_uuid])).toEqual([['other.org', acme.uuid]]);
    expect(ws.pagination.total).toBe(1);
    const fsList = (await get('/osm/api/workspaces?org=default&filesystem=true')).json();
    expect(fsList.data.map((w: { name: string }) => w.name)).toEqual(['example.com']);

    for (const url of ['/osm/api/runs', '/osm/api/workspaces', '/osm/api/assets', '/osm/api/vulnerabilities', '/osm/api/workspaces?filesystem=true&']) {
      const r = await get(`${url}${url.endsWith('&') ? '' : '?'}org=nope`);
      expect(r.statusCode, url).toBe(400);
      expect(r.json()).toEqual({ error: true, message: 'org not found: nope' });
    }
    // An empty org filter is no filter.
    expect((await get('/osm/api/assets?org=')).json().pagination.total).toBe(await count('assets'));
  });
});

describe('DELETE /osm/api/orgs/:uuid', () => {
  it('moves the org\'s rows to the default org by default', async () => {
    await seed();
    const acme = await createOrg({ name: 'acme' });
    await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['example.com'] });
    const before = { assets: await count('assets'), vulns: await count('vulnerabilities'), runs: await count('runs'), workspaces: await count('workspaces') };
    const r = await inject('DELETE', '/osm/api/orgs/acme?purge=false');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      message: 'org deleted', uuid: acme.uuid, name: 'acme', purged: false,
      rows: { workspaces: 1, assets: await count('assets', 'workspace = ?', 'example.com'), vulnerabilities: await count('vulnerabilities', 'workspace = ?', 'example.com'), runs: 1 },
    });
    expect({ assets: await count('assets'), vulns: await count('vulnerabilities'), runs: await count('runs'), workspaces: await count('workspaces') }).toEqual(before);
    for (const table of ['assets', 'vulnerabilities', 'runs', 'workspaces']) expect(await orgOf(table, '1=1'), table).toEqual([DEFAULT_ORG_UUID]);
    expect((await get('/osm/api/orgs/acme')).statusCode).toBe(404);
    expect((await get('/osm/api/orgs')).json().total).toBe(1);
  });

  it('purge=true deletes the org\'s workspaces with their data, in one transaction, and keeps the counters exact', async () => {
    await seed();
    const acme = await createOrg({ name: 'acme' });
    await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['example.com'] });
    const keep = { assets: await count('assets', 'workspace = ?', 'other.org'), runs: await count('runs', 'workspace = ?', 'other.org') };
    const steps = (await t.app.repos.runs.list({ workspace: 'example.com' }, { offset: 0, limit: 10 })).data[0]!;
    await t.app.repos.steps.create({ run_id: steps.id, run_uuid: steps.run_uuid, step_name: 's', step_type: 'bash' });
    for (const run of (await t.app.repos.runs.list({}, { offset: 0, limit: 10 })).data) {
      const diff = { workspace_name: run.workspace, from_time: 'a', to_time: 'b', total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id };
      await t.app.repos.assetDiffs.insert(diff);
      await t.app.repos.vulnDiffs.insert(diff);
    }
    const r = await inject('DELETE', `/osm/api/orgs/${acme.uuid}?purge=true`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ message: 'org deleted', uuid: acme.uuid, name: 'acme', purged: true, rows: { workspaces: 1, runs: 1 } });
    expect(await count('assets', 'workspace = ?', 'example.com')).toBe(0);
    expect(await count('vulnerabilities', 'workspace = ?', 'example.com')).toBe(0);
    expect(await count('runs', 'workspace = ?', 'example.com')).toBe(0);
    expect(await count('step_results', 'run_id = ?', steps.id)).toBe(0);
    expect(await count('workspaces', 'name = ?', 'example.com')).toBe(0);
    for (const table of ['asset_diffs', 'vuln_diffs']) {
      expect(await count(table, 'workspace_name = ?', 'example.com'), table).toBe(0);
      expect(await count(table, 'workspace_name = ?', 'other.org'), table).toBe(1);
    }
    expect((await get('/osm/api/vulnerabilities/diffs')).json().data.map((d: { workspace_name: string }) => d.workspace_name)).toEqual(['other.org']);
    expect(await count('assets')).toBe(keep.assets);
    expect(await count('runs')).toBe(keep.runs);
    const stats = (await get('/osm/api/stats')).json();
    expect(stats.assets.total).toBe(keep.assets);
    expect(stats.vulnerabilities.total).toBe(0);
  });

  it('refuses to purge an org with active runs (409); moving is allowed', async () => {
    await createOrg({ name: 'acme' });
    await t.app.repos.workspaces.upsertRunInfo({ name: 'busy.io', local_path: '' });
    await inject('PUT', '/osm/api/orgs/acme', { workspaces: ['busy.io'] });
    await t.app.repos.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'busy.io', workspace: 'busy.io', status: 'running' });
    const r = await inject('DELETE', '/osm/api/orgs/acme?purge=true');
    expect(r.statusCode).toBe(409);
    expect(r.json().message).toBe('org acme has 1 active run(s); cancel them before purging it');
    expect((await inject('DELETE', '/osm/api/orgs/acme')).json()).toMatchObject({ purged: false, rows: { workspaces: 1, runs: 1 } });
  });

  it('rejects a bad purge value', async () => {
    await createOrg({ name: 'acme' });
    const r = await inject('DELETE', '/osm/api/orgs/acme?purge=maybe');
    expect(r.statusCode).toBe(400);
    expect((await get('/osm/api/orgs/acme')).statusCode).toBe(200);
  });
});
