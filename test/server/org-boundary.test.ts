/**
 * Organizations as a boundary: a credential bound to an org sees and acts on only its org's runs,
 * workspaces, assets, vulnerabilities, artifacts, schedules, events, snapshots and stats; another
 * org's objects answer 404 (never 403: no existence oracle); runs it starts are created in its org;
 * server-wide routes are refused to it; unbound admins see everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { createToken } from '../../src/services/tokens.js';
import { DEFAULT_ORG_UUID } from '../../src/store/org-constants.js';

let t: TestServer;
const WA = 'acmecorp.com';
const WB = 'globexcorp.com';
let orgA: string;
let orgB: string;
const tok: Record<string, Record<string, string>> = {};
const ids: Record<string, { run: string; runId: number; job: string; asset: number; vuln: number; schedule: string; snapshot: string }> = {};

const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  t.server.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
const admin = (method: string, url: string, payload?: unknown) => call(method, url, t.auth, payload);

async function waitRun(uuid: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const s = (await admin('GET', `/osm/api/runs/${uuid}`)).json().data.status;
    if (['completed', 'failed', 'cancelled'].includes(s)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${uuid} did not finish`);
}

beforeAll(async () => {
  t = await makeTestServer({ withQueue: true });
  orgA = (await admin('POST', '/osm/api/orgs', { name: 'acme' })).json().data.uuid;
  orgB = (await admin('POST', '/osm/api/orgs', { name: 'globex' })).json().data.uuid;
  for (const [ws, org, key] of [[WA, orgA, 'a'], [WB, orgB, 'b']] as const) {
    const created = (await admin('POST', '/osm/api/runs', { module: 'sample-recon', target: ws })).json();
    await waitRun(created.run_uuid);
    expect((await admin('PUT', `/osm/api/orgs/${org}`, { workspaces: [ws] })).statusCode).toBe(200);
    await t.app.repos.assets.upsertMany(ws, [{ asset_value: `x.${ws}`, asset_type: 'subdomain' } as never]);
    const vuln = (await admin('POST', '/osm/api/vulnerabilities', { workspace: ws, vuln_title: `finding in ${ws}`, severity: 'high' })).json().data;
    const snapshot = (await admin('POST', '/osm/api/snapshots/export', { workspace: ws })).headers['content-disposition']!.toString().split('filename=')[1]!;
    const run = (await t.app.repos.runs.getByUuid(created.run_uuid))!;
    ids[key] = { run: created.run_uuid, runId: run.id, job: created.job_id, asset: (await t.app.repos.assets.list({ workspace: ws }, { offset: 0, limit: 1 })).data[0]!.id, vuln: vuln.id, schedule: '', snapshot };
  }
  tok.a = { 'x-osm-api-key': (await createToken(t.app, { name: 'op-a', role: 'operator', orgs: ['acme'] })).token };
  tok.b = { 'x-osm-api-key': (await createToken(t.app, { name: 'op-b', role: 'operator', orgs: ['globex'] })).token };
  tok.adminA = { 'x-osm-api-key': (await createToken(t.app, { name: 'admin-a', role: 'admin', orgs: ['acme'] })).token };
  for (const key of ['a', 'b'] as const) {
    const res = await call('POST', '/osm/api/schedules', tok[key]!, { name: `nightly-${key}`, workflow_name: 'sample-recon', target: key === 'a' ? WA : WB, trigger_type: 'cron', schedule: '0 3 * * *' });
    expect(res.statusCode, res.body).toBe(201);
    ids[key]!.schedule = res.json().data.id;
  }
}, 60_000);
afterAll(async () => {
  await t.close();
});

describe('lists show only the caller\'s orgs', () => {
  it('runs, workspaces, names, assets, vulnerabilities, steps, events, artifacts, schedules, diffs, snapshots, orgs', async () => {
    const lists: [string, (body: any) => string[]][] = [
      ['/osm/api/runs', (b) => b.data.map((r: any) => r.workspace)],
      ['/osm/api/workspaces', (b) => b.data.map((w: any) => w.name)],
      ['/osm/api/workspaces?filesystem=true', (b) => b.data.map((w: any) => w.name)],
      ['/osm/api/workspace-names', (b) => b],
      ['/osm/api/assets', (b) => b.data.map((a: any) => a.workspace)],
      ['/osm/api/vulnerabilities', (b) => b.data.map((v: any) => v.workspace)],
      ['/osm/api/step-results?limit=1000', (b) => b.data.map((s: any) => s.workspace)],
      ['/osm/api/event-logs?limit=1000', (b) => b.data.map((e: any) => e.workspace)],
      ['/osm/api/events?limit=1000', (b) => b.data.map((e: any) => e.workspace)],
      ['/osm/api/artifacts?limit=1000', (b) => b.data.map((a: any) => a.workspace)],
      ['/osm/api/assets/diffs', (b) => b.data.map((d: any) => d.workspace_name)],
      ['/osm/api/vulnerabilities/diffs', (b) => b.data.map((d: any) => d.workspace_name)],
      ['/osm/api/snapshots', (b) => b.data.map((s: any) => s.name.split('_')[0])],
    ];
    for (const [url, pick] of lists) {
      const all = pick((await admin('GET', url)).json());
      expect(all, `${url} as admin`).toEqual(expect.arrayContaining([WA, WB]));
      for (const [key, mine, theirs] of [['a', WA, WB], ['b', WB, WA]] as const) {
        const res = await call('GET', url, tok[key]!);
        expect(res.statusCode, url).toBe(200);
        const seen = pick(res.json());
        expect(seen, `${url} as ${key}`).toContain(mine);
        expect(seen, `${url} as ${key}`).not.toContain(theirs);
        expect(seen.every((w: string) => w === mine), `${url} as ${key}: ${JSON.stringify(seen)}`).toBe(true);
      }
    }
    const schedules = (await call('GET', '/osm/api/schedules', tok.a!)).json().data.map((s: any) => s.id);
    expect(schedules).toEqual([ids.a!.schedule]);
    expect((await call('GET', '/osm/api/orgs', tok.a!)).json().data.map((o: any) => o.name)).toEqual(['acme']);
  });

  it('stats and summaries count only visible rows', async () => {
    const all = (await admin('GET', '/osm/api/stats')).json();
    const mine = (await call('GET', '/osm/api/stats', tok.a!)).json();
    expect(mine.workspaces.total).toBe(1);
    expect(mine.assets.total).toBe(1);
    expect(mine.vulnerabilities).toMatchObject({ total: 1, high: 1 });
    expect(mine.runs.total).toBe(1);
    expect(mine.schedules.total).toBe(1);
    expect(all.workspaces.total).toBeGreaterThanOrEqual(2);
    expect(all.runs.total).toBeGreaterThanOrEqual(2);
    expect((await call('GET', '/osm/api/vulnerabilities/summary', tok.a!)).json().data.total).toBe(1);
    expect((await admin('GET', '/osm/api/vulnerabilities/summary')).json().data.total).toBe(2);
    expect((await call('GET', `/osm/api/orgs/acme/stats`, tok.a!)).json().data).toMatchObject({ total_workspaces: 1, total_assets: 1, total_vulns: 1 });
  });

  it('asking for another org with ?org= answers like an unknown org', async () => {
    for (const url of ['/osm/api/runs?org=globex', '/osm/api/assets?org=globex', '/osm/api/vulnerabilities?org=globex', '/osm/api/workspaces?org=globex']) {
      const res = await call('GET', url, tok.a!);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'org not found: globex' });
      expect((await call('GET', url.replace('globex', 'no-such-org'), tok.a!)).json()).toEqual({ error: true, message: 'org not found: no-such-org' });
    }
    expect((await call('GET', '/osm/api/runs?org=acme', tok.a!)).statusCode).toBe(200);
  });
});

describe('another org\'s objects answer 404, never 403', () => {
  it('runs, jobs, workspaces, assets, vulnerabilities, artifacts, schedules, snapshots, orgs, diffs', async () => {
    const b = ids.b!;
    const requests: [string, string, unknown?][] = [
      ['GET', `/osm/api/runs/${b.run}`], ['GET', `/osm/api/runs/${b.runId}`], ['GET', `/osm/api/runs/${b.run}/steps`], ['GET', `/osm/api/runs/${b.run}/artifacts`],
      ['DELETE', `/osm/api/runs/${b.run}`], ['POST', `/osm/api/runs/${b.run}/cancel`], ['POST', `/osm/api/runs/${b.run}/duplicate`], ['POST', `/osm/api/runs/${b.run}/start`], ['POST', `/osm/api/runs/${b.run}/resume`],
      ['GET', `/osm/api/jobs/${b.job}`],
      ['GET', `/osm/api/workspaces/${WB}`], ['GET', `/osm/api/workspaces/${WB}/state-file?state_file=execution_log`],
      ['GET', `/osm/api/assets/${b.asset}`], ['GET', `/osm/api/vulnerabilities/${b.vuln}`], ['DELETE', `/osm/api/vulnerabilities/${b.vuln}`],
      ['GET', `/osm/api/artifacts/${WB}?artifact_path=sample/hosts.txt`],
      ['GET', `/osm/api/schedules/${b.schedule}`], ['PUT', `/osm/api/schedules/${b.schedule}`, { name: 'stolen' }], ['DELETE', `/osm/api/schedules/${b.schedule}`],
      ['POST', `/osm/api/schedules/${b.schedule}/enable`], ['POST', `/osm/api/schedules/${b.schedule}/disable`], ['POST', `/osm/api/schedules/${b.schedule}/trigger`],
      ['GET', `/osm/api/snapshots/download/${b.snapshot}`], ['DELETE', `/osm/api/snapshots/${b.snapshot}`], ['GET', `/osm/api/snapshot-download/${WB}`], ['POST', '/osm/api/snapshots/export', { workspace: WB }],
      ['GET', `/osm/api/orgs/globex`], ['GET', `/osm/api/orgs/${orgB}/stats`],
      ['GET', `/osm/api/assets/diff?workspace=${WB}&from=2020-01-01`], ['GET', `/osm/api/vulnerabilities/diff?workspace=${WB}&from=2020-01-01`],
      ['GET', `/osm/api/assets/diffs?workspace=${WB}`], ['GET', `/osm/api/asset-stats?workspace=${WB}`], ['GET', `/osm/api/vulnerabilities/summary?workspace=${WB}`],
      ['POST', '/osm/api/vulnerabilities', { workspace: WB, vuln_title: 'planted' }], ['POST', '/osm/api/vulnerabilities/import', { workspace: WB, data: [] }],
    ];
    const problems: string[] = [];
    for (const [method, url, payload] of requests) {
      const res = await call(method, url, tok.a!, payload);
      if (res.statusCode !== 404) problems.push(`${method} ${url} → ${res.statusCode} ${res.body.slice(0, 100)}`);
    }
    expect(problems).toEqual([]);
    // Nothing of org B changed, and B's own credential still sees it all.
    expect((await call('GET', `/osm/api/schedules/${b.schedule}`, tok.b!)).json()).toMatchObject({ name: 'nightly-b', is_enabled: true });
    expect((await call('GET', `/osm/api/vulnerabilities/${b.vuln}`, tok.b!)).statusCode).toBe(200);
    expect((await call('GET', `/osm/api/snapshots/download/${b.snapshot}`, tok.b!)).statusCode).toBe(200);
    expect((await call('GET', `/osm/api/runs/${b.run}`, tok.b!)).statusCode).toBe(200);
  });
});

describe('what a bound credential creates belongs to its org', () => {
  it('runs on new targets create their workspace in the org; a workspace of another org is refused', async () => {
    const res = await call('POST', '/osm/api/runs', tok.a!, { module: 'sample-recon', target: 'acmecorp-new.com' });
    expect(res.statusCode, res.body).toBe(202);
    await waitRun(res.json().run_uuid);
    expect((await t.app.repos.runs.getByUuid(res.json().run_uuid))!.org_uuid).toBe(orgA);
    expect((await t.app.repos.workspaces.get('acmecorp-new.com'))!.org_uuid).toBe(orgA);
    expect((await t.app.repos.assets.list({ workspace: 'acmecorp-new.com' }, { offset: 0, limit: 100 })).data.every((a) => a.org_uuid === orgA)).toBe(true);
    const refused = await call('POST', '/osm/api/runs', tok.a!, { module: 'sample-recon', target: WB });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toMatch(/^Workspace globexcorp\.com is not available to this credential/);
    // An unbound admin's run on a new target stays in the default org.
    const adm = (await admin('POST', '/osm/api/runs', { module: 'sample-recon', target: 'plaincorp.com' })).json();
    await waitRun(adm.run_uuid);
    expect((await t.app.repos.workspaces.get('plaincorp.com'))!.org_uuid).toBe(DEFAULT_ORG_UUID);
    expect((await call('GET', '/osm/api/workspaces/plaincorp.com', tok.a!)).statusCode).toBe(404);
  });

  it('schedules belong to the creator\'s org and fire into it', async () => {
    expect((await t.app.repos.schedules.get(ids.a!.schedule))!.org_uuid).toBe(orgA);
    const fired = await call('POST', `/osm/api/schedules/${ids.a!.schedule}/trigger`, tok.a!);
    expect(fired.statusCode, fired.body).toBe(202);
    const run = (await t.app.repos.runs.list({ workspace: WA }, { offset: 0, limit: 1 })).data[0]!;
    expect(run.org_uuid).toBe(orgA);
  });
});

describe('server-wide routes are refused to bound credentials, whatever their role', () => {
  it('an admin bound to an org cannot execute code, read settings, manage users or read the audit log', async () => {
    for (const [method, url, payload] of [
      ['POST', '/osm/api/functions/eval', { script: '1+1' }], ['GET', '/osm/api/settings/yaml'], ['GET', '/osm/api/users'], ['POST', '/osm/api/tokens', { name: 'x', role: 'admin' }],
      ['GET', '/osm/api/audit'], ['POST', '/osm/api/orgs', { name: 'mine' }], ['GET', '/metrics'], ['POST', '/osm/api/events/emit', { topic: 'x' }], ['GET', '/osm/api/tasks'],
    ] as [string, string, unknown?][]) {
      const res = await call(method, url, tok.adminA!, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().message).toBe('Forbidden: credentials bound to orgs cannot use this route (it acts on the whole server, not on one org)');
    }
    // …but reads its org's data like any bound credential.
    expect((await call('GET', '/osm/api/runs', tok.adminA!)).json().data.every((r: any) => r.workspace !== WB)).toBe(true);
  });
});

describe('deleting the org a credential is bound to', () => {
  it('fails closed: the credential stays bound (sees nothing, 404 on others\' objects, still no server-wide routes), it never becomes unbound', async () => {
    const doomed = (await admin('POST', '/osm/api/orgs', { name: 'doomed' })).json().data.uuid as string;
    const token = { 'x-osm-api-key': (await createToken(t.app, { name: 'op-doomed', role: 'admin', orgs: ['doomed'] })).token };
    expect((await admin('POST', '/osm/api/users', { username: 'doomed-user', password: 'a-long-enough-password', role: 'viewer', orgs: ['doomed'] })).statusCode).toBe(201);
    expect((await admin('DELETE', `/osm/api/orgs/${doomed}`)).statusCode).toBe(200);
    const login = await t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username: 'doomed-user', password: 'a-long-enough-password' } });
    const session = { authorization: `Bearer ${login.json().token as string}` };
    for (const cred of [token, session]) {
      const runs = await call('GET', '/osm/api/runs', cred);
      expect(runs.statusCode).toBe(200);
      expect(runs.json().data).toEqual([]);
      expect((await call('GET', '/osm/api/workspaces', cred)).json().data).toEqual([]);
      expect((await call('GET', `/osm/api/runs/${ids.a!.run}`, cred)).statusCode).toBe(404);
      expect((await call('GET', `/osm/api/vulnerabilities/${ids.b!.vuln}`, cred)).statusCode).toBe(404);
    }
    expect((await call('GET', '/osm/api/users', token)).statusCode).toBe(403);
  });
});
