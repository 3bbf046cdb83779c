import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
beforeEach(async () => {
  t = await makeTestServer();
});
afterEach(async () => {
  await t.close();
});

const post = (url: string, payload: unknown) => t.server.inject({ method: 'POST', url, headers: t.auth, payload: payload as object });
const evalEvents = async () => (await t.app.repos.events.list({ topic: 'function.eval' }, { offset: 0, limit: 50 })).data;

describe('auth', () => {
  it('every function route needs credentials', async () => {
    for (const [method, url] of [['POST', '/osm/api/functions/eval'], ['POST', '/osm/api/functions/execute'], ['GET', '/osm/api/functions/list'], ['GET', '/osm/api/functions']] as const) {
      expect((await t.server.inject({ method, url, payload: method === 'POST' ? { script: '1' } : undefined })).statusCode, url).toBe(401);
    }
    expect(await evalEvents()).toHaveLength(0);
  });
});

describe('POST /functions/eval', () => {
  it('renders target and params, evaluates, and returns the rendered script', async () => {
    const res = await post('/osm/api/functions/eval', { script: 'trim("  {{target}} ")', target: 'example.com' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: 'example.com', rendered_script: 'trim("  example.com ")' });
    const bi = await post('/osm/api/functions/eval', { script: '"{{Output}}"', target: 'example.com' });
    expect(bi.json().result).toBe(`${t.app.settings().paths.workspaces}/example.com`); // built-ins are rendered too
    const res2 = await post('/osm/api/functions/eval', { script: '"{{Target}}-{{suffix}}".length + 1', target: 'a.io', params: { suffix: 'x y' } });
    expect(res2.json()).toEqual({ result: 9, rendered_script: '"a.io-x y".length + 1' });
    // Objects and arrays come back as JSON.
    expect((await post('/osm/api/functions/eval', { script: 'split("a,b", ",")' })).json().result).toEqual(['a', 'b']);
  });

  it('run_module starts its child osm in the daemon\'s base and workflow folders', async () => {
    const wf = t.app.settings().paths.workflows;
    fs.mkdirSync(wf, { recursive: true });
    fs.writeFileSync(path.join(wf, 'eval-child.yaml'), 'name: eval-child\nkind: module\nsteps:\n  - name: hello\n    type: bash\n    command: echo "child ran in {{Output}}"\n');
    const res = await post('/osm/api/functions/eval', { script: "run_module('eval-child', 'child.example.com')" });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toContain(`child ran in ${t.app.settings().paths.workspaces}/`);
  }, 60_000);

  it('records every evaluation as an event without param values', async () => {
    await post('/osm/api/functions/eval', { script: 'to_upper_case("{{token}}")', params: { token: 'sekrit-value' } });
    const events = await evalEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ topic: 'function.eval', source: 'api' });
    const data = JSON.parse(events[0]!.data);
    expect(data.script).toBe('to_upper_case("{{token}}")');
    expect(data.param_names).toEqual(['token']);
    expect(events[0]!.data).not.toContain('sekrit-value');
    await post('/osm/api/functions/eval', { script: 'x'.repeat(2000) });
    expect(JSON.parse((await evalEvents())[0]!.data).script).toHaveLength(500);
  });

  it('400 script is required', async () => {
    for (const payload of [{}, { script: '' }, { script: '   ' }, { script: 42 }]) {
      const res = await post('/osm/api/functions/eval', payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'script is required' });
    }
  });

  it('400 Template rendering failed', async () => {
    const res = await post('/osm/api/functions/eval', { script: 'trim("{{target")' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Template rendering failed: /);
  });

  it('400 Execution failed, also for time-outs, and records the failure', async () => {
    const res = await post('/osm/api/functions/eval', { script: 'no_such_function(1)' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Execution failed: .*no_such_function/);
    const loop = await post('/osm/api/functions/eval', { script: 'while (true) {}' });
    expect(loop.statusCode).toBe(400);
    expect(loop.json().message).toMatch(/^Execution failed: .*timed out/);
    expect(JSON.parse((await evalEvents())[0]!.data).error).toMatch(/timed out/);
  });

  it('validates the untrusted target and params before they reach the script', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    try {
      const marker = path.join(dir, 'pwned');
      for (const target of ['a.com");write_file("' + marker + '","x");("', '$(id)', 'a.com;id', '-rf']) {
        const res = await post('/osm/api/functions/eval', { script: 'trim("{{target}}")', target });
        expect(res.statusCode, target).toBe(400);
      }
      const bad = await post('/osm/api/functions/eval', { script: '"{{p}}"', params: { p: '");write_file("' + marker + '","x");("' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toMatch(/params\["p"\] contains forbidden character/);
      expect(fs.existsSync(marker)).toBe(false);
      const nonString = await post('/osm/api/functions/eval', { script: '1', params: { n: 5 } });
      expect(nonString.statusCode).toBe(400);
      expect(nonString.json().message).toMatch(/params\.n: must be a string/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('POST /functions/execute', () => {
  it('evaluates an expression with context variables as data', async () => {
    const res = await post('/osm/api/functions/execute', { expression: 'to_upper_case(name) + n', context: { name: '"); evil("', n: 2 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { result: '"); EVIL("2' } });
    expect(await evalEvents()).toHaveLength(1);
  });

  it('400 expression is required / Execution failed', async () => {
    expect((await post('/osm/api/functions/execute', {})).json()).toEqual({ error: true, message: 'expression is required' });
    const res = await post('/osm/api/functions/execute', { expression: 'throw new Error("boom")' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Execution failed: .*boom/);
  });

  it('renders templates from the context only with safe values', async () => {
    expect((await post('/osm/api/functions/execute', { expression: '"{{x}}"', context: { x: 'fine' } })).json()).toEqual({ data: { result: 'fine' } });
    expect((await post('/osm/api/functions/execute', { expression: '"{{x}}"', context: { x: '"+1+"' } })).statusCode).toBe(400);
  });
});

describe('GET /functions/list and /functions', () => {
  it('lists the catalogue by category', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/functions/list', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const fns = res.json().functions;
    expect(Object.keys(fns)).toContain('file');
    expect(fns.file).toContainEqual({ name: 'file_exists(path)', description: expect.any(String), return_type: 'bool' });
    // the spec's camelCase spellings are listed too
    expect(fns.file).toContainEqual({ name: 'fileExists(path)', description: expect.stringContaining('same as file_exists'), return_type: 'bool' });
    expect(fns.string.map((f: { name: string }) => f.name)).toContain('toLowerCase(str)');
    expect(fns.notification.map((f: { name: string }) => f.name)).toContain('notify_webhook(message)');
  });

  it('filters by category; unknown category is 404', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/functions?category=string', headers: t.auth });
    const body = res.json();
    expect(body.category).toBe('string');
    expect(body.total).toBe(body.data.length);
    expect(body.data.every((f: { category: string }) => f.category === 'string')).toBe(true);
    expect(body.data.find((f: { name: string }) => f.name === 'trim')).toMatchObject({ signature: 'trim(str)', return_type: 'string' });
    const all = (await t.server.inject({ method: 'GET', url: '/osm/api/functions', headers: t.auth })).json();
    expect(all.total).toBeGreaterThan(body.total);
    const bad = await t.server.inject({ method: 'GET', url: '/osm/api/functions?category=nope', headers: t.auth });
    expect(bad.statusCode).toBe(404);
    expect(bad.json()).toEqual({ error: true, message: 'Function category not found: nope' });
  });
});
