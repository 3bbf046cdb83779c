/**
 * Cross-site request forgery: a state-changing request whose only credential is the session
 * cookie needs the x-osm-csrf header (a page of another port or subdomain is "same-site", so the
 * SameSite=Lax cookie rides along on its form posts); forms cannot send JSON; under --no-auth a
 * browser's cross-site markers are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let cookie: string;

beforeAll(async () => {
  t = await makeTestServer();
  const users = t.app.settings().settings.server.simple_user_map_key as Record<string, string>;
  const [username, password] = Object.entries(users)[0]!;
  const login = await t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username, password } });
  expect(login.statusCode).toBe(200);
  const set = String(login.headers['set-cookie']);
  expect(set).toMatch(/HttpOnly/);
  expect(set).toMatch(/SameSite=Lax/);
  cookie = set.split(';')[0]!;
});
afterAll(async () => {
  await t.close();
});

const MULTIPART = '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="targets.txt"\r\nContent-Type: text/plain\r\n\r\nexample.com\r\n--XyZ--\r\n';

describe('requests authenticated by the session cookie', () => {
  it('read freely (GET needs no header)', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/whoami', headers: { cookie } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.kind).toBeDefined();
  });

  it('refuse a state change without x-osm-csrf: JSON, a multipart form post, and text/plain settings', async () => {
    const json = await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: { cookie, 'content-type': 'application/json' }, payload: '{}' });
    expect(json.statusCode).toBe(403);
    expect(json.json()).toEqual({ error: true, message: 'Forbidden: a request authenticated by the session cookie must carry the x-osm-csrf header' });
    // A cross-site <form enctype="multipart/form-data"> is exactly what the header check stops.
    const form = await t.server.inject({ method: 'POST', url: '/osm/api/upload-file', headers: { cookie, 'content-type': 'multipart/form-data; boundary=XyZ' }, payload: MULTIPART });
    expect(form.statusCode).toBe(403);
    const yaml = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { cookie, 'content-type': 'text/plain' }, payload: 'base_folder: /tmp/evil\n' });
    expect(yaml.statusCode).toBe(403);
    const del = await t.server.inject({ method: 'DELETE', url: '/osm/api/runs/1', headers: { cookie } });
    expect(del.statusCode).toBe(403);
  });

  it('go through with x-osm-csrf, as the dashboard sends them', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: { cookie, 'x-osm-csrf': '1', 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(200);
    const form = await t.server.inject({ method: 'POST', url: '/osm/api/upload-file', headers: { cookie, 'x-osm-csrf': '1', 'content-type': 'multipart/form-data; boundary=XyZ' }, payload: MULTIPART });
    expect(form.statusCode).toBe(200);
  });
});

describe('header credentials', () => {
  it('need no extra header (a form cannot set them)', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: t.auth });
    expect(res.statusCode).toBe(200);
  });

  it('still get nothing from a form body: urlencoded and text/plain bodies are refused by JSON routes', async () => {
    const urlencoded = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: { ...t.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'flow=x&target=example.com' });
    expect(urlencoded.statusCode).toBe(415);
    const text = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: { ...t.auth, 'content-type': 'text/plain' }, payload: '{"module":"x","target":"example.com"}' });
    expect(text.statusCode).toBe(400);
    const schedule = await t.server.inject({ method: 'POST', url: '/osm/api/schedules', headers: { ...t.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' });
    expect(schedule.statusCode).toBe(415);
  });
});

describe('public routes', () => {
  it('log in and out without the header (API clients log in with plain JSON)', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/logout' });
    expect(res.statusCode).toBe(200);
  });
});

describe('--no-auth', () => {
  it('refuses what a browser marks as cross-site, lets same-origin pages and non-browser clients through', async () => {
    const open = await makeTestServer({ noAuth: true });
    try {
      const post = (headers: Record<string, string>) => open.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh', headers: { host: 'localhost:8002', ...headers } });
      expect((await post({ 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
      expect((await post({ 'sec-fetch-site': 'same-site' })).statusCode).toBe(403);
      expect((await post({ origin: 'http://localhost:3000' })).statusCode).toBe(403);
      expect((await post({ origin: 'http://localhost:8002', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
      expect((await post({})).statusCode).toBe(200);
      expect((await post({ 'sec-fetch-site': 'cross-site', 'x-osm-csrf': '1' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });
});
