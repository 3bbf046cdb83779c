/**
 * Users, roles, API tokens, session revocation and the audit log through the API.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlGet, sqlRun } from '../helpers/engine-sql.js';
import { hashApiToken } from '../../src/auth/api-tokens.js';

let t: TestServer;
beforeEach(async () => {
  t = await makeTestServer();
});
afterEach(async () => {
  await t.close();
});

const PW = 'a-long-enough-password';
const req = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  t.server.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
const asAdmin = (method: string, url: string, payload?: unknown) => req(method, url, t.auth, payload);

async function addUser(username: string, role: string, orgs?: string[]) {
  const res = await asAdmin('POST', '/osm/api/users', { username, password: PW, role, ...(orgs ? { orgs } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
async function login(username: string, password = PW) {
  return t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username, password } });
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('users', () => {
  it('admin adds, lists, reads, changes and removes users; hashes are never shown', async () => {
    const u = await addUser('alice', 'viewer');
    expect(u).toEqual({ username: 'alice', role: 'viewer', orgs: [], created_at: expect.any(String), updated_at: expect.any(String) });
    const list = (await asAdmin('GET', '/osm/api/users')).json();
    expect(list.data.map((x: { username: string }) => x.username)).toEqual(['alice']);
    expect(JSON.stringify(list)).not.toMatch(/scrypt|password/);
    expect((await asAdmin('PUT', '/osm/api/users/alice', { role: 'operator' })).json().data.role).toBe('operator');
    expect((await asAdmin('GET', '/osm/api/users/alice')).json().data.role).toBe('operator');
    expect((await asAdmin('DELETE', '/osm/api/users/alice')).json()).toEqual({ message: 'User removed', username: 'alice' });
    expect((await asAdmin('GET', '/osm/api/users/alice')).statusCode).toBe(404);
  });

  it('refuses bad names, roles, weak passwords, duplicates, settings login names and unknown orgs with clear errors', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ username: 'bad name', password: PW, role: 'viewer' }, 400, /^Invalid user name/],
      [{ username: 'x', password: PW, role: 'root' }, 400, /^Invalid role: "root"/],
      [{ username: 'x', password: 'short', role: 'viewer' }, 400, /^Password refused: a password needs at least 10 characters/],
      [{ username: 'osmedeus', password: PW, role: 'viewer' }, 409, /is a login of the settings file/],
      [{ username: 'x', password: PW, role: 'viewer', orgs: ['no-such-org'] }, 404, /^org not found: no-such-org/],
    ];
    for (const [body, status, msg] of cases) {
      const res = await asAdmin('POST', '/osm/api/users', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json()).toEqual({ error: true, message: expect.stringMatching(msg) });
    }
    await addUser('dup', 'viewer');
    expect((await asAdmin('POST', '/osm/api/users', { username: 'DUP', password: PW, role: 'viewer' })).statusCode).toBe(409);
  });

  it('a database user logs in, gets its role, and a role change applies to the next request', async () => {
    await addUser('bob', 'viewer');
    expect((await login('bob', 'wrong-password-x')).statusCode).toBe(401);
    const res = await login('bob');
    expect(res.statusCode).toBe(200);
    const token = res.json().token as string;
    expect((await req('GET', '/osm/api/runs', bearer(token))).statusCode).toBe(200);
    const denied = await req('POST', '/osm/api/runs', bearer(token), { module: 'sample-recon', target: 'example.com' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ error: true, message: 'Forbidden: this requires the operator role (your credential has the viewer role)' });
    expect((await req('GET', '/osm/api/whoami', bearer(token))).json().data).toEqual({ name: 'bob', kind: 'user', role: 'viewer', orgs: [] });
    await asAdmin('PUT', '/osm/api/users/bob', { role: 'operator' });
    expect((await req('GET', '/osm/api/whoami', bearer(token))).json().data.role).toBe('operator');
    await asAdmin('DELETE', '/osm/api/users/bob');
    expect((await req('GET', '/osm/api/runs', bearer(token))).statusCode).toBe(401);
  });

  it('logout and a password change end the user\'s sessions', async () => {
    await addUser('carol', 'viewer');
    const a = (await login('carol')).json().token as string;
    const b = (await login('carol')).json().token as string;
    expect((await req('GET', '/osm/api/whoami', bearer(a))).statusCode).toBe(200);
    expect((await req('POST', '/osm/api/logout', bearer(a))).statusCode).toBe(200);
    for (const tok of [a, b]) {
      const res = await req('GET', '/osm/api/whoami', bearer(tok));
      expect(res.statusCode).toBe(401);
      expect(res.json().message).toBe('Invalid or expired token');
    }
    const c = (await login('carol')).json().token as string;
    expect((await req('GET', '/osm/api/whoami', bearer(c))).statusCode).toBe(200);
    await asAdmin('PUT', '/osm/api/users/carol', { password: 'another-long-password' });
    expect((await req('GET', '/osm/api/whoami', bearer(c))).statusCode).toBe(401);
    expect((await login('carol')).statusCode).toBe(401);
    expect((await login('carol', 'another-long-password')).statusCode).toBe(200);
  });

  it('logout ends the sessions of a settings login too (the cookie form included)', async () => {
    const [user, password] = Object.entries(t.app.settings().settings.server.simple_user_map_key as Record<string, string>)[0]!;
    const token = (await login(user, password)).json().token as string;
    const cookie = { cookie: `osmedeus_session=${token}` };
    expect((await req('GET', '/osm/api/whoami', cookie)).json().data).toEqual({ name: user, kind: 'settings-user', role: 'admin', orgs: [] });
    await req('POST', '/osm/api/logout', cookie);
    expect((await req('GET', '/osm/api/whoami', cookie)).statusCode).toBe(401);
    expect((await login(user, password)).statusCode).toBe(200);
  });
});

describe('API tokens', () => {
  it('are shown once, stored hashed, usable as x-osm-api-key or Bearer, and carry their role', async () => {
    const res = await asAdmin('POST', '/osm/api/tokens', { name: 'ci', role: 'operator', expires: '30d' });
    expect(res.statusCode).toBe(201);
    const { token, ...view } = res.json().data;
    expect(token).toMatch(/^osm_[A-Za-z0-9_-]{43}$/);
    expect(view).toMatchObject({ name: 'ci', role: 'operator', status: 'active', prefix: token.slice(0, 10) });
    expect(Date.parse(view.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const row = (await sqlGet(t, 'SELECT * FROM api_tokens'))!;
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.token_hash).toBe(hashApiToken(token));
    expect(JSON.stringify((await asAdmin('GET', '/osm/api/tokens')).json())).not.toContain(token);
    expect((await req('GET', '/osm/api/whoami', { 'x-osm-api-key': token })).json().data).toMatchObject({ name: 'ci', kind: 'token', role: 'operator' });
    expect((await req('GET', '/osm/api/whoami', bearer(token))).json().data.name).toBe('ci');
    expect((await req('GET', '/osm/api/settings/yaml', bearer(token))).statusCode).toBe(403);
  });

  it('expired or revoked → 401 with a clear message; a revoked name can be reused', async () => {
    const tok = (await asAdmin('POST', '/osm/api/tokens', { name: 'short', role: 'viewer' })).json().data;
    await sqlRun(t, 'UPDATE api_tokens SET expires_at = ? WHERE id = ?', new Date(Date.now() - 1000).toISOString(), tok.id);
    const expired = await req('GET', '/osm/api/runs', { 'x-osm-api-key': tok.token });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().message).toMatch(/^API token 'short' expired at /);
    const live = (await asAdmin('POST', '/osm/api/tokens', { name: 'live', role: 'viewer' })).json().data;
    expect((await asAdmin('DELETE', '/osm/api/tokens/live')).json()).toMatchObject({ message: 'Token revoked', name: 'live' });
    const revoked = await req('GET', '/osm/api/runs', bearer(live.token));
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().message).toBe("API token 'live' has been revoked");
    expect((await asAdmin('POST', '/osm/api/tokens', { name: 'live', role: 'viewer' })).statusCode).toBe(201);
    expect((await asAdmin('POST', '/osm/api/tokens', { name: 'live', role: 'viewer' })).statusCode).toBe(409);
    expect((await asAdmin('DELETE', `/osm/api/tokens/${live.id}`)).json().message).toBe('Token was already revoked');
    expect((await asAdmin('DELETE', '/osm/api/tokens/999')).statusCode).toBe(404);
    const unknown = await req('GET', '/osm/api/runs', { 'x-osm-api-key': `osm_${'A'.repeat(43)}` });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().message).toBe('Invalid or missing API key');
  });

  it('refuses bad expiries and roles', async () => {
    for (const expires of ['soon', '-1d', '0s', '1y', '99999999999d']) {
      const res = await asAdmin('POST', '/osm/api/tokens', { name: 'x', role: 'viewer', expires });
      expect(res.statusCode, expires).toBe(400);
      expect(res.json().message).toMatch(/^Invalid expiry/);
    }
    expect((await asAdmin('POST', '/osm/api/tokens', { name: 'x', role: 'superuser' })).json().message).toMatch(/^Invalid role/);
  });
});

describe('audit log', () => {
  it('records every state-changing request with who, role, route, object, result and address — never secrets', async () => {
    await addUser('dave', 'viewer');
    const token = (await login('dave')).json().token as string;
    await req('POST', '/osm/api/runs', bearer(token), { module: 'sample-recon', target: 'example.com' });
    await login('dave', 'not-the-password');
    await asAdmin('DELETE', '/osm/api/vulnerabilities/12345');
    await req('GET', '/osm/api/runs', bearer(token));
    const res = await asAdmin('GET', '/osm/api/audit?limit=50');
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as { actor: string; actor_kind: string; role: string; method: string; route: string; object: string; status: number; result: string; client_ip: string }[];
    const find = (route: string, status: number) => rows.find((r) => r.route === route && r.status === status);
    expect(find('/osm/api/users', 201)).toMatchObject({ actor: 'api-key', actor_kind: 'api-key', role: 'admin', method: 'POST', result: 'ok', client_ip: '127.0.0.1' });
    expect(find('/osm/api/runs', 403)).toMatchObject({ actor: 'dave', role: 'viewer', result: 'denied' });
    expect(find('/osm/api/login', 401)).toMatchObject({ actor: 'dave', actor_kind: 'login', result: 'denied' });
    expect(find('/osm/api/vulnerabilities/:id', 404)).toMatchObject({ object: '{"id":"12345"}', result: 'error' });
    expect(rows.some((r) => r.method === 'GET' && r.route === '/osm/api/runs')).toBe(false);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(PW);
    expect(text).not.toContain('not-the-password');
    expect(text).not.toContain(t.apiKey);
    expect(text).not.toContain(token);
    // JSON lines export, oldest first, every row.
    const lines = (await asAdmin('GET', '/osm/api/audit?format=jsonl')).body.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(rows.length);
    expect(lines.map((l: { id: number }) => l.id)).toEqual([...lines.map((l: { id: number }) => l.id)].sort((a, b) => a - b));
    // Viewers and operators cannot read it.
    expect((await req('GET', '/osm/api/audit', bearer(token))).statusCode).toBe(403);
  });

  it('refuses a since that is not a date (400, not an empty list) and accepts dates and date-times', async () => {
    await addUser('erin', 'viewer');
    for (const since of ['garbage', '2026-13-45', '1d', "' OR 1=1--"]) {
      for (const format of ['json', 'jsonl']) {
        const res = await asAdmin('GET', `/osm/api/audit?format=${format}&since=${encodeURIComponent(since)}`);
        expect(res.statusCode, `${since} ${format}`).toBe(400);
        expect(res.json()).toMatchObject({ error: true, message: expect.stringMatching(/^Invalid since/) });
      }
    }
    const day = new Date().toISOString().slice(0, 10);
    for (const since of [day, `${day}T00:00:00Z`, '2000-01-01T00:00:00+02:00']) {
      const res = await asAdmin('GET', `/osm/api/audit?since=${encodeURIComponent(since)}`);
      expect(res.statusCode, since).toBe(200);
      expect(res.json().data.some((r: { route: string }) => r.route === '/osm/api/users'), since).toBe(true);
    }
    const future = await asAdmin('GET', '/osm/api/audit?since=2999-01-01');
    expect(future.json().data).toEqual([]);
  });
});
