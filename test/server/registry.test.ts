import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { setSettingValue } from '../../src/settings/set.js';
import { routesOf } from '../../src/server/route.js';
import { buildTarGz, buildZip, FAKE_TOOL, type ZipSpec } from '../fixtures/registry/archives.js';
import { startFileServer, type FileServer } from '../fixtures/registry/file-server.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/registry');
const PACK = path.join(FIXTURES, 'workflow-pack');

let t: TestServer;
let srv: FileServer;
let tmp: string;
let marker: string;
let registryFile: string;
let registryUrl: string;
let binaries: string;
let workflows: string;

function setPrivate(allowed: boolean): void {
  setSettingValue(t.app.manager.path, 'server.allow_private_registry', String(allowed));
  t.app.manager.reload();
}

/** The pack folder as zip entries under one top folder (like a GitHub archive). */
function packZipEntries(dir: string, prefix: string): ZipSpec[] {
  const out: ZipSpec[] = [{ name: `${prefix}/` }];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...packZipEntries(p, `${prefix}/${e.name}`));
    else out.push({ name: `${prefix}/${e.name}`, content: fs.readFileSync(p) });
  }
  return out;
}

const nixOnPath = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v nix'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  marker = path.join(tmp, 'valide-command-ran');
  srv = await startFileServer({
    '/osmfake-zip_1.0.0_linux.zip': buildZip([
      { name: 'osmfake-zip_1.0.0/' },
      { name: 'osmfake-zip_1.0.0/osmfake-zip', content: FAKE_TOOL, mode: 0o100755 },
      { name: 'osmfake-zip_1.0.0/LICENSE.md', content: 'MIT' },
    ]),
    '/osmfake-tgz_2.0.0.tar.gz': buildTarGz([{ name: './osmfake-tgz', content: FAKE_TOOL, mode: 0o755 }, { name: './README', content: 'r' }]),
    '/evil-traversal.tar.gz': buildTarGz([{ name: 'osmfake-evil', content: FAKE_TOOL, mode: 0o755 }, { name: '../../../evil-from-archive', content: 'pwned' }]),
    '/pack.zip': buildZip(packZipEntries(PACK, 'osm-pack-main')),
    '/broken.json': '{"a": ',
  });
  const text = fs.readFileSync(path.join(FIXTURES, 'registry.json'), 'utf8').replaceAll('__BASE_URL__', srv.url).replaceAll('__MARKER__', marker);
  registryFile = path.join(tmp, 'registry.json');
  fs.writeFileSync(registryFile, text);
  srv.routes.set('/registry.json', text);
  registryUrl = `${srv.url}/registry.json`;

  t = await makeTestServer();
  binaries = t.app.settings().paths.binaries;
  workflows = t.app.settings().paths.workflows;
  fs.mkdirSync(binaries, { recursive: true });
  fs.writeFileSync(path.join(binaries, 'osmfake-present'), FAKE_TOOL, { mode: 0o755 });
});

afterAll(async () => {
  await t?.close();
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => setPrivate(true));

const get = (url: string, headers: Record<string, string> = t.auth) => t.server.inject({ method: 'GET', url, headers });
const post = (url: string, payload: unknown, headers: Record<string, string> = t.auth) => t.server.inject({ method: 'POST', url, headers, payload: payload as object });
const info = (q: string) => get(`/osm/api/registry-info${q}`);
const install = (body: Record<string, unknown>) => post('/osm/api/registry-install', body);

describe('authentication and side effects', () => {
  it('every registry route answers 401 without credentials', async () => {
    const calls = [
      get('/osm/api/registry-info', {}),
      get('/osm/api/install/registry', {}),
      get('/osm/api/install/status/jq', {}),
      post('/osm/api/registry-install', { type: 'binary', names: ['jq'] }, {}),
      post('/osm/api/install/binary', { name: 'jq' }, {}),
      post('/osm/api/install', { type: 'binary', name: 'jq' }, {}),
    ];
    for (const res of await Promise.all(calls)) expect(res.statusCode).toBe(401);
  });

  it('GET routes read only; installs are declared as executing', () => {
    const mine = routesOf(t.server).filter((r) => r.url.includes('registry') || r.url.includes('/install'));
    expect(mine.map((r) => `${r.method} ${r.url}`).sort()).toEqual([
      'GET /osm/api/install/registry', 'GET /osm/api/install/status/:binary_name', 'GET /osm/api/registry-info',
      'POST /osm/api/install', 'POST /osm/api/install/binary', 'POST /osm/api/registry-install',
    ]);
    for (const r of mine) expect(r.sideEffects, r.url).toBe(r.method === 'GET' ? 'none' : 'executes');
  });
});

describe('GET /osm/api/registry-info', () => {
  it('lists the bundled registry with installed, optional and path', async () => {
    const res = await info('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.registry_mode).toBe('direct-fetch');
    expect(body.registry_source).toBe('bundled');
    expect(Object.keys(body.binaries)).toEqual(expect.arrayContaining(['subfinder', 'httpx', 'nuclei', 'dnsx', 'naabu', 'katana', 'jq']));
    const sub = body.binaries.subfinder;
    expect(sub).toMatchObject({ repo_link: 'https://github.com/projectdiscovery/subfinder', optional: false });
    expect(typeof sub.installed).toBe('boolean');
    expect(typeof sub.path).toBe('string');
    expect(sub.linux.amd64).toMatch(/^https:\/\/github\.com\/projectdiscovery\/subfinder\/releases\/download\//);
    expect(sub['package-manager']).toBeUndefined();
    expect(body.binaries.jq.optional).toBe(true);
  });

  it('reads a caller registry over HTTP: installed detection by file system, valide-command never executed', async () => {
    const res = await info(`?registry_url=${encodeURIComponent(registryUrl)}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.registry_url).toBe(registryUrl);
    expect(body.registry_source).toBe('url');
    expect(body.trusted).toBe(false);
    expect(body.last_update_at).toBe('2025-01-01T00:00:00Z');
    expect(body.binaries['osmfake-present']).toMatchObject({ installed: true, path: path.join(binaries, 'osmfake-present'), version: '3.0.0', optional: false });
    expect(body.binaries['osmfake-cmd']).toMatchObject({ installed: false, path: '', optional: true, 'valide-command': `touch ${marker}` });
    expect(body.binaries['osmfake-zip'].installed).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('reads a local registry file when private registries are allowed', async () => {
    const res = await info(`?registry_url=${encodeURIComponent(registryFile)}&registry_mode=direct-fetch`);
    expect(res.statusCode).toBe(200);
    expect(res.json().registry_source).toBe('file');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('nix-build view: categories from tags, nix_installed, nothing executed', async () => {
    const res = await info(`?registry_mode=nix-build&registry_url=${encodeURIComponent(registryUrl)}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.registry_mode).toBe('nix-build');
    expect(body.nix_installed).toBe(nixOnPath);
    const names = body.categories.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(['Fake', 'Port Scan', 'Recon', 'Utility']);
    const utility = body.categories.find((c: { name: string }) => c.name === 'Utility');
    expect(utility.tools.map((x: { name: string }) => x.name)).toEqual(['osmfake-cmd', 'osmfake-present']);
    expect(utility.tools[1]).toEqual({ name: 'osmfake-present', desc: expect.any(String), tags: ['utility'], version: '3.0.0', repo_link: '', installed: true, path: path.join(binaries, 'osmfake-present') });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('400 for an unknown registry_mode', async () => {
    const res = await info('?registry_mode=magic');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: "registry_mode must be 'direct-fetch' or 'nix-build'" });
  });

  it('500 when the registry cannot be loaded or parsed', async () => {
    let res = await info(`?registry_url=${encodeURIComponent(`${srv.url}/nope.json`)}`);
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: true, message: 'Failed to load registry: HTTP status 404' });
    res = await info(`?registry_url=${encodeURIComponent(`${srv.url}/broken.json`)}`);
    expect(res.statusCode).toBe(500);
    expect(res.json().message).toMatch(/^Failed to load registry: failed to parse registry JSON: invalid JSON/);
  });

  it('refuses loopback URLs and local files unless server.allow_private_registry is true (no request is made)', async () => {
    setPrivate(false);
    const before = srv.hits.get('/registry.json') ?? 0;
    let res = await info(`?registry_url=${encodeURIComponent(registryUrl)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Failed to load registry: 127\.0\.0\.1 is a loopback, link-local or private address; set server\.allow_private_registry: true/);
    res = await info(`?registry_url=${encodeURIComponent(srv.url.replace('127.0.0.1', 'localhost'))}/registry.json`);
    expect(res.statusCode).toBe(400);
    res = await info(`?registry_url=${encodeURIComponent(registryFile)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Failed to load registry: a local registry file is only allowed when server.allow_private_registry is true');
    res = await info(`?registry_url=${encodeURIComponent('file:///etc/passwd')}`);
    expect(res.statusCode).toBe(400);
    expect(srv.hits.get('/registry.json') ?? 0).toBe(before);
  });
});

describe('POST /osm/api/registry-install (binary)', () => {
  it('downloads, unpacks and installs zip and tar.gz releases: 0755, runnable, recorded as an event', async () => {
    const res = await install({ type: 'binary', names: ['osmfake-zip', 'osmfake-tgz'], registry_url: registryUrl });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      message: 'Binary installation completed', registry_mode: 'direct-fetch', installed: ['osmfake-zip', 'osmfake-tgz'],
      installed_count: 2, binaries_folder: binaries, failed: [], failed_count: 0,
    });
    for (const name of ['osmfake-zip', 'osmfake-tgz']) {
      const p = path.join(binaries, name);
      expect(fs.lstatSync(p).isFile()).toBe(true);
      expect(fs.statSync(p).mode & 0o777).toBe(0o755);
      expect(execFileSync(p, ['x'], { encoding: 'utf8' })).toBe('fake-tool-ok x\n');
    }
    expect(body.details).toContainEqual({ name: 'osmfake-zip', action: 'downloaded', path: path.join(binaries, 'osmfake-zip') });
    const events = await t.app.repos.events.list({ topic: 'install.binary' }, { offset: 0, limit: 10 });
    expect(events.data.length).toBeGreaterThan(0);
    expect(JSON.parse(events.data[0]!.data)).toMatchObject({ installed: ['osmfake-zip', 'osmfake-tgz'], trusted: false });

    const again = await get(`/osm/api/registry-info?registry_url=${encodeURIComponent(registryUrl)}`);
    expect(again.json().binaries['osmfake-zip']).toMatchObject({ installed: true, path: path.join(binaries, 'osmfake-zip') });
  });

  it('reports an unknown name, untrusted commands and a hostile archive as failures, without executing or writing outside', async () => {
    const res = await install({ type: 'binary', names: ['nope', 'osmfake-cmd', 'osmfake-evil', 'osmfake-present'], registry_url: registryFile });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.installed).toEqual(['osmfake-present']);
    expect(body.failed_count).toBe(3);
    const byName = Object.fromEntries(body.failed.map((f: { name: string; error: string }) => [f.name, f.error]));
    expect(byName.nope).toBe("binary 'nope' not found in registry");
    expect(byName['osmfake-cmd']).toMatch(/refusing to run the install command \(command-(linux|darwin)\.dual\) of an untrusted registry/);
    expect(byName['osmfake-evil']).toMatch(/^unsafe or invalid archive: illegal entry name .*parent directory segment/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(path.join(binaries, 'osmfake-evil'))).toBe(false);
    for (const dir of [tmp, os.tmpdir(), path.dirname(os.tmpdir())]) expect(fs.existsSync(path.join(dir, 'evil-from-archive'))).toBe(false);
  });

  it('install_all skips optional entries unless install_optional', async () => {
    let res = await install({ type: 'binary', install_all: true, registry_url: registryUrl });
    expect(res.statusCode).toBe(200);
    let body = res.json();
    const all = [...body.installed, ...body.failed.map((f: { name: string }) => f.name)].sort();
    expect(all).toEqual(['osmfake-evil', 'osmfake-present', 'osmfake-tgz', 'osmfake-zip']);
    res = await install({ type: 'binary', install_all: true, install_optional: true, registry_url: registryUrl });
    body = res.json();
    expect(body.failed.map((f: { name: string }) => f.name).sort()).toEqual(['osmfake-cmd', 'osmfake-evil', 'osmfake-made']);
    expect(fs.existsSync(path.join(binaries, 'osmfake-made'))).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('validates the request', async () => {
    let res = await install({ type: 'binary' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('names array is required for binary installation (or set install_all=true)');
    res = await install({ type: 'binary', names: [] });
    expect(res.json().message).toBe('names array is required for binary installation (or set install_all=true)');
    res = await install({ type: 'tool', names: ['x'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe("type must be 'binary' or 'workflow'");
    res = await install({ names: ['x'] });
    expect(res.json().message).toBe("type must be 'binary' or 'workflow'");
    res = await install({ type: 'binary', names: 'jq' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Invalid request body: names: /);
    res = await t.server.inject({ method: 'POST', url: '/osm/api/registry-install', headers: { ...t.auth, 'content-type': 'application/json' }, payload: '' });
    expect(res.statusCode).toBe(400);
    res = await install({ type: 'binary', names: ['x'], registry_mode: 'docker' });
    expect(res.json().message).toBe("registry_mode must be 'direct-fetch' or 'nix-build'");
  });

  it('refuses a loopback download when private registries are not allowed', async () => {
    setPrivate(false);
    const res = await install({ type: 'binary', names: ['osmfake-zip'], registry_url: registryUrl });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Failed to load registry: 127\.0\.0\.1 is a loopback/);
  });

  it.skipIf(nixOnPath)('nix-build without Nix: 400', async () => {
    const res = await install({ type: 'binary', names: ['subfinder'], registry_mode: 'nix-build' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'Nix is not installed. Install Nix first or use registry_mode=direct-fetch' });
  });
});

describe('POST /osm/api/registry-install (workflow)', () => {
  const names = async () => {
    const res = await get('/osm/api/workflows?limit=100');
    return res.json().data.map((w: { name: string }) => w.name).sort();
  };

  it('requires a source and rejects bad ones with 500 Failed to install workflow', async () => {
    let res = await install({ type: 'workflow' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('source is required for workflow installation (git URL, zip URL, or local path)');
    res = await install({ type: 'workflow', source: '   ' });
    expect(res.statusCode).toBe(400);
    const missing = path.join(tmp, 'does-not-exist');
    res = await install({ type: 'workflow', source: missing });
    expect(res.statusCode).toBe(500);
    expect(res.json().message).toBe(`Failed to install workflow: unknown source type: ${missing}`);
    res = await install({ type: 'workflow', source: '--upload-pack=touch /tmp/x' });
    expect(res.json().message).toBe('Failed to install workflow: unknown source type: --upload-pack=touch /tmp/x');
    res = await install({ type: 'workflow', source: 'http://example.invalid/repo' });
    expect(res.json().message).toBe('Failed to install workflow: git sources must start with https:// or git@');
    const empty = path.join(tmp, 'no-yaml');
    fs.mkdirSync(empty, { recursive: true });
    fs.writeFileSync(path.join(empty, 'notes.txt'), 'x');
    res = await install({ type: 'workflow', source: empty });
    expect(res.statusCode).toBe(500);
    expect(res.json().message).toBe('Failed to install workflow: source does not appear to contain workflows (no .yaml files found)');
    expect(fs.existsSync(path.join(workflows, 'flows', 'sample-flow.yaml'))).toBe(true);
  });

  it('installs from a local folder: old folder backed up, index refreshed, event recorded', async () => {
    const before = await names();
    expect(before).toEqual(expect.arrayContaining(['sample-flow']));
    const res = await install({ type: 'workflow', source: PACK });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ message: 'Workflow installed successfully', source: PACK, workflow_folder: workflows });
    expect(body.backup).toMatch(new RegExp(`^${workflows.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.backup-\\d{8}T\\d{9}Z`));
    expect(body.indexed).toEqual({ added: 2, updated: 0, removed: before.length });
    expect(fs.existsSync(path.join(body.backup, 'flows', 'sample-flow.yaml'))).toBe(true);
    expect(fs.existsSync(path.join(workflows, 'modules', 'pack-echo.yaml'))).toBe(true);
    expect(fs.existsSync(path.join(workflows, 'flows', 'sample-flow.yaml'))).toBe(false);
    expect(await names()).toEqual(['pack-echo', 'pack-flow']);
    const events = await t.app.repos.events.list({ topic: 'install.workflow' }, { offset: 0, limit: 10 });
    expect(JSON.parse(events.data[0]!.data)).toMatchObject({ kind: 'dir', backup: body.backup });
  });

  it('installs from a local zip with one top folder, and from an archive URL', async () => {
    const zip = path.join(tmp, 'pack.zip');
    fs.writeFileSync(zip, buildZip(packZipEntries(PACK, 'osm-pack-main')));
    fs.writeFileSync(path.join(workflows, 'marker.yaml'), 'kind: module\nname: marker\nsteps: []\n');
    let res = await install({ type: 'workflow', source: zip });
    expect(res.statusCode).toBe(200);
    let body = res.json();
    expect(fs.existsSync(path.join(body.backup, 'marker.yaml'))).toBe(true);
    expect(fs.existsSync(path.join(workflows, 'osm-pack', 'flows', 'pack-flow.yaml'))).toBe(true);
    expect(fs.existsSync(path.join(workflows, 'marker.yaml'))).toBe(false);

    res = await install({ type: 'workflow', source: `${srv.url}/pack.zip` });
    expect(res.statusCode).toBe(200);
    body = res.json();
    expect(body.source).toBe(`${srv.url}/pack.zip`);
    expect(await names()).toEqual(['pack-echo', 'pack-flow']);
  });

  it('refuses a hostile workflow archive and leaves the folder as it was', async () => {
    const evil = path.join(tmp, 'evil.tar.gz');
    fs.writeFileSync(evil, buildTarGz([{ name: 'w/ok.yaml', content: 'kind: module\n' }, { name: 'w/../../../../evil-wf', content: 'x' }]));
    const listing = fs.readdirSync(workflows).sort();
    const res = await install({ type: 'workflow', source: evil });
    expect(res.statusCode).toBe(500);
    expect(res.json().message).toMatch(/^Failed to install workflow: unsafe or invalid archive: illegal entry name/);
    expect(fs.readdirSync(workflows).sort()).toEqual(listing);
    expect(fs.existsSync(path.join(path.dirname(workflows), 'evil-wf'))).toBe(false);
    // No staging folder is left behind.
    expect(fs.readdirSync(path.dirname(workflows)).filter((n) => n.includes('.install-'))).toEqual([]);
  });
});

describe('reference alias routes', () => {
  it('GET /install/registry maps method to the registry views', async () => {
    let res = await get('/osm/api/install/registry?method=nix');
    expect(res.statusCode).toBe(200);
    expect(res.json().registry_mode).toBe('nix-build');
    res = await get('/osm/api/install/registry');
    expect(res.json().registry_mode).toBe('direct-fetch');
    res = await get('/osm/api/install/registry?method=apt');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe("method must be 'direct' or 'nix'");
  });

  it('GET /install/status/{name}', async () => {
    let res = await get('/osm/api/install/status/osmfake-present');
    expect(res.json()).toEqual({ name: 'osmfake-present', installed: true, path: path.join(binaries, 'osmfake-present') });
    res = await get('/osm/api/install/status/not-a-real-tool-xyz');
    expect(res.json()).toEqual({ name: 'not-a-real-tool-xyz', installed: false, path: '' });
    res = await get(`/osm/api/install/status/${encodeURIComponent('../bin/sh')}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Invalid binary name: ../bin/sh');
  });

  it('POST /install/binary and POST /install use the same services', async () => {
    let res = await post('/osm/api/install/binary', { name: 'not-in-registry' });
    expect(res.statusCode).toBe(200);
    expect(res.json().failed).toEqual([{ name: 'not-in-registry', error: "binary 'not-in-registry' not found in registry" }]);
    res = await post('/osm/api/install/binary', {});
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('name is required');
    res = await post('/osm/api/install', { type: 'nope', name: 'x' });
    expect(res.json().message).toBe("type must be 'binary' or 'workflow'");
    res = await post('/osm/api/install', { type: 'workflow', name: PACK });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toBe('Workflow installed successfully');
  });
});
