/**
 * The dashboard at `/`: static files with security headers and caching, the SPA fallback for
 * client-side routes, API paths that keep their own answers, a `server.ui_path` build served
 * instead, compression, and paths that must never leave the folder.
 */
import type { FastifyInstance } from 'fastify';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { buildServer } from '../../src/server/app.js';
import { COMPRESSIBLE } from '../../src/server/plugins/compression.js';
import { resolveUiFile, safeSegments } from '../../src/server/plugins/ui-files.js';

const INDEX = '<!doctype html><html><head><script type="module" src="/static/main-ABC123.js"></script></head><body>osm dashboard index</body></html>';
const JS = `console.log(${JSON.stringify('x'.repeat(4000))});`;

let t: TestServer;
let srv: FastifyInstance;
let fixture: { dir: string; cleanup: () => void };
let outside: { dir: string; cleanup: () => void };

/** A built UI folder: index, a hashed asset with its pre-compressed twins, a dotfile, an escaping symlink. */
function makeFixture(dir: string, outsideDir: string): void {
  fs.mkdirSync(path.join(dir, 'static'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'static', 'main-ABC123.js'), JS);
  fs.writeFileSync(path.join(dir, 'static', 'main-ABC123.js.br'), zlib.brotliCompressSync(JS));
  fs.writeFileSync(path.join(dir, 'static', 'main-ABC123.js.gz'), zlib.gzipSync(JS));
  fs.writeFileSync(path.join(dir, '.secret'), 'dotfile-secret');
  fs.writeFileSync(path.join(outsideDir, 'outside.txt'), 'outside-secret');
  fs.symlinkSync(path.join(outsideDir, 'outside.txt'), path.join(dir, 'static', 'link.txt'));
  fs.symlinkSync(outsideDir, path.join(dir, 'linkdir'));
}

beforeAll(async () => {
  fixture = tempDir('osm-ui-');
  outside = tempDir('osm-ui-outside-');
  makeFixture(fixture.dir, outside.dir);
  t = await makeTestServer();
  // The same app on a server whose built dashboard is the fixture.
  srv = await buildServer(t.app, { uiDir: fixture.dir });
  await srv.ready();
});
afterAll(async () => {
  await srv.close();
  await t.close();
  fixture.cleanup();
  outside.cleanup();
});

describe('the built dashboard', () => {
  it('serves index.html at / with a strict policy, no-cache and no credentials needed', async () => {
    const res = await srv.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
  });

  it('answers client-side routes with the index (SPA fallback), HEAD too', async () => {
    for (const url of ['/runs', '/runs/42', '/workspaces/acme/assets?search=x', '/workspaces/example.com', '/settings/']) {
      const res = await srv.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(INDEX);
    }
    const head = await srv.inject({ method: 'HEAD', url: '/overview' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it('caches hashed assets for a year (immutable) and serves their pre-compressed twins', async () => {
    const plain = await srv.inject({ method: 'GET', url: '/static/main-ABC123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(JS);
    const br = await srv.inject({ method: 'GET', url: '/static/main-ABC123.js', headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(JS);
    const gz = await srv.inject({ method: 'GET', url: '/static/main-ABC123.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).toString()).toBe(JS);
  });

  it('answers a missing file (a path with an extension) 404 in the envelope, not with the index', async () => {
    const res = await srv.inject({ method: 'GET', url: '/static/main-OLD999.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Route GET /static/main-OLD999.js not found' });
  });

  it('never falls back for API paths: 401 without credentials, 404 envelope with them', async () => {
    const anon = await srv.inject({ method: 'GET', url: '/osm/api/no-such-thing' });
    expect(anon.statusCode).toBe(401);
    expect(anon.json().error).toBe(true);
    const authed = await srv.inject({ method: 'GET', url: '/osm/api/no-such-thing', headers: t.auth });
    expect(authed.statusCode).toBe(404);
    expect(authed.json()).toEqual({ error: true, message: 'Route GET /osm/api/no-such-thing not found' });
    const post = await srv.inject({ method: 'POST', url: '/osm/api/no-such-thing', headers: t.auth, payload: {} });
    expect(post.statusCode).toBe(404);
  });

  it('leaves unknown paths outside the dashboard pages as they were: 401 without credentials, 404 with', async () => {
    for (const url of ['/nope', '/OSM/api/workflows', '/osm;x=1/api/runs']) {
      expect((await srv.inject({ method: 'GET', url })).statusCode, url).toBe(401);
      expect((await srv.inject({ method: 'GET', url, headers: t.auth })).statusCode, url).toBe(404);
    }
  });

  it('keeps /health, /openapi.json, /swagger and /metrics as they were', async () => {
    expect((await srv.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
    expect((await srv.inject({ method: 'GET', url: '/openapi.json' })).json().openapi).toBe('3.0.3');
    expect((await srv.inject({ method: 'GET', url: '/swagger' })).body).toContain('swagger-ui');
    expect((await srv.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await srv.inject({ method: 'GET', url: '/metrics', headers: t.auth })).body).toContain('# HELP');
  });
});

describe('paths that must never leave the UI folder', () => {
  const hostile = [
    '/../../../../etc/passwd',
    '/..%2f..%2f..%2fetc%2fpasswd',
    '/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/static/%2e%2e/%2e%2e/package.json',
    '/static/..%5c..%5cpackage.json',
    '/.secret',
    '/%2esecret',
    '/static/link.txt',
    '/linkdir/outside.txt',
    '/static%2f..%2f.secret',
    '/%00',
  ];
  /** The path exactly as written, over a socket (inject would normalise `..` and `%2e%2e` first). */
  const raw = (port: number, url: string) =>
    new Promise<{ statusCode: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: url }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end();
    });
  let port = 0;
  beforeAll(async () => {
    await srv.listen({ host: '127.0.0.1', port: 0 });
    port = (srv.server.address() as { port: number }).port;
  });

  for (const url of hostile) {
    it(`refuses ${url}`, async () => {
      const res = await raw(port, url);
      expect(res.body).not.toContain('outside-secret');
      expect(res.body).not.toContain('dotfile-secret');
      expect(res.body).not.toContain('root:');
      expect(res.body).not.toContain('"name": "osm"');
      // Refused outright (unknown paths need credentials, then 404), never a file outside.
      expect([400, 401, 404]).toContain(res.statusCode);
    });
  }

  it('resolves names with the checks in one place (unit)', () => {
    expect(safeSegments('/a/b/')).toEqual(['a', 'b']);
    expect(safeSegments('/a/%2e%2e/b')).toBeUndefined();
    expect(safeSegments('/a%2fb')).toBeUndefined();
    expect(safeSegments('/a%5cb')).toBeUndefined();
    expect(safeSegments('/%E0%A4%A')).toBeUndefined();
    expect(resolveUiFile(fixture.dir, '/static/link.txt')).toEqual({ kind: 'missing', fallback: 'index.html' });
    expect(resolveUiFile(fixture.dir, '/linkdir/outside.txt')).toEqual({ kind: 'missing', fallback: 'index.html' });
    expect(resolveUiFile(fixture.dir, '/.secret')).toEqual({ kind: 'refused' });
    expect(resolveUiFile(fixture.dir, '/runs/7')).toEqual({ kind: 'fallback', rel: 'index.html' });
  });
});

describe('server.ui_path', () => {
  it('serves another UI build from that folder when it holds an index.html: clean URLs, then the SPA fallback', async () => {
    const custom = tempDir('osm-ui-custom-');
    try {
      fs.writeFileSync(path.join(custom.dir, 'index.html'), 'custom index');
      fs.writeFileSync(path.join(custom.dir, 'scans.html'), 'custom scans page');
      fs.mkdirSync(path.join(custom.dir, 'inventory', 'assets'), { recursive: true });
      fs.writeFileSync(path.join(custom.dir, 'inventory', 'assets', 'index.html'), 'custom assets page');
      const server = t.app.settings().settings.server as { ui_path: string };
      const before = server.ui_path;
      server.ui_path = custom.dir;
      try {
        expect((await srv.inject({ method: 'GET', url: '/' })).body).toBe('custom index');
        expect((await srv.inject({ method: 'GET', url: '/scans' })).body).toBe('custom scans page');
        expect((await srv.inject({ method: 'GET', url: '/inventory/assets/' })).body).toBe('custom assets page');
        const fallback = await srv.inject({ method: 'GET', url: '/inventory/workspaces/acme' });
        expect(fallback.body).toBe('custom index');
        // Its paths are public while it is configured, but API-looking paths never get its index.
        expect((await srv.inject({ method: 'GET', url: '/OSM/api/workflows' })).statusCode).toBe(404);
        expect((await srv.inject({ method: 'GET', url: '/osm/api/workflows' })).statusCode).toBe(401);
        // Someone else's build may need inline bootstrap scripts, but never framing or other origins.
        const csp = String(fallback.headers['content-security-policy']);
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).toContain("default-src 'self'");
        expect(fallback.headers['x-content-type-options']).toBe('nosniff');
      } finally {
        server.ui_path = before;
      }
      // Without an index.html there the built dashboard answers again.
      expect((await srv.inject({ method: 'GET', url: '/' })).body).toBe(INDEX);
    } finally {
      custom.cleanup();
    }
  });
});

describe('compression', () => {
  it('compresses the API JSON and the index for clients that accept it', async () => {
    for (let i = 0; i < 30; i++) await srv.inject({ method: 'POST', url: '/osm/api/vulnerabilities', headers: t.auth, payload: { workspace: 'w', vuln_title: `finding number ${i} with a long enough title` } });
    const res = await srv.inject({ method: 'GET', url: '/osm/api/vulnerabilities?limit=100', headers: { ...t.auth, 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(res.rawPayload).toString()).data).toHaveLength(30);
    const plain = await srv.inject({ method: 'GET', url: '/osm/api/vulnerabilities?limit=100', headers: t.auth });
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('never compresses event streams (a compressor would hold lines back)', () => {
    expect(COMPRESSIBLE.test('text/event-stream')).toBe(false);
    expect(COMPRESSIBLE.test('application/json; charset=utf-8')).toBe(true);
    expect(COMPRESSIBLE.test('application/zip')).toBe(false);
  });
});

describe('a server without a built dashboard', () => {
  it('says how to build it instead of a bare 404', async () => {
    const empty = tempDir('osm-ui-empty-');
    const other = await buildServer(t.app, { uiDir: empty.dir });
    try {
      const res = await other.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toMatch(/not built \(run npm run build\)/);
    } finally {
      await other.close();
      empty.cleanup();
    }
  });
});
