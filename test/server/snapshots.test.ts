import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlCount } from '../helpers/engine-sql.js';
import { importAssetsJsonl, importVulnsJsonl } from '../../src/ingest/index.js';
import { buildZip } from '../unit/snapshot/zip-builder.js';
import { exportSnapshot } from '../../src/services/snapshots.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
let t: TestServer;
let workspaces: string;
let files: http.Server;
let filesUrl: string;
const served = new Map<string, Buffer>();
const WS = 'example.com';

beforeAll(async () => {
  t = await makeTestServer();
  workspaces = t.app.settings().paths.workspaces;
  fs.mkdirSync(path.join(workspaces, WS, 'http'), { recursive: true });
  fs.writeFileSync(path.join(workspaces, WS, 'run-state.json'), '{"run":{"status":"completed"}}\n');
  fs.copyFileSync(fx('httpx-run1.jsonl'), path.join(workspaces, WS, 'http', 'httpx.jsonl'));
  await importAssetsJsonl(t.app.repos, WS, fx('httpx-run1.jsonl'));
  await importVulnsJsonl(t.app.repos, WS, fx('nuclei.jsonl'));
  files = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const hops = /^\/hop\/(\d+)$/.exec(url);
    if (hops) {
      const n = Number(hops[1]);
      res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/files/example.com_1767225600.zip' }).end();
      return;
    }
    const body = served.get(url);
    if (!body) return void res.writeHead(404).end('nope');
    res.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', () => r()));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => files.close(() => r()));
  await t.close();
});

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = t.auth) =>
  t.server.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

function multipart(fields: Record<string, string>, file?: { name: string; data: Buffer }) {
  const boundary = '----osmtest7d1f';
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/zip\r\n\r\n`), file.data, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { ...t.auth, 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
const upload = (fields: Record<string, string>, file?: { name: string; data: Buffer }) => {
  const m = multipart(fields, file);
  return t.server.inject({ method: 'POST', url: '/osm/api/snapshots/import', payload: m.payload, headers: m.headers });
};
const count = (table: string, ws: string) => sqlCount(t, `SELECT COUNT(*) AS n FROM ${table} WHERE workspace = ?`, ws);

let exported: { name: string; data: Buffer };

describe('POST /osm/api/snapshots/export', () => {
  it('stores the zip and sends it with the documented headers', async () => {
    const r = await inject('POST', '/osm/api/snapshots/export', { workspace: WS });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/zip');
    const m = /^attachment; filename=(example\.com_\d{10}\.zip)$/.exec(String(r.headers['content-disposition']));
    expect(m).not.toBeNull();
    expect(Number(r.headers['x-snapshot-size'])).toBe(r.rawPayload.length);
    expect(r.rawPayload.subarray(0, 2).toString()).toBe('PK');
    exported = { name: m![1]!, data: r.rawPayload };
    expect(fs.readFileSync(path.join(t.app.settings().paths.snapshot, exported.name))).toEqual(r.rawPayload);
  });

  it('answers the documented errors', async () => {
    const r1 = await inject('POST', '/osm/api/snapshots/export', {});
    expect(r1.statusCode).toBe(400);
    expect(r1.json()).toEqual({ error: true, message: 'Workspace name is required' });
    const r2 = await inject('POST', '/osm/api/snapshots/export', { workspace: 'nope.io' });
    expect(r2.statusCode).toBe(404);
    expect(r2.json()).toEqual({ error: true, message: 'Workspace not found: nope.io' });
    const r3 = await inject('POST', '/osm/api/snapshots/export', { workspace: '../etc' });
    expect(r3.statusCode).toBe(400);
    expect(r3.json().message).toBe('Invalid workspace name');
  });

  it('include_artifacts=false packs the state files and rows only', async () => {
    const r = await inject('POST', '/osm/api/snapshots/export', { workspace: WS, include_artifacts: false });
    expect(r.statusCode).toBe(200);
    const text = r.rawPayload.toString('latin1');
    expect(text).toContain('example.com/run-state.json');
    expect(text).toContain('example.com/.osm-db/vulnerabilities.jsonl');
    expect(text).not.toContain('example.com/http/httpx.jsonl');
  });

  it('never replaces an earlier export made in the same second', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-01T00:00:00.000Z'));
    try {
      const a = await exportSnapshot(t.app, { workspace: WS });
      const b = await exportSnapshot(t.app, { workspace: WS, includeArtifacts: false });
      expect(a.name).toBe('example.com_1772323200.zip');
      expect(b.name).toBe('example.com_1772323201.zip');
      expect(fs.statSync(a.path).size).toBe(a.size);
      expect(fs.statSync(b.path).size).toBe(b.size);
      fs.rmSync(a.path);
      fs.rmSync(b.path);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('GET /osm/api/snapshots and downloads', () => {
  it('lists stored snapshots', async () => {
    const r = await inject('GET', '/osm/api/snapshots');
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.path).toBe(t.app.settings().paths.snapshot);
    expect(body.count).toBe(body.data.length);
    expect(body.data.find((s: { name: string }) => s.name === exported.name)).toEqual({
      name: exported.name, path: path.join(body.path, exported.name), size: exported.data.length, created_at: expect.any(String),
    });
  });

  it('downloads a stored snapshot by name', async () => {
    const r = await inject('GET', `/osm/api/snapshots/download/${exported.name}`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-disposition']).toBe(`attachment; filename=${exported.name}`);
    expect(r.rawPayload).toEqual(exported.data);
    expect((await inject('GET', '/osm/api/snapshots/download/missing.zip')).json()).toEqual({ error: true, message: 'Snapshot not found: missing.zip' });
    for (const bad of ['notes.txt', '..%2F..%2Fsettings.zip', '.zip']) {
      const b = await inject('GET', `/osm/api/snapshots/download/${bad}`);
      expect(b.statusCode, bad).toBe(400);
      expect(b.json().message).toBe('Invalid snapshot name');
    }
  });

  it('streams a fresh export on the legacy path', async () => {
    const r = await inject('GET', `/osm/api/snapshot-download/${WS}`);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/zip');
    expect(String(r.headers['content-disposition'])).toMatch(/^attachment; filename=example\.com_\d{10}\.zip$/);
    expect(r.rawPayload.toString('latin1')).toContain('example.com/http/httpx.jsonl');
    expect((await inject('GET', '/osm/api/snapshot-download/nope.io')).statusCode).toBe(404);
  });
});

describe('DELETE /osm/api/snapshots/:name', () => {
  it('deletes, then answers 404; validates the name', async () => {
    const name = 'extra_1700000000.zip';
    fs.writeFileSync(path.join(t.app.settings().paths.snapshot, name), 'PK');
    const r = await inject('DELETE', `/osm/api/snapshots/${name}`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ message: 'Snapshot deleted successfully', name });
    expect((await inject('DELETE', `/osm/api/snapshots/${name}`)).json()).toEqual({ error: true, message: `Snapshot not found: ${name}` });
    expect((await inject('DELETE', '/osm/api/snapshots/a%2Fb.zip')).json()).toEqual({ error: true, message: 'Invalid snapshot name' });
  });
});

describe('POST /osm/api/snapshots/import', () => {
  it('imports an uploaded export after the workspace was deleted', async () => {
    const assetsBefore = await count('assets', WS);
    await t.app.repos.workspaces.delete(WS);
    fs.rmSync(path.join(workspaces, WS), { recursive: true });
    const r = await upload({}, { name: exported.name, data: exported.data });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      message: 'Workspace imported successfully',
      workspace: WS,
      local_path: path.join(workspaces, WS),
      data_source: 'imported',
      files_count: 2,
      rows: expect.objectContaining({ assets: assetsBefore, vulnerabilities: 6 }),
      warning: 'Imported workspace database state may be unstable. Only import from trusted sources.',
    });
    expect(fs.readFileSync(path.join(workspaces, WS, 'http', 'httpx.jsonl'))).toEqual(fs.readFileSync(fx('httpx-run1.jsonl')));
    expect(await count('assets', WS)).toBe(assetsBefore);
    expect(await t.app.repos.workspaces.get(WS)).toMatchObject({ data_source: 'imported', total_assets: assetsBefore, total_vulns: 6 });
  });

  it('refuses an existing workspace without force (409, no server path) and replaces it with force', async () => {
    const r = await upload({}, { name: exported.name, data: exported.data });
    expect(r.statusCode).toBe(409);
    expect(r.json()).toEqual({ error: true, message: `Failed to import snapshot: workspace already exists: ${WS} (use force=true to overwrite)` });
    expect(r.body).not.toContain(workspaces);
    const forced = await upload({ force: 'true' }, { name: exported.name, data: exported.data });
    expect(forced.statusCode).toBe(200);
    expect(await count('vulnerabilities', WS)).toBe(6); // replaced, not doubled
  });

  it('skip_db extracts files only', async () => {
    const r = await upload({ force: 'true', skip_db: 'true' }, { name: 'renamed.io_1767225600.zip', data: exported.data });
    expect(r.statusCode).toBe(200);
    expect(r.json()).not.toHaveProperty('rows');
  });

  it('answers 400 Either file or url is required (multipart and JSON)', async () => {
    for (const r of [await upload({ force: 'true' }), await inject('POST', '/osm/api/snapshots/import', {})]) {
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: true, message: 'Either file or url is required' });
    }
  });

  it('rejects a hostile upload without touching the workspaces folder', async () => {
    const before = fs.readdirSync(workspaces).sort();
    const evil = buildZip([{ name: 'evil.io/../../../tmp/pwned.txt', data: Buffer.from('x') }]);
    const r = await upload({}, { name: 'evil.io.zip', data: evil });
    expect(r.statusCode).toBe(400);
    expect(r.json().message).toMatch(/^Failed to import snapshot: illegal file path: /);
    expect(fs.readdirSync(workspaces).sort()).toEqual(before);
  });

  it('refuses a URL on a loopback or private address unless server.allow_private_snapshot_urls (SSRF guard)', async () => {
    served.set('/files/example.com_1767225600.zip', exported.data);
    const before = fs.readdirSync(workspaces).sort();
    for (const url of [`${filesUrl}/files/example.com_1767225600.zip`, 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:127.0.0.1]:1/x.zip', 'http://10.1.2.3/x.zip']) {
      const r = await inject('POST', '/osm/api/snapshots/import', { url, force: true });
      expect(r.statusCode, url).toBe(400);
      expect(r.json().message).toMatch(/^Failed to import snapshot: .* is a loopback, link-local or private address; set server.allow_private_snapshot_urls: true to allow it$/);
    }
    // Redirect hops and the DNS answer at connect time go through the same check (registry/fetch.ts).
    // Nothing was written.
    expect(fs.readdirSync(workspaces).sort()).toEqual(before);
  });

  it('imports from a URL (form field or JSON source), following at most 3 redirects', async () => {
    (t.app.settings().settings.server as { allow_private_snapshot_urls?: boolean }).allow_private_snapshot_urls = true;
    served.set('/files/example.com_1767225600.zip', exported.data);
    const viaForm = await upload({ url: `${filesUrl}/files/example.com_1767225600.zip`, force: 'true' });
    expect(viaForm.statusCode).toBe(200);
    expect(viaForm.json().workspace).toBe(WS);
    const viaJson = await inject('POST', '/osm/api/snapshots/import', { source: `${filesUrl}/hop/2`, force: true });
    expect(viaJson.statusCode).toBe(200);
    const tooMany = await inject('POST', '/osm/api/snapshots/import', { url: `${filesUrl}/hop/3`, force: true });
    expect(tooMany.statusCode).toBe(500);
    expect(tooMany.json().message).toBe('Failed to import snapshot: failed to download: too many redirects (more than 3)');
    const missing = await inject('POST', '/osm/api/snapshots/import', { url: `${filesUrl}/files/none.zip` });
    expect(missing.json().message).toBe('Failed to import snapshot: download failed with status: 404');
    const ftp = await inject('POST', '/osm/api/snapshots/import', { url: 'file:///etc/passwd' });
    expect(ftp.statusCode).toBe(400);
    expect(ftp.json().message).toBe('Failed to import snapshot: url must use http or https');
  });

  it('requires authentication on every snapshot route', async () => {
    const routes: ['GET' | 'POST' | 'DELETE', string][] = [
      ['GET', '/osm/api/snapshots'], ['POST', '/osm/api/snapshots/export'], ['POST', '/osm/api/snapshots/import'],
      ['DELETE', '/osm/api/snapshots/a.zip'], ['GET', '/osm/api/snapshots/download/a.zip'], ['GET', `/osm/api/snapshot-download/${WS}`],
    ];
    for (const [method, url] of routes) expect((await inject(method, url, method === 'POST' ? {} : undefined, {})).statusCode, url).toBe(401);
  });
});

