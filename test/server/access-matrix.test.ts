/**
 * The access table (src/server/access.ts) covers every route, and every route answers each kind
 * of caller as the table says: generated from the table and the server's own route list, so a new
 * route cannot be forgotten.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlRun } from '../helpers/engine-sql.js';
import { registeredRoutes } from '../../src/server/app.js';
import { accessOf, ROUTE_ACCESS, serverWide, type Access } from '../../src/server/access.js';
import { createToken } from '../../src/services/tokens.js';

let t: TestServer;
const creds: Record<'viewer' | 'operator' | 'admin' | 'bound', Record<string, string>> = { viewer: {}, operator: {}, admin: {}, bound: {} };
/** Concrete values of path parameters naming objects of org "acme" (filled in beforeAll). */
const objects: Record<string, string> = {};

beforeAll(async () => {
  t = await makeTestServer({ withQueue: true });
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    creds[role] = { 'x-osm-api-key': (await createToken(t.app, { name: `m-${role}`, role })).token };
  }
  // Objects of org "acme"; the bound caller is an operator of org "globex".
  const acme = (await t.server.inject({ method: 'POST', url: '/osm/api/orgs', headers: t.auth, payload: { name: 'acme' } })).json().data.uuid as string;
  await t.server.inject({ method: 'POST', url: '/osm/api/orgs', headers: t.auth, payload: { name: 'globex' } });
  creds.bound = { 'x-osm-api-key': (await createToken(t.app, { name: 'm-bound', role: 'operator', orgs: ['globex'] })).token };
  const ws = 'acmecorp.com';
  const run = (await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'sample-recon', target: ws } })).json();
  for (let i = 0; i < 400 && !['completed', 'failed'].includes((await t.app.repos.runs.getByUuid(run.run_uuid))?.status ?? ''); i++) await new Promise((r) => setTimeout(r, 50));
  await t.server.inject({ method: 'PUT', url: `/osm/api/orgs/${acme}`, headers: t.auth, payload: { workspaces: [ws] } });
  await t.app.repos.assets.upsertMany(ws, [{ asset_value: `x.${ws}` } as never]);
  const vuln = (await t.server.inject({ method: 'POST', url: '/osm/api/vulnerabilities', headers: t.auth, payload: { workspace: ws, vuln_title: 't' } })).json().data.id;
  const schedule = (await t.server.inject({ method: 'POST', url: '/osm/api/schedules', headers: t.auth, payload: { name: 's', workflow_name: 'sample-recon', target: ws, schedule: '0 3 * * *' } })).json().data.id;
  await sqlRun(t, 'UPDATE schedules SET org_uuid = ? WHERE id = ?', acme, schedule);
  const snap = String((await t.server.inject({ method: 'POST', url: '/osm/api/snapshots/export', headers: t.auth, payload: { workspace: ws } })).headers['content-disposition']).split('filename=')[1]!;
  const assetId = (await t.app.repos.assets.list({ workspace: ws }, { offset: 0, limit: 1 })).data[0]!.id;
  Object.assign(objects, {
    'runs:id': run.run_uuid, 'jobs:job_id': run.job_id, 'workspaces:name': ws, 'assets:id': String(assetId), 'vulnerabilities:id': String(vuln),
    'schedules:id': schedule, 'snapshots:name': snap, 'download:name': snap, 'snapshot-download:workspace': ws, 'orgs:uuid': acme, 'artifacts:workspace_name': ws,
  });
}, 60_000);

/**
 * Path parameters that name something that is not one org's data (workflows, installed tools,
 * workers, docs assets, webhook templates) or that only unbound credentials reach. Any other
 * parameter must have an org object above, so a new org-scoped route cannot be forgotten.
 */
const NOT_ORG_DATA = new Set(['workflows:name', 'status:binary_name', 'workers:id', 'assets:file', 'webhook-runs:uuid', 'users:username', 'tokens:id', 'tables:table', 'tasks:id']);
afterAll(async () => {
  await t.close();
});

/** Routes as registered, without the HEAD twins fastify adds for GET routes. */
function routes(): { method: string; url: string }[] {
  const all = registeredRoutes.get(t.server) ?? [];
  const seen = new Set<string>();
  return all.filter((r) => {
    const key = `${r.method} ${r.url}`;
    if (r.method === 'HEAD' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const RANK: Record<Access, number> = { public: 0, viewer: 1, operator: 2, admin: 3 };
const concrete = (url: string) => url.replace(/:[A-Za-z_]+/g, 'x1').replace(/\*$/, 'x1');

describe('the access table', () => {
  it('has an entry for every registered route, and no entry without a route', () => {
    const keys = routes().map((r) => `${r.method} ${r.url}`);
    expect(keys.length).toBeGreaterThan(100);
    const missing = keys.filter((k) => !(k in ROUTE_ACCESS));
    expect(missing, 'routes without an access entry').toEqual([]);
    const stale = Object.keys(ROUTE_ACCESS).filter((k) => !keys.includes(k));
    expect(stale, 'access entries without a route').toEqual([]);
  });

  it('puts code execution, settings, installs, users, tokens and the audit log behind admin', () => {
    for (const k of ['POST /osm/api/functions/eval', 'POST /osm/api/functions/execute', 'POST /osm/api/workflow-upload', 'POST /osm/api/registry-install', 'GET /osm/api/settings/yaml', 'PUT /osm/api/settings/yaml', 'POST /osm/api/settings/reload', 'POST /osm/api/snapshots/import', 'POST /osm/api/users', 'POST /osm/api/tokens', 'GET /osm/api/audit', 'POST /osm/api/orgs', 'POST /osm/api/database/tables/:table/clear']) {
      expect(ROUTE_ACCESS[k], k).toBe('admin');
    }
  });
});

describe('every route × every kind of caller', () => {
  it('answers as the table says: 401 without credentials, 403 naming the missing role, through otherwise', async () => {
    const problems: string[] = [];
    for (const r of routes()) {
      const need = accessOf(r.method, r.url);
      const url = concrete(r.url);
      const payload = r.method === 'GET' || r.method === 'OPTIONS' ? undefined : {};
      const callers: [string, Record<string, string>, number][] = [
        ['anonymous', {}, 0],
        ['viewer', creds.viewer, 1],
        ['operator', creds.operator, 2],
        ['admin', creds.admin, 3],
      ];
      for (const [who, headers, rank] of callers) {
        const res = await t.server.inject({ method: r.method as 'GET', url, headers, ...(payload ? { payload } : {}) });
        const where = `${r.method} ${url} as ${who} (needs ${need}) → ${res.statusCode} ${res.body.slice(0, 120)}`;
        if (rank < RANK[need]) {
          const expected = who === 'anonymous' ? 401 : 403;
          if (res.statusCode !== expected) problems.push(where);
          else if (expected === 403 && res.json().message !== `Forbidden: this requires the ${need} role (your credential has the ${who} role)`) problems.push(`${where} (message)`);
        } else if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode >= 500) {
          problems.push(where);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('a credential bound to another org', () => {
  it('gets 403 on server-wide routes and 404 for every route naming an object of another org', async () => {
    const problems: string[] = [];
    for (const r of routes()) {
      const need = accessOf(r.method, r.url);
      if (need === 'public') continue;
      const url = concrete(r.url);
      const payload = r.method === 'GET' || r.method === 'OPTIONS' ? undefined : {};
      const res = await t.server.inject({ method: r.method as 'GET', url, headers: creds.bound, ...(payload ? { payload } : {}) });
      const where = `${r.method} ${url} → ${res.statusCode} ${res.body.slice(0, 120)}`;
      if (serverWide(r.method, r.url)) {
        if (res.statusCode !== 403) problems.push(`${where} (server-wide: expected 403)`);
        continue;
      }
      if (RANK[need] > RANK.operator) continue;
      // Each path parameter naming org data gets an object of org "acme": the answer is 404.
      const names = [...r.url.matchAll(/([^/]+)\/:([A-Za-z_]+)/g)].map((m) => `${m[1]}:${m[2]}`);
      if (names.length === 0 || names.every((n) => NOT_ORG_DATA.has(n))) {
        if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode >= 500) problems.push(where);
        continue;
      }
      let objectUrl = r.url;
      for (const n of names) {
        const value = objects[n];
        if (value === undefined) {
          problems.push(`${r.method} ${r.url}: parameter ${n} names no org object in this test (add it, or to NOT_ORG_DATA)`);
          continue;
        }
        objectUrl = objectUrl.replace(`:${n.split(':')[1]}`, encodeURIComponent(value));
      }
      const obj = await t.server.inject({ method: r.method as 'GET', url: objectUrl, headers: creds.bound, ...(payload ? { payload } : {}) });
      if (obj.statusCode !== 404) problems.push(`${r.method} ${objectUrl} → ${obj.statusCode} ${obj.body.slice(0, 120)} (another org's object: expected 404)`);
      const own = await t.server.inject({ method: 'GET', url: objectUrl, headers: t.auth });
      if (r.method === 'GET' && own.statusCode === 404) problems.push(`${objectUrl}: the object does not exist for the admin either (the test proves nothing)`);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
