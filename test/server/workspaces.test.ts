import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let outside: string;
let wsRoot: string;

beforeEach(async () => {
  t = await makeTestServer();
  wsRoot = t.app.settings().paths.workspaces;
  fs.mkdirSync(wsRoot, { recursive: true });
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  fs.writeFileSync(path.join(outside, 'run-execution.log'), 'SECRET OUTSIDE\n');
  fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep');
});
afterEach(async () => {
  await t.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

/** A workspace with a row, a folder with state files, an asset, a vulnerability and a finished run. */
async function seed(name: string): Promise<string> {
  const dir = path.join(wsRoot, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run-execution.log'), `log of ${name}\n`);
  fs.writeFileSync(path.join(dir, 'run-state.json'), '{"ok":true}\n');
  await t.app.repos.workspaces.upsertRunInfo({ name, local_path: dir, last_run: '2030-01-01T00:00:00.000Z', run_workflow: 'sample-recon' });
  await t.app.repos.assets.insert(name, { asset_value: `www.${name}` });
  await t.app.repos.vulns.create({ workspace: name, vuln_info: 'CVE-1', severity: 'high' });
  const run = await t.app.repos.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: name, workspace: name, status: 'running' });
  await t.app.repos.runs.transition(run.id, 'completed');
  return dir;
}

const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });

/**
 * A request over a real socket with the path sent byte for byte: inject() (like browsers)
 * resolves `..` and `%2e%2e` before routing, a hostile client does not.
 */
async function raw(method: 'GET' | 'DELETE', rawPath: string): Promise<{ statusCode: number; body: string; json: () => any }> {
  if (!t.server.server.listening) await t.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.server.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: rawPath, headers: t.auth }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('auth', () => {
  it('every workspace route needs credentials', async () => {
    for (const [method, url] of [['GET', '/osm/api/workspaces'], ['GET', '/osm/api/workspaces/a.com'], ['DELETE', '/osm/api/workspaces/a.com'], ['GET', '/osm/api/workspaces/a.com/state-file?state_file=execution_log']] as const) {
      expect((await t.server.inject({ method, url })).statusCode, `${method} ${url}`).toBe(401);
    }
  });
});

describe('GET /workspaces', () => {
  it('lists rows by name with filters and pagination', async () => {
    await seed('b.example.com');
    await seed('a.example.com');
    await t.app.repos.workspaces.upsertRunInfo({ name: 'imported.io', local_path: '', data_source: 'imported' });
    const res = await get('/osm/api/workspaces');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((w: { name: string }) => w.name)).toEqual(['a.example.com', 'b.example.com', 'imported.io']);
    expect(body.pagination).toEqual({ total: 3, offset: 0, limit: 20 });
    expect(body.data[0]).toMatchObject({ name: 'a.example.com', data_source: 'local', total_assets: 1, total_vulns: 1, run_workflow: 'sample-recon' });
    expect((await get('/osm/api/workspaces?search=b.ex')).json().data.map((w: { name: string }) => w.name)).toEqual(['b.example.com']);
    expect((await get('/osm/api/workspaces?data_source=imported')).json().data.map((w: { name: string }) => w.name)).toEqual(['imported.io']);
    const page = (await get('/osm/api/workspaces?offset=1&limit=1')).json();
    expect(page.data.map((w: { name: string }) => w.name)).toEqual(['b.example.com']);
    expect(page.pagination).toEqual({ total: 3, offset: 1, limit: 1 });
  });

  it('rejects junk pagination and caps the limit', async () => {
    expect((await get('/osm/api/workspaces?limit=abc')).statusCode).toBe(400);
    expect((await get('/osm/api/workspaces?offset=-1')).statusCode).toBe(400);
    expect((await get('/osm/api/workspaces?filesystem=maybe')).statusCode).toBe(400);
    expect((await get('/osm/api/workspaces?limit=999999')).json().pagination.limit).toBe(10000);
  });

  it('filesystem=true merges the folders of the workspaces folder', async () => {
    await seed('a.example.com');
    fs.mkdirSync(path.join(wsRoot, 'disk-only.io'));
    fs.writeFileSync(path.join(wsRoot, 'not-a-dir.txt'), 'x');
    const body = (await get('/osm/api/workspaces?filesystem=true')).json();
    expect(body.workspaces_dir).toBe(wsRoot);
    expect(body.data).toEqual([
      expect.objectContaining({ name: 'a.example.com', data_source: 'filesystem', local_path: path.join(wsRoot, 'a.example.com'), total_assets: 1, in_database: true, tags: ['filesystem'] }),
      expect.objectContaining({ name: 'disk-only.io', data_source: 'filesystem', total_assets: 0, in_database: false, tags: ['filesystem', 'filesystem-only'] }),
    ]);
    expect(body.pagination.total).toBe(2);
  });
});

describe('GET /workspaces/{name}', () => {
  it('returns the row with its run count', async () => {
    await seed('a.example.com');
    const res = await get('/osm/api/workspaces/a.example.com');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ name: 'a.example.com', data_source: 'local', local_path: path.join(wsRoot, 'a.example.com'), total_assets: 1, total_vulns: 1, vuln_high: 1, runs_count: 1, run_workflow: 'sample-recon', last_run: '2030-01-01T00:00:00.000Z' });
    expect(res.json().data.created_at).toBeTruthy();
  });

  it('404 for an unknown workspace, 400 for unsafe names', async () => {
    expect((await get('/osm/api/workspaces/nope.io')).json()).toEqual({ error: true, message: 'Workspace not found: nope.io' });
    expect((await get('/osm/api/workspaces/nope.io')).statusCode).toBe(404);
    for (const name of ['..', '%2e%2e', '%2E%2E', '%2Fetc%2Fpasswd', '..%2F..%2Fetc', 'a%20b', '.', '%00']) {
      const res = await raw('GET', `/osm/api/workspaces/${name}`);
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'Invalid workspace name' });
    }
  });
});

describe('GET /workspaces/{name}/state-file', () => {
  it('returns a state file of the workspace', async () => {
    const dir = await seed('a.example.com');
    const res = await get('/osm/api/workspaces/a.example.com/state-file?state_file=execution_log');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ workspace: 'a.example.com', state_file: 'execution_log', file_path: path.join(dir, 'run-execution.log'), content: 'log of a.example.com\n', size: 21, truncated: false });
    expect((await get('/osm/api/workspaces/a.example.com/state-file?state_file=state_file')).json().content).toBe('{"ok":true}\n');
  });

  it('caps big files', async () => {
    const dir = await seed('a.example.com');
    fs.writeFileSync(path.join(dir, 'run-console.log'), Buffer.alloc(5 * 1024 * 1024 + 10, 'a'));
    const body = (await get('/osm/api/workspaces/a.example.com/state-file?state_file=console_log')).json();
    expect(body.truncated).toBe(true);
    expect(body.content.length).toBe(5 * 1024 * 1024);
    expect(body.size).toBe(5 * 1024 * 1024 + 10);
  });

  it('400 for a missing or unknown state_file, 404 for a missing file or workspace', async () => {
    await seed('a.example.com');
    for (const q of ['', '?state_file=', '?state_file=../../etc/passwd', '?state_file=secrets']) {
      const res = await get(`/osm/api/workspaces/a.example.com/state-file${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().message).toBe('state_file must be one of: execution_log, console_log, completed_file, state_file, workflow_file');
    }
    const missing = await get('/osm/api/workspaces/a.example.com/state-file?state_file=workflow_file');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('State file not found: run-workflow.yaml');
    expect((await get('/osm/api/workspaces/nope.io/state-file?state_file=execution_log')).statusCode).toBe(404);
    for (const name of ['..', '%2e%2e', '%2Fetc']) {
      const res = await raw('GET', `/osm/api/workspaces/${name}/state-file?state_file=execution_log`);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().message).toBe('Invalid workspace name');
    }
  });

  it('never reads through a symlink that points outside the workspaces folder', async () => {
    fs.symlinkSync(outside, path.join(wsRoot, 'evil.io'));
    await t.app.repos.workspaces.upsertRunInfo({ name: 'evil.io', local_path: outside });
    const res = await get('/osm/api/workspaces/evil.io/state-file?state_file=execution_log');
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('SECRET OUTSIDE');
    // A state file that is itself a link out of the workspace.
    const dir = await seed('a.example.com');
    fs.rmSync(path.join(dir, 'run-execution.log'));
    fs.symlinkSync(path.join(outside, 'run-execution.log'), path.join(dir, 'run-execution.log'));
    const linked = await get('/osm/api/workspaces/a.example.com/state-file?state_file=execution_log');
    expect(linked.statusCode).toBe(400);
    expect(linked.body).not.toContain('SECRET OUTSIDE');
  });
});

describe('DELETE /workspaces/{name}', () => {
  it('deletes the row and its data but keeps the folder without purge_files', async () => {
    const dir = await seed('a.example.com');
    await seed('b.example.com');
    const res = await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com', headers: t.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Workspace deleted', name: 'a.example.com', deleted: { assets: 1, vulns: 1, runs: 1 }, files_removed: false });
    expect(await t.app.repos.workspaces.get('a.example.com')).toBeUndefined();
    expect((await t.app.repos.assets.list({ workspace: 'a.example.com' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await t.app.repos.runs.list({ workspace: 'a.example.com' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await t.app.repos.assets.list({ workspace: 'b.example.com' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect(fs.existsSync(dir)).toBe(true);
    expect((await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com', headers: t.auth })).statusCode).toBe(200); // folder still there
    fs.rmSync(dir, { recursive: true });
    const gone = await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com', headers: t.auth });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().message).toBe('Workspace not found: a.example.com');
  });

  it('purge_files=true removes the folder', async () => {
    const dir = await seed('a.example.com');
    const res = await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com?purge_files=true', headers: t.auth });
    expect(res.json().files_removed).toBe(true);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('purging a symlinked workspace removes the link, never the target', async () => {
    fs.symlinkSync(outside, path.join(wsRoot, 'evil.io'));
    await t.app.repos.workspaces.upsertRunInfo({ name: 'evil.io', local_path: outside });
    const res = await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/evil.io?purge_files=true', headers: t.auth });
    expect(res.statusCode).toBe(200);
    expect(fs.existsSync(path.join(wsRoot, 'evil.io'))).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('does not follow links inside a purged folder', async () => {
    const dir = await seed('a.example.com');
    fs.symlinkSync(outside, path.join(dir, 'link-out'));
    await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com?purge_files=true', headers: t.auth });
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('refuses while runs are active, and validates the name', async () => {
    await seed('a.example.com');
    await t.app.repos.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: 'a.example.com', workspace: 'a.example.com', status: 'queued' });
    const busy = await t.server.inject({ method: 'DELETE', url: '/osm/api/workspaces/a.example.com', headers: t.auth });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().message).toMatch(/active run/);
    for (const name of ['..', '%2e%2e', '%2Fetc%2Fpasswd', '.']) {
      const res = await raw('DELETE', `/osm/api/workspaces/${name}?purge_files=true`);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().message).toBe('Invalid workspace name');
    }
    expect(fs.existsSync(wsRoot)).toBe(true);
  });
});
