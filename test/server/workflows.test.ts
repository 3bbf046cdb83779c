import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

/** A multipart/form-data body (fields and at most one file) for inject(). */
function multipart(fields: Record<string, string>, file?: { field?: string; name: string; content: string }) {
  const boundary = `----osmtest${Math.random().toString(16).slice(2)}`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file) {
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: application/x-yaml\r\n\r\n${file.content}\r\n`,
    );
  }
  parts.push(`--${boundary}--\r\n`);
  return { payload: parts.join(''), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const MODULE_A = `kind: module
name: alpha-scan
description: Alpha scanner for hosts
tags: [recon, fast]
params:
  - name: threads
    default: 10
  - name: wordlist
    required: true
steps:
  - name: one
    type: bash
    command: echo one
    timeout: 1800
  - name: two
    type: bash
    command: echo two
`;
const MODULE_B = `kind: module
name: beta-probe
description: Probe things
tags: [probe]
steps:
  - name: only
    type: bash
    command: echo b
`;
const FLOW = `kind: flow
name: gamma-flow
description: A flow of alpha and beta
tags: [recon]
modules:
  - name: a
    path: modules/alpha-scan.yaml
  - name: b
    path: modules/beta-probe.yaml
    depends_on: [a]
`;
const HIDDEN = `kind: module
name: delta-hidden
hidden: true
steps:
  - name: x
    type: bash
    command: echo x
`;

let t: TestServer;
let wfDir: string;

beforeAll(async () => {
  wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  fs.mkdirSync(path.join(wfDir, 'modules'));
  fs.mkdirSync(path.join(wfDir, 'flows'));
  fs.writeFileSync(path.join(wfDir, 'modules', 'alpha-scan.yaml'), MODULE_A);
  fs.writeFileSync(path.join(wfDir, 'modules', 'beta-probe.yaml'), MODULE_B);
  fs.writeFileSync(path.join(wfDir, 'modules', 'delta-hidden.yaml'), HIDDEN);
  fs.writeFileSync(path.join(wfDir, 'flows', 'gamma-flow.yaml'), FLOW);
  t = await makeTestServer({ workflowFolder: wfDir });
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(wfDir, { recursive: true, force: true });
});

const ITEM_KEYS = ['checksum', 'description', 'file_path', 'indexed_at', 'kind', 'module_count', 'name', 'params', 'required_params', 'step_count', 'tags'];

describe('GET /osm/api/workflows', () => {
  it('requires authentication', async () => {
    for (const url of ['/osm/api/workflows', '/osm/api/workflows/tags', '/osm/api/workflows/alpha-scan']) {
      const res = await t.server.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(401);
      expect(res.json()).toEqual({ error: true, message: expect.any(String) });
    }
    const up = await t.server.inject({ method: 'POST', url: '/osm/api/workflow-upload', ...multipart({}, { name: 'x.yaml', content: MODULE_B }) });
    expect(up.statusCode).toBe(401);
    expect((await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh' })).statusCode).toBe(401);
  });

  it('indexes on demand and lists visible workflows by name with exactly the spec fields', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toEqual({ total: 3, offset: 0, limit: 50 });
    expect(body.data.map((w: { name: string }) => w.name)).toEqual(['alpha-scan', 'beta-probe', 'gamma-flow']);
    const alpha = body.data[0];
    expect(Object.keys(alpha).sort()).toEqual(ITEM_KEYS);
    expect(alpha).toMatchObject({
      kind: 'module',
      description: 'Alpha scanner for hosts',
      tags: ['recon', 'fast'],
      file_path: path.join(wfDir, 'modules', 'alpha-scan.yaml'),
      params: [
        { name: 'threads', required: false, default: '10', generator: '' },
        { name: 'wordlist', required: true, default: '', generator: '' },
      ],
      required_params: ['wordlist'],
      step_count: 2,
      module_count: 0,
    });
    expect(alpha.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(alpha.indexed_at))).toBe(false);
    const flow = body.data[2];
    expect(flow).toMatchObject({ kind: 'flow', module_count: 2, step_count: 3 });
  });

  it('filters by kind, tags (any match) and search, and paginates', async () => {
    const get = async (qs: string) => (await t.server.inject({ method: 'GET', url: `/osm/api/workflows?${qs}`, headers: t.auth })).json();
    expect((await get('kind=flow')).data.map((w: { name: string }) => w.name)).toEqual(['gamma-flow']);
    expect((await get('kind=module')).pagination.total).toBe(2);
    expect((await get('tags=probe,fast')).data.map((w: { name: string }) => w.name)).toEqual(['alpha-scan', 'beta-probe']);
    expect((await get('tags=recon&kind=module')).data.map((w: { name: string }) => w.name)).toEqual(['alpha-scan']);
    expect((await get('search=PROBE')).data.map((w: { name: string }) => w.name)).toEqual(['beta-probe']);
    expect((await get('search=alpha%20and')).data.map((w: { name: string }) => w.name)).toEqual(['gamma-flow']);
    const page = await get('offset=1&limit=1');
    expect(page.pagination).toEqual({ total: 3, offset: 1, limit: 1 });
    expect(page.data.map((w: { name: string }) => w.name)).toEqual(['beta-probe']);
    expect((await get('limit=999999')).pagination.limit).toBe(10000);
  });

  it('rejects a bad kind, source or pagination with 400', async () => {
    for (const qs of ['kind=fragment', 'source=cloud', 'limit=abc', 'offset=-1', 'limit=0']) {
      const res = await t.server.inject({ method: 'GET', url: `/osm/api/workflows?${qs}`, headers: t.auth });
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().error).toBe(true);
    }
  });

  it('source=filesystem parses the files (same items, hidden skipped)', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows?source=filesystem', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((w: { name: string }) => w.name)).toEqual(['alpha-scan', 'beta-probe', 'gamma-flow']);
    expect(Object.keys(body.data[0]).sort()).toEqual(ITEM_KEYS);
    const db = (await t.server.inject({ method: 'GET', url: '/osm/api/workflows', headers: t.auth })).json();
    expect(body.data).toEqual(db.data);
    const flows = (await t.server.inject({ method: 'GET', url: '/osm/api/workflows?source=filesystem&kind=flow', headers: t.auth })).json();
    expect(flows.pagination.total).toBe(1);
  });
});

describe('GET /osm/api/workflows/tags', () => {
  it('lists distinct tags of visible workflows', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/tags', headers: t.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ tags: ['fast', 'probe', 'recon'], count: 3 });
  });
});

describe('GET /osm/api/workflows/{name}', () => {
  it('returns the raw YAML by default', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/alpha-scan', headers: t.auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/yaml; charset=utf-8');
    expect(res.body).toBe(MODULE_A);
  });

  it('returns the detail object with json=true', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/alpha-scan?json=true', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d).toMatchObject({ name: 'alpha-scan', kind: 'module', modules: [], triggers: [], dependencies: { commands: [], files: [] } });
    for (const k of ITEM_KEYS) expect(d, k).toHaveProperty(k); // every listing field, indexed_at included
    expect(Date.parse(d.indexed_at)).not.toBeNaN();
    expect(d.steps).toEqual([
      { index: 0, name: 'one', type: 'bash', command: 'echo one', timeout: '30m', pre_condition: '', exports: {} },
      { index: 1, name: 'two', type: 'bash', command: 'echo two', timeout: '', pre_condition: '', exports: {} },
    ]);
    const flow = (await t.server.inject({ method: 'GET', url: '/osm/api/workflows/gamma-flow?json=true', headers: t.auth })).json();
    expect(flow.modules).toEqual([
      { index: 0, name: 'a', path: 'modules/alpha-scan.yaml', depends_on: [], condition: '' },
      { index: 1, name: 'b', path: 'modules/beta-probe.yaml', depends_on: ['a'], condition: '' },
    ]);
  });

  it('404 for an unknown workflow', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/workflows/nope', headers: t.auth });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Workflow not found' });
  });

  it('400 for names that could traverse paths', async () => {
    for (const name of ['..%2F..%2Fetc%2Fpasswd', '..%5C..%5Cwin', 'a..b', 'a%5Cb', 'a%00b', '%2Fetc%2Fpasswd', 'modules%2Falpha-scan']) {
      const res = await t.server.inject({ method: 'GET', url: `/osm/api/workflows/${name}`, headers: t.auth });
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'Invalid workflow name' });
    }
  });

  it('never reads a YAML file outside the workflows folder by name', async () => {
    // A workflow-looking file in the daemon's working directory must not be reachable as "<name>.yaml".
    const cwdFile = path.join(process.cwd(), `osm-test-outside-${process.pid}.yaml`);
    fs.writeFileSync(cwdFile, MODULE_B.replace('beta-probe', 'outside-wf'));
    try {
      const res = await t.server.inject({ method: 'GET', url: `/osm/api/workflows/${path.basename(cwdFile)}`, headers: t.auth });
      expect(res.statusCode).toBe(404);
    } finally {
      fs.rmSync(cwdFile, { force: true });
    }
  });
});

describe('POST /osm/api/workflows/refresh', () => {
  it('counts added, updated and removed; unchanged rows are not "updated"', async () => {
    const refresh = async (qs = '') => {
      const res = await t.server.inject({ method: 'POST', url: `/osm/api/workflows/refresh${qs}`, headers: t.auth });
      expect(res.statusCode).toBe(200);
      return res.json();
    };
    expect(await refresh()).toEqual({ message: 'Workflows indexed successfully', added: 0, updated: 0, removed: 0, errors: [] });
    const forced = await refresh('?force=true');
    expect(forced.updated).toBe(4);
    fs.writeFileSync(path.join(wfDir, 'modules', 'beta-probe.yaml'), MODULE_B.replace('Probe things', 'Probe more things'));
    fs.writeFileSync(path.join(wfDir, 'modules', 'epsilon.yaml'), MODULE_B.replace('beta-probe', 'epsilon'));
    fs.rmSync(path.join(wfDir, 'modules', 'delta-hidden.yaml'));
    fs.writeFileSync(path.join(wfDir, 'modules', 'broken.yaml'), 'kind: module\nname: broken\nsteps: 3\n');
    const r = await refresh();
    expect(r).toMatchObject({ added: 1, updated: 1, removed: 1 });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/broken\.yaml/);
    fs.rmSync(path.join(wfDir, 'modules', 'broken.yaml'));
  });

  it('rejects a junk force value', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/workflows/refresh?force=maybe', headers: t.auth });
    expect(res.statusCode).toBe(400);
  });
});

describe('POST /osm/api/workflow-upload', () => {
  const upload = (fields: Record<string, string>, file?: { field?: string; name: string; content: string }, qs = '') =>
    t.server.inject({ method: 'POST', url: `/osm/api/workflow-upload${qs}`, ...(() => {
      const m = multipart(fields, file);
      return { payload: m.payload, headers: { ...m.headers, ...t.auth } };
    })() });

  it('saves a valid module into modules/ and indexes it', async () => {
    const content = MODULE_B.replace('beta-probe', 'zeta-up').replace('Probe things', 'Uploaded one');
    const res = await upload({}, { name: 'zeta-up.yaml', content });
    expect(res.statusCode).toBe(201);
    const dest = path.join(wfDir, 'modules', 'zeta-up.yaml');
    expect(res.json()).toEqual({ message: 'Workflow uploaded', name: 'zeta-up', kind: 'module', description: 'Uploaded one', path: dest });
    expect(fs.readFileSync(dest, 'utf8')).toBe(content);
    const list = (await t.server.inject({ method: 'GET', url: '/osm/api/workflows?search=zeta', headers: t.auth })).json();
    expect(list.data.map((w: { name: string }) => w.name)).toEqual(['zeta-up']);
    // No temp file is left behind.
    expect(fs.readdirSync(path.join(wfDir, 'modules')).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('saves a flow into flows/ with a sanitised basename', async () => {
    const content = FLOW.replace('gamma-flow', 'eta-flow');
    const res = await upload({}, { name: '../../evil name.yml', content });
    expect(res.statusCode).toBe(201);
    expect(res.json().path).toBe(path.join(wfDir, 'flows', 'evil_name.yml'));
    expect(fs.existsSync(path.join(wfDir, 'flows', 'evil_name.yml'))).toBe(true);
  });

  it('refuses to overwrite unless force=true (field or query)', async () => {
    const content = MODULE_B.replace('beta-probe', 'zeta-up').replace('Probe things', 'Second version');
    const res = await upload({}, { name: 'zeta-up.yaml', content });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: true, message: 'Workflow file already exists: zeta-up.yaml (use force=true to overwrite)' });
    const forced = await upload({ force: 'true' }, { name: 'zeta-up.yaml', content });
    expect(forced.statusCode).toBe(201);
    expect(forced.json().description).toBe('Second version');
    const viaQuery = await upload({}, { name: 'zeta-up.yaml', content: content.replace('Second', 'Third') }, '?force=true');
    expect(viaQuery.statusCode).toBe(201);
    expect(viaQuery.json().description).toBe('Third version');
  });

  it('refuses a second file defining an existing workflow name', async () => {
    const res = await upload({}, { name: 'other-name.yaml', content: MODULE_B });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/beta-probe/);
    expect(fs.existsSync(path.join(wfDir, 'modules', 'other-name.yaml'))).toBe(false);
  });

  it('400 No file provided', async () => {
    const res = await upload({ force: 'true' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'No file provided' });
    const json = await t.server.inject({ method: 'POST', url: '/osm/api/workflow-upload', headers: t.auth, payload: { file: 'x' } });
    expect(json.statusCode).toBe(400);
    expect(json.json().message).toBe('No file provided');
    const wrongField = await upload({}, { field: 'other', name: 'x.yaml', content: MODULE_B });
    expect(wrongField.json().message).toBe('No file provided');
  });

  it('400 for non-YAML files', async () => {
    const res = await upload({}, { name: 'evil.sh', content: MODULE_B });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'Only YAML files (.yaml or .yml) are allowed' });
  });

  it('400 for invalid YAML and for invalid workflows, saving nothing', async () => {
    const before = fs.readdirSync(path.join(wfDir, 'modules')).sort();
    const bad = await upload({}, { name: 'bad.yaml', content: 'kind: module\nname: [unclosed\n' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^Invalid workflow YAML: /);
    const invalid = await upload({}, { name: 'invalid.yaml', content: 'kind: module\nname: invalid\nsteps:\n  - name: a\n    type: nope\n  - type: bash\n' });
    expect(invalid.statusCode).toBe(400);
    const msg = invalid.json().message as string;
    expect(msg).toMatch(/^Workflow validation failed: /);
    expect(msg).toMatch(/steps\[0\]/);
    expect(msg).toMatch(/steps\[1\]/);
    expect(msg).not.toMatch(/\.upload-/);
    const notWorkflow = await upload({}, { name: 'nw.yaml', content: 'hello: world\n' });
    expect(notWorkflow.statusCode).toBe(400);
    expect(fs.readdirSync(path.join(wfDir, 'modules')).sort()).toEqual(before);
  });
});
