/**
 * The access table (src/server/access.ts) covers every route, and every route answers each kind
 * of caller as the table says: generated from the table and the server's own route list, so a new
 * route cannot be forgotten.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { registeredRoutes } from '../../src/server/app.js';
import { accessOf, ROUTE_ACCESS, type Access } from '../../src/server/access.js';
import { createToken } from '../../src/services/tokens.js';

let t: TestServer;
const creds: Record<'viewer' | 'operator' | 'admin', Record<string, string>> = { viewer: {}, operator: {}, admin: {} };

beforeAll(async () => {
  t = await makeTestServer();
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    creds[role] = { 'x-osm-api-key': createToken(t.app, { name: `m-${role}`, role }).token };
  }
});
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
