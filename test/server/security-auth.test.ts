/**
 * Authentication bound to the matched route (never to the URL text), CORS, login throttling and
 * /metrics. Paths are sent raw over a real loopback socket (node:http), so `//`, `/./`, `..`,
 * `;param` and percent-encodings reach the router exactly as an attacker would send them.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { routesOf } from '../../src/server/route.js';
import { accessOf } from '../../src/server/access.js';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let t: TestServer;
let port: number;

beforeAll(async () => {
  t = await makeTestServer();
  await t.server.listen({ host: '127.0.0.1', port: 0 });
  port = (t.server.server.address() as { port: number }).port;
});
afterAll(async () => {
  await t.close();
});

/** A concrete path for a route pattern (`:id` → a harmless value). */
function concrete(url: string): string {
  return url.replace(/:[A-Za-z_]+/g, 'x1').replace(/\*$/, 'x1');
}

/** Spellings of one path that must never be a way around authentication. */
export function mangled(path: string): string[] {
  const segs = path.split('/').slice(1);
  const enc = (c: string) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  const out = new Set<string>();
  segs.forEach((seg, i) => {
    const m = /[a-z]/i.exec(seg);
    if (m) out.add(`/${segs.map((s, j) => (j === i ? s.slice(0, m.index) + enc(m[0]) + s.slice(m.index + 1) : s)).join('/')}`);
    out.add(`/${segs.map((s, j) => (j === i ? s.toUpperCase() : s)).join('/')}`);
    out.add(`/${segs.map((s, j) => (j === i ? `${s};x=1` : s)).join('/')}`);
  });
  out.add(`/${segs.map((s) => s.replace(/[a-z]/gi, enc)).join('/')}`);
  out.add(`/${segs.map((s) => s.replace(/[a-z]/g, (c) => enc(c).toUpperCase())).join('/')}`);
  out.add(`/${path}`);
  out.add(path.replace('/osm/', '//osm/'));
  out.add(path.replace('/api/', '/api//'));
  out.add(path.replace('/api/', '/./api/'));
  out.add(path.replace('/api/', '/x/../api/'));
  out.add(path.replace('/api/', '/%2e%2e/osm/api/'));
  out.add(path.replace(/\/([^/]*)$/, '%2F$1'));
  out.add(`${path}/`);
  out.add(`${path}.`);
  out.add(`${path}/.`);
  out.add(`${path}%20`);
  out.add(`${path}%09`);
  out.add(`${path};`);
  out.add(`${path}?x=1`);
  out.add(path.toUpperCase());
  out.delete(path);
  return [...out];
}

describe('authentication is decided on the matched route', () => {
  it('every route not declared public answers 401 without credentials, however its path is spelled', async () => {
    const routes = routesOf(t.server).filter((r) => accessOf(r.method, r.url) !== 'public');
    expect(routes.length).toBeGreaterThan(60);
    const failures: string[] = [];
    for (const r of routes) {
      const path = concrete(r.url);
      for (const p of [path, ...mangled(path)]) {
        const res = await rawRequest(port, r.method, p, {}, r.method === 'GET' ? undefined : '{}');
        if (res.status !== 401) failures.push(`${r.method} ${p} → ${res.status} ${res.body.slice(0, 80)}`);
        else expect(JSON.parse(res.body)).toMatchObject({ error: true, message: expect.any(String) });
      }
    }
    expect(failures).toEqual([]);
  });

  it('the reported break: /%6fsm/api/runs and functions/eval with exec_cmd answer 401', async () => {
    expect((await rawRequest(port, 'GET', '/%6fsm/api/runs')).status).toBe(401);
    const res = await rawRequest(port, 'POST', '/osm/%61pi/functions/eval', {}, JSON.stringify({ script: 'exec_cmd("id")' }));
    expect(res.status).toBe(401);
    expect(res.body).not.toContain('uid=');
  });

  it('HEAD and OPTIONS on protected routes answer 401 without credentials', async () => {
    for (const p of ['/osm/api/runs', '/osm/api/settings/yaml', '/osm/api/functions/eval', '/osm/api/runs/x1', '/metrics', '/osm/api/nope']) {
      expect((await rawRequest(port, 'HEAD', p)).status, `HEAD ${p}`).toBe(401);
      expect((await rawRequest(port, 'OPTIONS', p)).status, `OPTIONS ${p}`).toBe(401);
    }
  });

  it('unknown paths answer 401 without credentials and 404 with them, encoded or not', async () => {
    for (const p of ['/osm/api/nope', '/%6fsm/api/nope', '/nope', '/osm/api/runs/x1/nope']) {
      expect((await rawRequest(port, 'GET', p)).status, p).toBe(401);
      expect((await rawRequest(port, 'GET', p, t.auth)).status, p).toBe(404);
    }
  });

  it('the same routes still work with credentials, including their decoded spellings', async () => {
    expect((await rawRequest(port, 'GET', '/osm/api/runs', t.auth)).status).toBe(200);
    expect((await rawRequest(port, 'GET', '/%6fsm/api/runs', t.auth)).status).toBe(200);
    expect((await rawRequest(port, 'HEAD', '/osm/api/runs', t.auth)).status).toBe(200);
    const res = await rawRequest(port, 'POST', '/osm/api/functions/eval', t.auth, JSON.stringify({ script: 'trim("  a ")' }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).result).toBe('a');
  });

  it('public routes stay public: health, readiness, server info, login, logout', async () => {
    for (const p of ['/health', '/health/ready', '/server-info', '/status', '/api/info']) expect((await rawRequest(port, 'GET', p)).status, p).toBe(200);
    expect((await rawRequest(port, 'POST', '/osm/api/logout')).status).toBe(200);
    expect((await rawRequest(port, 'POST', '/osm/api/login', {}, JSON.stringify({ username: 'nobody', password: 'x' }))).status).toBe(401);
  });
});

describe('CORS', () => {
  const origin = 'https://evil.example';

  it('gives no cross-origin access by default, to any Origin including null, with or without credentials', async () => {
    for (const o of [origin, 'null', 'http://127.0.0.1:1']) {
      const res = await rawRequest(port, 'GET', '/osm/api/runs', { ...t.auth, origin: o });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const pre = await rawRequest(port, 'OPTIONS', '/osm/api/runs', { origin: o, 'access-control-request-method': 'POST' });
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(pre.status).toBe(401);
    }
  });

  it('treats the old default reflect-origin as no access', async () => {
    t.app.settings().settings.server.cors_allowed_origins = 'reflect-origin';
    try {
      const res = await rawRequest(port, 'GET', '/health', { origin });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      t.app.settings().settings.server.cors_allowed_origins = '';
    }
  });

  it('allows exactly the listed origins, with credentials, and answers their preflight before auth', async () => {
    t.app.settings().settings.server.cors_allowed_origins = 'https://ui.example, http://localhost:3000';
    try {
      const ok = await rawRequest(port, 'GET', '/osm/api/runs', { ...t.auth, origin: 'https://ui.example' });
      expect(ok.headers['access-control-allow-origin']).toBe('https://ui.example');
      expect(ok.headers['access-control-allow-credentials']).toBe('true');
      const pre = await rawRequest(port, 'OPTIONS', '/osm/api/runs', { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-osm-api-key' });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('http://localhost:3000');
      expect(String(pre.headers['access-control-allow-headers'])).toContain('x-osm-api-key');
      for (const o of [origin, 'null', 'https://ui.example.evil.example', 'https://evil.example/https://ui.example']) {
        const res = await rawRequest(port, 'GET', '/osm/api/runs', { ...t.auth, origin: o });
        expect(res.headers['access-control-allow-origin'], o).toBeUndefined();
      }
    } finally {
      t.app.settings().settings.server.cors_allowed_origins = '';
    }
  });

  it('`*` allows any origin but never with credentials', async () => {
    t.app.settings().settings.server.cors_allowed_origins = '*';
    try {
      const res = await rawRequest(port, 'GET', '/osm/api/runs', { ...t.auth, origin });
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    } finally {
      t.app.settings().settings.server.cors_allowed_origins = '';
    }
  });

  it('--no-auth does not open cross-origin access', async () => {
    const open = await makeTestServer({ noAuth: true });
    try {
      const res = await open.server.inject({ method: 'GET', url: '/osm/api/runs', headers: { origin } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await open.server.inject({ method: 'OPTIONS', url: '/osm/api/runs', headers: { origin: 'null', 'access-control-request-method': 'POST' } });
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await open.close();
    }
  });
});

describe('login throttling', () => {
  const login = (srv: TestServer, username: string, password: string, remoteAddress: string) =>
    srv.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username, password }, remoteAddress });

  it('answers 429 with Retry-After after repeated failures of one user from one address, growing while it continues', async () => {
    const srv = await makeTestServer();
    try {
      const users = srv.app.settings().settings.server.simple_user_map_key as Record<string, string>;
      const [user, password] = Object.entries(users)[0]!;
      for (let i = 0; i < 5; i++) expect((await login(srv, user, 'wrong', '10.0.0.1')).statusCode).toBe(401);
      const limited = await login(srv, user, 'wrong', '10.0.0.1');
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ error: true, message: expect.stringMatching(/^Too many failed login attempts; try again in \d+ s$/) });
      const first = Number(limited.headers['retry-after']);
      expect(first).toBeGreaterThan(0);
      // Still limited, even with the right password: the guesser cannot find out it was right.
      const again = await login(srv, user, password, '10.0.0.1');
      expect(again.statusCode).toBe(429);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(first);
      // The real user at another address is never locked out by the guesser.
      const real = await login(srv, user, password, '10.0.0.2');
      expect(real.statusCode).toBe(200);
      expect(real.json().token).toEqual(expect.any(String));
    } finally {
      await srv.close();
    }
  });

  it('limits one address spraying many usernames', async () => {
    const srv = await makeTestServer();
    try {
      for (let i = 0; i < 30; i++) expect((await login(srv, `user${i}`, 'pw', '10.0.0.9')).statusCode).toBe(401);
      const res = await login(srv, 'user-next', 'pw', '10.0.0.9');
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBeDefined();
      expect((await login(srv, 'user-next', 'pw', '10.0.0.10')).statusCode).toBe(401);
    } finally {
      await srv.close();
    }
  });

  it('does not count successful logins', async () => {
    const srv = await makeTestServer();
    try {
      const [user, password] = Object.entries(srv.app.settings().settings.server.simple_user_map_key as Record<string, string>)[0]!;
      for (let i = 0; i < 12; i++) expect((await login(srv, user, password, '10.0.0.3')).statusCode).toBe(200);
    } finally {
      await srv.close();
    }
  });
});

describe('/metrics', () => {
  it('needs credentials unless server.metrics_public, and honours server.enable_metrics', async () => {
    const srv = t.app.settings().settings.server as { metrics_public: boolean; enable_metrics: boolean };
    expect((await rawRequest(port, 'GET', '/metrics')).status).toBe(401);
    const ok = await rawRequest(port, 'GET', '/metrics', t.auth);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('osm_http_requests_total');
    srv.metrics_public = true;
    try {
      expect((await rawRequest(port, 'GET', '/metrics')).status).toBe(200);
      srv.enable_metrics = false;
      const off = await rawRequest(port, 'GET', '/metrics', t.auth);
      expect(off.status).toBe(404);
      expect(JSON.parse(off.body)).toEqual({ error: true, message: 'Metrics are disabled (server.enable_metrics: false)' });
      expect((await rawRequest(port, 'GET', '/metrics')).status).toBe(401);
    } finally {
      srv.metrics_public = false;
      srv.enable_metrics = true;
    }
  });
});
