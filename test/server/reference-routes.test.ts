/**
 * The reference's routes osm lacked: GET /workspace-names, GET /artifacts,
 * GET /artifacts/{workspace_name} (file download), GET /vulnerabilities/diffs, GET /asset-stats,
 * GET /database/tables and POST /database/tables/{table}/clear.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlCount, sqlRun } from '../helpers/engine-sql.js';
import type { SqliteAppContext } from '../../src/services/context.js';

let t: TestServer;
let wsRoot: string;
let outside: string;

beforeEach(async () => {
  t = await makeTestServer();
  wsRoot = t.app.settings().paths.workspaces;
  fs.mkdirSync(wsRoot, { recursive: true });
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET OUTSIDE\n');
});
afterEach(async () => {
  await t.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = t.auth) => t.server.inject({ method: 'GET', url, headers });
const clear = (table: string, payload?: unknown, headers: Record<string, string> = {}) =>
  t.server.inject({
    method: 'POST',
    url: `/osm/api/database/tables/${table}/clear`,
    headers: { ...t.auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
  });

/** A request over a real socket with the path sent byte for byte (inject() resolves `..` and `%2e%2e`). */
async function raw(rawPath: string): Promise<{ statusCode: number; body: string; json: () => any }> {
  if (!t.server.server.listening) await t.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.server.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: rawPath, headers: t.auth }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const envelope = (message: string) => ({ error: true, message });

/** A workspace folder with files, and its row (local_path set unless told otherwise). */
async function seedWorkspace(name: string, opts: { row?: boolean; localPath?: string } = {}): Promise<string> {
  const dir = opts.localPath ?? path.join(wsRoot, name);
  fs.mkdirSync(path.join(dir, 'reports'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'reports', 'summary.md'), `# ${name}\n`);
  fs.writeFileSync(path.join(dir, 'subdomains.txt'), 'a.example.com\nb.example.com\n');
  fs.writeFileSync(path.join(dir, 'data.json'), '{"ok":true}');
  fs.writeFileSync(path.join(dir, 'noext'), 'binary?');
  if (opts.row !== false) await t.app.repos.workspaces.upsertRunInfo({ name, local_path: opts.localPath ?? dir });
  return dir;
}

async function seedRun(workspace: string, status: 'running' | 'queued' | 'completed' = 'completed') {
  const run = await t.app.repos.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: workspace, workspace, status: status === 'completed' ? 'running' : status });
  if (status === 'completed') await t.app.repos.runs.transition(run.id, 'completed');
  return run;
}

describe('authentication', () => {
  it('every new route needs credentials', async () => {
    for (const url of ['/osm/api/workspace-names', '/osm/api/artifacts', '/osm/api/artifacts/ws?artifact_path=a', '/osm/api/vulnerabilities/diffs', '/osm/api/asset-stats', '/osm/api/database/tables']) {
      const r = await get(url, {});
      expect(r.statusCode, url).toBe(401);
      expect(r.json().error, url).toBe(true);
    }
    const r = await t.server.inject({ method: 'POST', url: '/osm/api/database/tables/runs/clear', headers: { 'content-type': 'application/json' }, payload: '{"force":true}' });
    expect(r.statusCode).toBe(401);
  });

  it('the routes are in the OpenAPI document', async () => {
    const doc = (await get('/openapi.json')).json();
    expect(doc.paths['/osm/api/workspace-names']?.get).toBeDefined();
    expect(doc.paths['/osm/api/artifacts']?.get).toBeDefined();
    expect(doc.paths['/osm/api/artifacts/{workspace_name}']?.get).toBeDefined();
    expect(doc.paths['/osm/api/vulnerabilities/diffs']?.get).toBeDefined();
    expect(doc.paths['/osm/api/asset-stats']?.get).toBeDefined();
    expect(doc.paths['/osm/api/database/tables']?.get).toBeDefined();
    expect(doc.paths['/osm/api/database/tables/{table}/clear']?.post?.['x-side-effects']).toBe('writes');
  });
});

describe('GET /osm/api/workspace-names', () => {
  it('is [] (not null) when there is no workspace', async () => {
    const r = await get('/osm/api/workspace-names');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual([]);
  });

  it('is a bare array of names, ascending', async () => {
    for (const n of ['zeta.io', 'acme.io', 'example.com']) await t.app.repos.workspaces.upsertRunInfo({ name: n, local_path: '' });
    expect((await get('/osm/api/workspace-names')).json()).toEqual(['acme.io', 'example.com', 'zeta.io']);
  });
});

describe('GET /osm/api/artifacts', () => {
  async function seedArtifacts() {
    const dir = await seedWorkspace('example.com');
    const run = await seedRun('example.com');
    const other = await seedRun('other.org');
    const mk = async (over: Record<string, unknown>) =>
      t.app.repos.artifacts.upsert({ run_id: run.id, workspace: 'example.com', name: 'report', artifact_path: path.join(dir, 'reports', 'summary.md'), artifact_type: 'report', content_type: 'md', size_bytes: 10, line_count: 1, optional: false, description: '', ...over } as never);
    const a1 = await mk({});
    const a2 = await mk({ name: 'subs', artifact_path: path.join(dir, 'subdomains.txt'), artifact_type: 'output', content_type: 'txt', description: '100%_done' });
    const a3 = await mk({ name: 'gone', artifact_path: path.join(dir, 'deleted.json'), content_type: 'json' });
    const a4 = await mk({ name: 'folder', artifact_path: path.join(dir, 'reports'), content_type: 'folder' });
    const a5 = await mk({ run_id: other.id, workspace: 'other.org', name: 'x', artifact_path: '/nonexistent/x.txt' });
    // Distinct, increasing creation times: a1 oldest … a5 newest.
    const ids = [a1, a2, a3, a4, a5].map((a) => a.id);
    for (const [i, id] of ids.entries()) await sqlRun(t, 'UPDATE artifacts SET created_at = ? WHERE id = ?', `2026-01-0${i + 1}T00:00:00.000Z`, id);
    return { run, other, ids };
  }

  it('lists newest first with the same fields as /runs/{id}/artifacts and the list envelope', async () => {
    const { run, ids } = await seedArtifacts();
    const r = await get('/osm/api/artifacts');
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.pagination).toEqual({ total: 5, offset: 0, limit: 20 });
    expect(body.data.map((a: { id: string }) => a.id)).toEqual([...ids].reverse());
    const perRun = (await get(`/osm/api/runs/${run.id}/artifacts`)).json().data;
    const mine = body.data.filter((a: { run_id: number }) => a.run_id === run.id);
    expect(mine).toEqual(perRun);
    expect(Object.keys(body.data[0]).sort()).toEqual(['artifact_path', 'artifact_type', 'content_type', 'created_at', 'description', 'id', 'line_count', 'name', 'run_id', 'size_bytes', 'workspace']);
  });

  it('filters by workspace (exact) and search over every text field, with LIKE wildcards escaped', async () => {
    const { other, ids } = await seedArtifacts();
    const names = async (q: string) => (await get(`/osm/api/artifacts?${q}`)).json().data.map((a: { name: string }) => a.name);
    expect(await names('workspace=other.org')).toEqual(['x']);
    expect(await names('workspace=other')).toEqual([]);
    expect(await names('search=subdomains.txt')).toEqual(['subs']);
    expect(await names(`search=${ids[2]}`)).toEqual(['gone']);
    expect(await names(`search=${other.id}&workspace=other.org`)).toEqual(['x']);
    expect(await names('search=other.or')).toEqual(['x']);
    expect(await names('search=folder')).toEqual(['folder']);
    expect(await names('search=100%25_d')).toEqual(['subs']);
    // `%` and `_` are literal characters, not wildcards.
    expect(await names('search=%25')).toEqual(['subs']);
    expect(await names('search=r_p')).toEqual([]);
    expect(await names('search=xx%25yy')).toEqual([]);
  });

  it('accepts status_code and statusCode and ignores them', async () => {
    await seedArtifacts();
    expect((await get('/osm/api/artifacts?status_code=200')).json().pagination.total).toBe(5);
    expect((await get('/osm/api/artifacts?statusCode=abc')).json().pagination.total).toBe(5);
  });

  it('paginates like the other lists and rejects junk values with the envelope', async () => {
    const { ids } = await seedArtifacts();
    const p = (await get('/osm/api/artifacts?offset=1&limit=2')).json();
    expect(p.pagination).toEqual({ total: 5, offset: 1, limit: 2 });
    expect(p.data.map((a: { id: string }) => a.id)).toEqual([ids[3], ids[2]]);
    expect((await get('/osm/api/artifacts?limit=50000')).json().pagination.limit).toBe(10000);
    const bad = await get('/osm/api/artifacts?limit=abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: true, message: expect.stringContaining('limit') });
    expect((await get('/osm/api/artifacts?offset=-1')).statusCode).toBe(400);
    expect((await get('/osm/api/artifacts?verify_exist=maybe')).statusCode).toBe(400);
  });

  it('verify_exist=true drops rows whose path is gone and marks the rest; the total still counts them', async () => {
    await seedArtifacts();
    const body = (await get('/osm/api/artifacts?verify_exist=true')).json();
    expect(body.pagination.total).toBe(5);
    expect(body.data.map((a: { name: string }) => a.name)).toEqual(['folder', 'subs', 'report']);
    expect(body.data.map((a: { path_exists: boolean; path_is_dir: boolean }) => [a.path_exists, a.path_is_dir])).toEqual([[true, true], [true, false], [true, false]]);
    const plain = (await get('/osm/api/artifacts')).json();
    expect(plain.data[0]).not.toHaveProperty('path_exists');
  });
});

describe('GET /osm/api/artifacts/{workspace_name}', () => {
  it('streams the file with a content type by extension', async () => {
    await seedWorkspace('example.com');
    const md = await get('/osm/api/artifacts/example.com?artifact_path=reports/summary.md');
    expect(md.statusCode).toBe(200);
    expect(md.body).toBe('# example.com\n');
    expect(md.headers['content-type']).toMatch(/^text\/markdown/);
    expect(md.headers['content-length']).toBe(String(Buffer.byteLength('# example.com\n')));
    expect(md.headers['x-content-type-options']).toBe('nosniff');
    expect(md.headers['content-security-policy']).toMatch(/sandbox/);
    expect((await get('/osm/api/artifacts/example.com?artifact_path=subdomains.txt')).headers['content-type']).toMatch(/^text\/plain/);
    expect((await get('/osm/api/artifacts/example.com?artifact_path=data.json')).headers['content-type']).toMatch(/^application\/json/);
    expect((await get('/osm/api/artifacts/example.com?artifact_path=noext')).headers['content-type']).toBe('application/octet-stream');
    // Cleaned paths that stay inside are fine.
    expect((await get('/osm/api/artifacts/example.com?artifact_path=./reports/../subdomains.txt')).body).toBe('a.example.com\nb.example.com\n');
  });

  it('streams a large file completely', async () => {
    const dir = await seedWorkspace('big.io');
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 'x');
    fs.writeFileSync(path.join(dir, 'big.log'), big);
    const r = await get('/osm/api/artifacts/big.io?artifact_path=big.log');
    expect(r.statusCode).toBe(200);
    expect(r.rawPayload.length).toBe(big.length);
  });

  it('answers HEAD without a body and leaks no file descriptor', async () => {
    const dir = await seedWorkspace('example.com');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    const head = await t.server.inject({ method: 'HEAD', url: '/osm/api/artifacts/example.com?artifact_path=data.json', headers: t.auth });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    const before = fds();
    for (let i = 0; i < 30; i++) {
      await get('/osm/api/artifacts/example.com?artifact_path=data.json');
      await t.server.inject({ method: 'HEAD', url: '/osm/api/artifacts/example.com?artifact_path=subdomains.txt', headers: t.auth });
      await get('/osm/api/artifacts/example.com?artifact_path=reports');
      await get('/osm/api/artifacts/example.com?artifact_path=pipe');
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(fds()).toBeLessThanOrEqual(before + 2);
  });

  it('uses the row local_path as the base, else <workspaces>/<name>', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-local-'));
    try {
      await seedWorkspace('moved.io', { localPath: elsewhere });
      fs.writeFileSync(path.join(elsewhere, 'only-here.txt'), 'from local_path');
      expect((await get('/osm/api/artifacts/moved.io?artifact_path=only-here.txt')).body).toBe('from local_path');
      await seedWorkspace('norow.io', { row: false });
      expect((await get('/osm/api/artifacts/norow.io?artifact_path=data.json')).body).toBe('{"ok":true}');
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('answers the reference errors word for word', async () => {
    await seedWorkspace('example.com');
    const cases: [string, number, string][] = [
      ['/osm/api/artifacts/example.com', 400, 'artifact_path query parameter is required'],
      ['/osm/api/artifacts/example.com?artifact_path=', 400, 'artifact_path query parameter is required'],
      ['/osm/api/artifacts/a%20b?artifact_path=x', 400, 'Invalid workspace name'],
      ['/osm/api/artifacts/a%5Cb?artifact_path=x', 400, 'Invalid workspace name'],
      ['/osm/api/artifacts/..?artifact_path=x', 404, ''], // resolved by the client: not this route
      ['/osm/api/artifacts/example.com?artifact_path=.', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=./', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=..', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=../example.com/data.json', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=reports/../../x', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=%2e%2e%2f%2e%2e%2fetc%2fpasswd', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=/etc/passwd', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=%2Fetc%2Fpasswd', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=a%00b', 400, 'Invalid artifact_path'],
      ['/osm/api/artifacts/example.com?artifact_path=missing.txt', 404, 'Artifact not found'],
      ['/osm/api/artifacts/example.com?artifact_path=data.json/x', 404, 'Artifact not found'],
      [`/osm/api/artifacts/example.com?artifact_path=${'a'.repeat(5000)}`, 404, 'Artifact not found'],
      ['/osm/api/artifacts/nope.io?artifact_path=data.json', 404, 'Artifact not found'],
      ['/osm/api/artifacts/example.com?artifact_path=reports', 400, 'artifact_path must point to a file'],
      ['/osm/api/artifacts/example.com?artifact_path=reports/', 400, 'artifact_path must point to a file'],
    ];
    for (const [url, status, message] of cases) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(status);
      if (message) expect(r.json(), url).toEqual(envelope(message));
      else expect(r.json().error, url).toBe(true);
    }
  });

  it('refuses encoded traversal sent byte for byte', async () => {
    await seedWorkspace('example.com');
    for (const p of ['/osm/api/artifacts/%2e%2e?artifact_path=etc/passwd', '/osm/api/artifacts/..?artifact_path=x', '/osm/api/artifacts/%2E%2E?artifact_path=x']) {
      const r = await raw(p);
      expect(r.statusCode, p).toBe(400);
      expect(r.json(), p).toEqual(envelope('Invalid workspace name'));
    }
    for (const p of ['/osm/api/artifacts/..%2f..%2ftmp?artifact_path=x', '/osm/api/artifacts/a%2fb?artifact_path=x']) {
      const r = await raw(p);
      expect(r.statusCode, p).toBe(400);
      expect(r.json(), p).toEqual(envelope('Invalid workspace name'));
    }
    const q = await raw('/osm/api/artifacts/example.com?artifact_path=%2e%2e/%2e%2e/etc/passwd');
    expect(q.statusCode).toBe(400);
    expect(q.json()).toEqual(envelope('Invalid artifact_path'));
    const q2 = await raw('/osm/api/artifacts/example.com?artifact_path=reports/..%2f..%2f..%2fetc%2fpasswd');
    expect(q2.statusCode).toBe(400);
    expect(q2.json()).toEqual(envelope('Invalid artifact_path'));
  });

  it('refuses symlinks that escape the workspace folder (files and folders) with 403', async () => {
    const dir = await seedWorkspace('example.com');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
    fs.symlinkSync(outside, path.join(dir, 'escape'));
    // A relative link climbing to the folder that holds `outside`.
    fs.symlinkSync(path.relative(path.join(dir, 'reports'), path.dirname(outside)), path.join(dir, 'reports', 'up'));
    fs.symlinkSync(path.join(dir, 'data.json'), path.join(dir, 'inside-link.json'));
    for (const p of ['leak.txt', 'escape/secret.txt', `reports/up/${path.basename(outside)}/secret.txt`]) {
      const r = await get(`/osm/api/artifacts/example.com?artifact_path=${encodeURIComponent(p)}`);
      expect(r.statusCode, p).toBe(403);
      expect(r.json(), p).toEqual(envelope('Path traversal attempt detected'));
      expect(r.body).not.toContain('SECRET');
    }
    // A link that stays inside is served.
    expect((await get('/osm/api/artifacts/example.com?artifact_path=inside-link.json')).body).toBe('{"ok":true}');
  });

  it('refuses a workspace folder that is a link out of the workspaces folder', async () => {
    fs.symlinkSync(outside, path.join(wsRoot, 'linked.io'));
    const r = await get('/osm/api/artifacts/linked.io?artifact_path=secret.txt');
    expect(r.statusCode).toBe(403);
    expect(r.json()).toEqual(envelope('Path traversal attempt detected'));
  });

  it('refuses special files without blocking on them', async () => {
    const dir = await seedWorkspace('example.com');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    const r = await get('/osm/api/artifacts/example.com?artifact_path=pipe');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual(envelope('artifact_path must point to a file'));
  });
});

describe('GET /osm/api/vulnerabilities/diffs', () => {
  it('is not captured by /vulnerabilities/:id and answers the list envelope', async () => {
    const r = await get('/osm/api/vulnerabilities/diffs');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ data: [], pagination: { total: 0, offset: 0, limit: 20 } });
    expect((await get('/osm/api/vulnerabilities/diffs?workspace=x&offset=5&limit=3')).json().pagination).toEqual({ total: 0, offset: 5, limit: 3 });
    expect((await get('/osm/api/vulnerabilities/diffs?limit=x')).statusCode).toBe(400);
    // Other ids are still vulnerability ids.
    expect((await get('/osm/api/vulnerabilities/diffz')).json()).toEqual(envelope('Invalid vulnerability ID'));
  });

  it('reads vuln_diffs rows like /assets/diffs reads asset_diffs', async () => {
    const ins = (...values: unknown[]) => sqlRun(t, 'INSERT INTO vuln_diffs (workspace_name, from_time, to_time, total_added, diff_data, created_at) VALUES (?, ?, ?, ?, ?, ?)', ...values);
    await ins('a.io', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', 1, '{"added":[]}', '2026-01-02T00:00:00.000Z');
    await ins('b.io', '2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 2, '{}', '2026-01-03T00:00:00.000Z');
    await ins('a.io', '2026-01-02T00:00:00Z', '2026-01-04T00:00:00Z', 3, '{}', '2026-01-04T00:00:00.000Z');
    const all = (await get('/osm/api/vulnerabilities/diffs')).json();
    expect(all.pagination.total).toBe(3);
    expect(all.data.map((d: { total_added: number }) => d.total_added)).toEqual([3, 2, 1]);
    expect(all.data[2]).toMatchObject({ workspace_name: 'a.io', diff_data: '{"added":[]}', total_removed: 0, total_changed: 0 });
    const a = (await get('/osm/api/vulnerabilities/diffs?workspace=a.io&limit=1')).json();
    expect(a.pagination).toEqual({ total: 2, offset: 0, limit: 1 });
    expect(a.data[0].total_added).toBe(3);
    // The asset diffs endpoint is unaffected (its own table).
    expect((await get('/osm/api/assets/diffs')).json().pagination.total).toBe(0);
  });
});

describe('GET /osm/api/asset-stats', () => {
  it('gives empty lists when there are no assets', async () => {
    expect((await get('/osm/api/asset-stats')).json()).toEqual({ data: { technologies: [], sources: [], remarks: [], asset_types: [] } });
  });

  it('gives sorted distinct technologies, sources, remarks and asset types, per workspace or overall', async () => {
    const s = t.app.repos.assets;
    await s.insert('a.io', { asset_value: 'www.a.io', tech: ['nginx', 'PHP'], source: 'httpx', remarks: 'nginx,Cloudflare', asset_type: 'http' });
    await s.insert('a.io', { asset_value: 'api.a.io', tech: ['nginx', 'Express'], source: 'subfinder', remarks: '', asset_type: 'subdomain' });
    await s.insert('a.io', { asset_value: 'x.a.io', tech: [], source: '', remarks: '["custom", "Cloudflare"]', asset_type: '' });
    await s.insert('b.io', { asset_value: 'b.io', tech: ['IIS'], source: 'manual', remarks: 'waf', asset_type: 'domain' });
    await sqlRun(t, "UPDATE assets SET tech = 'not json' WHERE asset_value = 'x.a.io'");
    const a = (await get('/osm/api/asset-stats?workspace=a.io')).json();
    expect(a).toEqual({ data: { technologies: ['Express', 'PHP', 'nginx'], sources: ['httpx', 'subfinder'], remarks: ['Cloudflare', 'custom', 'nginx'], asset_types: ['http', 'subdomain'] } });
    const all = (await get('/osm/api/asset-stats')).json().data;
    expect(all.technologies).toEqual(['Express', 'IIS', 'PHP', 'nginx']);
    expect(all.sources).toEqual(['httpx', 'manual', 'subfinder']);
    expect(all.remarks).toEqual(['Cloudflare', 'custom', 'nginx', 'waf']);
    expect(all.asset_types).toEqual(['domain', 'http', 'subdomain']);
    expect((await get('/osm/api/asset-stats?workspace=none.io')).json().data.asset_types).toEqual([]);
    // A type whose last asset is gone is no longer listed.
    const b = (await s.list({ workspace: 'b.io' }, { offset: 0, limit: 10 })).data[0]!;
    await s.delete(b.id);
    expect((await get('/osm/api/asset-stats')).json().data.asset_types).toEqual(['http', 'subdomain']);
  });
});

describe('GET /osm/api/database/tables', () => {
  it('lists the ten tables with row counts and valid_tables', async () => {
    await seedRun('a.io');
    await t.app.repos.assets.insert('a.io', { asset_value: 'a.io' });
    const body = (await get('/osm/api/database/tables')).json();
    const names = ['runs', 'step_results', 'artifacts', 'assets', 'event_logs', 'schedules', 'workspaces', 'vulnerabilities', 'asset_diffs', 'vuln_diffs'];
    expect(body.valid_tables).toEqual(names);
    expect(body.data.map((d: { name: string }) => d.name)).toEqual(names);
    const counts = Object.fromEntries(body.data.map((d: { name: string; row_count: number }) => [d.name, d.row_count]));
    expect(counts).toMatchObject({ runs: 1, assets: 1, workspaces: 1, vulnerabilities: 0, vuln_diffs: 0 });
  });
});

describe('POST /osm/api/database/tables/{table}/clear', () => {
  const VALID = ['runs', 'step_results', 'artifacts', 'assets', 'event_logs', 'schedules', 'workspaces', 'vulnerabilities', 'asset_diffs', 'vuln_diffs'];
  const DESTRUCTIVE = 'This is a destructive operation. Set force=true to confirm deletion of all records.';

  it('needs a JSON object body', async () => {
    for (const payload of [undefined, '', 'not json', '[]', '"force"', '{"force":"true"}', '{"force":1}']) {
      const r = await clear('event_logs', payload);
      expect(r.statusCode, String(payload)).toBe(400);
      expect(r.json(), String(payload)).toEqual(envelope('Invalid request body'));
    }
  });

  it('needs force=true, answering with valid_tables', async () => {
    await t.app.repos.events.insert({ topic: 'x' });
    for (const payload of [{}, { force: false }, { force: null }, { other: true }]) {
      const r = await clear('event_logs', payload);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: true, message: DESTRUCTIVE, valid_tables: VALID });
    }
    // force is checked before the table name.
    expect((await clear('nope', {})).json().message).toBe(DESTRUCTIVE);
    expect((await t.app.repos.events.list({}, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('refuses unknown tables, including ones osm has but does not let clear', async () => {
    for (const table of ['foo', 'workflows', 'sqlite_master', 'schema_migrations', 'runs%3B%20DROP%20TABLE%20runs', 'RUNS']) {
      const r = await clear(table, { force: true });
      expect(r.statusCode, table).toBe(400);
      expect(r.json(), table).toEqual({ error: true, message: `unknown table: ${decodeURIComponent(table)} (valid tables: ${VALID.join(', ')})`, valid_tables: VALID });
    }
    expect((await get('/osm/api/database/tables')).statusCode).toBe(200);
  });

  it('clears a table, says so and records an event', async () => {
    await t.app.repos.events.insert({ topic: 'a' });
    await t.app.repos.events.insert({ topic: 'b' });
    const r = await clear('event_logs', { force: true });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ message: 'Table cleared successfully', table: 'event_logs' });
    const left = (await t.app.repos.events.list({}, { offset: 0, limit: 10 })).data;
    expect(left.map((e) => e.topic)).toEqual(['database.table_cleared']);
    expect(JSON.parse(left[0]!.data)).toEqual({ table: 'event_logs', rows_deleted: 2 });
  });

  it('clears runs with their steps and artifacts, unlinks asset and vulnerability diffs, and keeps everything else', async () => {
    const dir = await seedWorkspace('a.io');
    const run = await seedRun('a.io');
    await t.app.repos.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 's1', step_type: 'bash' });
    await t.app.repos.artifacts.upsert({ run_id: run.id, workspace: 'a.io', name: 'r', artifact_path: path.join(dir, 'data.json'), artifact_type: 'report', content_type: 'json', size_bytes: 1, line_count: 1, optional: false, description: '' });
    await t.app.repos.artifacts.upsert({ run_id: 0, workspace: 'a.io', name: 'loose', artifact_path: path.join(dir, 'noext'), artifact_type: 'output', content_type: 'unknown', size_bytes: 1, line_count: 1, optional: false, description: '' });
    await t.app.repos.assetDiffs.insert({ workspace_name: 'a.io', from_time: 'x', to_time: 'y', total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id });
    await t.app.repos.vulnDiffs.insert({ workspace_name: 'a.io', from_time: 'x', to_time: 'y', total_added: 2, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id });
    await t.app.repos.assets.insert('a.io', { asset_value: 'a.io' });
    const r = await clear('runs', { force: true });
    expect(r.statusCode).toBe(200);
    const counts: number[] = [];
    for (const table of ['runs', 'step_results', 'artifacts', 'asset_diffs', 'vuln_diffs', 'assets', 'workspaces']) counts.push(await sqlCount(t, `SELECT COUNT(*) AS n FROM ${table}`));
    expect(counts).toEqual([0, 0, 1, 1, 1, 1, 1]);
    expect((await t.app.repos.assetDiffs.list({}, { offset: 0, limit: 1 })).data[0]!.run_id).toBe(0);
    expect((await t.app.repos.vulnDiffs.list({}, { offset: 0, limit: 1 })).data[0]).toMatchObject({ run_id: 0, total_added: 2 });
    // SQLite checks foreign keys on demand; PostgreSQL enforces its REFERENCES constraints on every write.
    if ('store' in t.app && t.app.store) expect((t.app as SqliteAppContext).store.db.pragma('foreign_key_check')).toEqual([]);
  });

  it('refuses to clear runs or step results while runs are running or queued, deleting nothing', async () => {
    await seedRun('a.io', 'running');
    const queued = await seedRun('b.io', 'queued');
    await seedRun('c.io');
    for (const table of ['runs', 'step_results']) {
      const r = await clear(table, { force: true });
      expect(r.statusCode, table).toBe(409);
      expect(r.json(), table).toEqual(envelope(`Cannot clear ${table}: 2 run(s) are running or queued; cancel them or wait until they finish`));
    }
    expect((await t.app.repos.runs.list({}, { offset: 0, limit: 10 })).total).toBe(3);
    // Once nothing is active the clear goes through.
    await sqlRun(t, "UPDATE runs SET status = 'cancelled'");
    expect(queued.id).toBeGreaterThan(0);
    expect((await clear('runs', { force: true })).statusCode).toBe(200);
    expect((await t.app.repos.runs.list({}, { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('clearing assets and vulnerabilities keeps the workspace counters exact', async () => {
    await t.app.repos.assets.insert('a.io', { asset_value: 'www.a.io', asset_type: 'http' });
    await t.app.repos.vulns.create({ workspace: 'a.io', vuln_info: 'CVE-1', severity: 'high' });
    expect((await clear('assets', { force: true })).statusCode).toBe(200);
    expect((await clear('vulnerabilities', { force: true })).statusCode).toBe(200);
    const ws = (await get('/osm/api/workspaces/a.io')).json().data;
    expect(ws).toMatchObject({ total_assets: 0, total_vulns: 0, vuln_high: 0 });
    expect((await get('/osm/api/asset-stats')).json().data.asset_types).toEqual([]);
  });

  it('refuses to clear workspaces while assets or vulnerabilities remain, then clears', async () => {
    await t.app.repos.assets.insert('a.io', { asset_value: 'www.a.io' });
    await t.app.repos.workspaces.upsertRunInfo({ name: 'empty.io', local_path: '' });
    const r = await clear('workspaces', { force: true });
    expect(r.statusCode).toBe(409);
    expect(r.json().message).toMatch(/^Cannot clear workspaces while 1 asset\(s\) and 0 vulnerability\(ies\) remain/);
    expect((await get('/osm/api/workspace-names')).json()).toEqual(['a.io', 'empty.io']);
    expect((await clear('assets', { force: true })).statusCode).toBe(200);
    expect((await clear('workspaces', { force: true })).statusCode).toBe(200);
    expect((await get('/osm/api/workspace-names')).json()).toEqual([]);
  });

  it('clears schedules, artifacts, step results, asset diffs and vulnerability diffs', async () => {
    await t.app.repos.schedules.create({ name: 'nightly', workflow_name: 'sample-recon', schedule: '0 0 * * *' });
    const run = await seedRun('a.io');
    await t.app.repos.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 's', step_type: 'bash' });
    const diff = { workspace_name: 'a.io', from_time: 'x', to_time: 'y', total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: run.id };
    await t.app.repos.assetDiffs.insert(diff);
    await t.app.repos.vulnDiffs.insert(diff);
    await t.app.repos.vulnDiffs.insert(diff);
    const before = Object.fromEntries((await get('/osm/api/database/tables')).json().data.map((d: { name: string; row_count: number }) => [d.name, d.row_count]));
    expect(before).toMatchObject({ asset_diffs: 1, vuln_diffs: 2 });
    for (const table of ['schedules', 'step_results', 'artifacts', 'asset_diffs', 'vuln_diffs']) {
      const r = await clear(table, { force: true });
      expect(r.statusCode, table).toBe(200);
      expect(r.json()).toEqual({ message: 'Table cleared successfully', table });
    }
    const counts = Object.fromEntries((await get('/osm/api/database/tables')).json().data.map((d: { name: string; row_count: number }) => [d.name, d.row_count]));
    expect(counts).toMatchObject({ schedules: 0, step_results: 0, runs: 1, asset_diffs: 0, vuln_diffs: 0 });
    const events = (await t.app.repos.events.list({ topic: 'database.table_cleared' }, { offset: 0, limit: 10 })).data.map((e) => JSON.parse(e.data));
    expect(events).toContainEqual({ table: 'vuln_diffs', rows_deleted: 2 });
  });
});
