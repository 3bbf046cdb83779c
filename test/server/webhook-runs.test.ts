import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlCount } from '../helpers/engine-sql.js';
import { setSettingValue } from '../../src/settings/set.js';
import { registerWebhookRuns } from '../../src/services/webhook-runs.js';
import type { WebhookRunRecord } from '../../src/store/index.js';

/** Tiny coreutils-only workflows. */
function writeWorkflows(dir: string): void {
  fs.mkdirSync(path.join(dir, 'modules'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'flows'), { recursive: true });
  const mod = (name: string, steps: string) => fs.writeFileSync(path.join(dir, 'modules', `${name}.yaml`), `kind: module\nname: ${name}\ndescription: test ${name}\nsteps:\n${steps}`);
  mod('quick', '  - name: hello\n    type: bash\n    command: echo "hello {{Target}}"\n');
  mod('other', '  - name: other\n    type: bash\n    command: echo "other {{Target}}"\n');
  mod('doomed', '  - name: x\n    type: bash\n    command: echo x\n');
  fs.writeFileSync(path.join(dir, 'flows', 'combo.yaml'), 'kind: flow\nname: combo\nmodules:\n  - name: q\n    path: modules/quick.yaml\n');
}

async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let wfDir: string;
let t: TestServer;
let plain: WebhookRunRecord; // no key
let keyed: WebhookRunRecord; // key 'k3y-For-Tests_0123'
const KEY = 'k3y-For-Tests_0123';

function setEnabled(on: boolean): void {
  // A settings change applied by reload (as the daemon's hot reload does): no restart.
  setSettingValue(t.app.manager.path, 'server.enable_trigger_via_webhook', String(on));
  t.app.manager.reload();
}

const trigger = (uuid: string, opts: { key?: string; payload?: string | object; headers?: Record<string, string>; method?: 'GET' | 'POST' } = {}) =>
  t.server.inject({
    method: opts.method ?? 'POST',
    url: `/osm/api/webhook-runs/${uuid}/trigger${opts.key !== undefined ? `?key=${encodeURIComponent(opts.key)}` : ''}`,
    headers: opts.headers ?? {},
    ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
  });

const runCount = () => sqlCount(t, 'SELECT COUNT(*) AS n FROM runs');

beforeAll(async () => {
  wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  writeWorkflows(wfDir);
  t = await makeTestServer({ workflowFolder: wfDir, withQueue: true, limit: 2 });
  [plain] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['example.com'], params: { api_token: 'tok-secret-999' } });
  [keyed] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['keyed.example.com'], authKey: KEY });
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(wfDir, { recursive: true, force: true });
});

describe('disabled (the default)', () => {
  it('the trigger is not reachable: 404 like an unknown route, nothing created', async () => {
    expect(t.app.settings().settings.server.enable_trigger_via_webhook).toBe(false);
    const before = await runCount();
    for (const method of ['POST', 'GET'] as const) {
      const res = await trigger(plain.webhook_uuid, { method });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: true, message: `Route ${method} /osm/api/webhook-runs/${plain.webhook_uuid}/trigger not found` });
    }
    // Same answer with a body, and the body is not even read.
    const withBody = await trigger(keyed.webhook_uuid, { key: KEY, payload: { target: 'x.example.com' } });
    expect(withBody.statusCode).toBe(404);
    expect(await runCount()).toBe(before);
    // The listing is authenticated and does not depend on the setting.
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/webhook-runs/list', headers: t.auth })).statusCode).toBe(200);
  });
});

describe('enabled', () => {
  beforeAll(() => setEnabled(true));
  afterAll(() => setEnabled(false));

  it('unknown uuid: 404 Webhook not found', async () => {
    for (const uuid of ['00000000-0000-4000-8000-000000000000', 'nope', '..%2f..']) {
      const res = await trigger(uuid);
      expect(res.statusCode, uuid).toBe(404);
      expect(res.json()).toEqual({ error: true, message: 'Webhook not found' });
    }
  });

  it('wrong or missing key: 401; the API key does not replace it', async () => {
    const before = await runCount();
    for (const key of [undefined, '', 'wrong', KEY.slice(0, -1), `${KEY}x`, KEY.toUpperCase()]) {
      const res = await trigger(keyed.webhook_uuid, { key });
      expect(res.statusCode, String(key)).toBe(401);
      expect(res.json()).toEqual({ error: true, message: 'Invalid or missing authentication key' });
    }
    const repeated = await t.server.inject({ method: 'POST', url: `/osm/api/webhook-runs/${keyed.webhook_uuid}/trigger?key=${KEY}&key=${KEY}` });
    expect(repeated.statusCode).toBe(401);
    const apiKeyOnly = await trigger(keyed.webhook_uuid, { headers: t.auth });
    expect(apiKeyOnly.statusCode).toBe(401);
    expect(await runCount()).toBe(before);
  });

  it('GET triggers too (the reference accepts both), without reading overrides', async () => {
    const before = await runCount();
    const res = await trigger(plain.webhook_uuid, { method: 'GET' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ message: 'Run triggered successfully', target: plain.target });
    expect(await runCount()).toBe(before + 1);
  });

  it('a trigger queues a high-priority webhook run that the daemon executes to completed', async () => {
    const res = await trigger(keyed.webhook_uuid, { key: KEY });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['message', 'run_id', 'run_uuid', 'target', 'workflow']);
    expect(body).toMatchObject({ message: 'Run triggered successfully', target: 'keyed.example.com', workflow: 'quick' });
    expect(body.run_uuid).toMatch(/^[0-9a-f-]{36}$/);
    const done = await until(async () => {
      const r = await t.app.repos.runs.getByUuid(body.run_uuid);
      return r && ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 'run to finish');
    expect(done).toMatchObject({ id: body.run_id, status: 'completed', trigger_type: 'webhook', priority: 'high', run_mode: 'local', target: 'keyed.example.com', workflow_name: 'quick' });
    const steps = await t.app.repos.steps.listByRun(done.id);
    expect(steps.map((s) => s.output)).toEqual(['hello keyed.example.com']);
    // Like any API run: run.started / run.completed events, plus the webhook's own record.
    const topics = (await t.app.repos.events.list({ run_id: done.run_uuid }, { offset: 0, limit: 50 })).data.map((e) => e.topic);
    expect(topics).toEqual(expect.arrayContaining(['webhook.received', 'run.started', 'run.completed']));
    // The template is untouched except for its counters.
    const tpl = (await t.app.repos.webhookRuns.getByUuid(keyed.webhook_uuid))!;
    expect(tpl).toMatchObject({ target: 'keyed.example.com', trigger_count: 1, last_run_uuid: body.run_uuid });
    // Templates never appear among runs (only the spec's states there).
    const runs = (await t.server.inject({ method: 'GET', url: '/osm/api/runs?limit=100', headers: t.auth })).json().data;
    expect(runs.every((r: { status: string }) => ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled'].includes(r.status))).toBe(true);
    const plainTriggers = (await t.app.repos.webhookRuns.getByUuid(plain.webhook_uuid))!.trigger_count;
    expect(runs.filter((r: { target: string }) => r.target === 'example.com').length).toBe(plainTriggers);
  });

  it('overrides: target, flow, module (module wins); parse errors and wrong types are ignored', async () => {
    const fire = async (payload: string | object | undefined, headers: Record<string, string> = {}) => {
      const res = await trigger(plain.webhook_uuid, { payload, headers });
      expect(res.statusCode, res.body).toBe(202);
      return (await t.app.repos.runs.getByUuid(res.json().run_uuid))!;
    };
    expect(await fire({ target: 'override.example.com' })).toMatchObject({ target: 'override.example.com', workflow_name: 'quick', workflow_kind: 'module' });
    expect(await fire({ module: 'other' })).toMatchObject({ target: 'example.com', workflow_name: 'other' });
    expect(await fire({ flow: 'combo' })).toMatchObject({ workflow_name: 'combo', workflow_kind: 'flow' });
    expect(await fire({ flow: 'combo', module: 'other', target: 'both.example.com' })).toMatchObject({ workflow_name: 'other', target: 'both.example.com' });
    // Not JSON, malformed JSON, another content type, no content type: the template's values.
    expect(await fire('{"target": ', { 'content-type': 'application/json' })).toMatchObject({ target: 'example.com', workflow_name: 'quick' });
    expect(await fire('target=form.example.com', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({ target: 'example.com' });
    expect(await fire(JSON.stringify({ target: 'text.example.com' }), { 'content-type': 'text/plain' })).toMatchObject({ target: 'text.example.com' });
    expect(await fire({ target: 5, module: ['x'], flow: null })).toMatchObject({ target: 'example.com', workflow_name: 'quick' });
    expect(await fire(undefined)).toMatchObject({ target: 'example.com', params: { api_token: 'tok-secret-999' } });
  });

  it('a hostile target override is rejected with 400 and creates nothing', async () => {
    const before = await runCount();
    const [emptyTpl] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['placeholder'], options: { emptyTarget: true } });
    for (const [target, ch] of [['a.com;id', ';'], ['$(id)', '$'], ['-oProxyCommand=x', '-'], ['a.com\nb', '\\n'], ['x`id`', '`']] as const) {
      for (const uuid of [plain.webhook_uuid, emptyTpl!.webhook_uuid]) {
        const res = await trigger(uuid, { payload: { target } });
        expect(res.statusCode, target).toBe(400);
        expect(res.json().error).toBe(true);
        expect(res.json().message, target).toMatch(/^target /);
        if (ch !== '\\n' && ch !== '-') expect(res.json().message).toContain(`"${ch}"`);
      }
    }
    expect(await runCount()).toBe(before);
  });

  it('workflow overrides: unknown 404, path 400, kind mismatch 400; a removed workflow is 404', async () => {
    const bad = async (payload: object, status: number, message: string) => {
      const res = await trigger(plain.webhook_uuid, { payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json()).toEqual({ error: true, message });
    };
    await bad({ module: 'nope' }, 404, "Workflow 'nope' not found");
    await bad({ flow: 'nope', module: 'also-nope' }, 404, "Workflow 'also-nope' not found");
    await bad({ module: '../../etc/passwd' }, 400, 'Invalid workflow name');
    await bad({ module: 'combo' }, 400, "'combo' is a flow, not a module");
    await bad({ flow: 'quick' }, 400, "'quick' is a module, not a flow");
    const [doomed] = await registerWebhookRuns(t.app, { workflows: ['doomed'], targets: ['example.com'] });
    fs.rmSync(path.join(wfDir, 'modules', 'doomed.yaml'));
    t.app.loader.clear();
    const res = await trigger(doomed!.webhook_uuid);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: "Workflow 'doomed' not found" });
  });

  it('bodies over the public limit are refused with 413', async () => {
    const before = await runCount();
    const res = await trigger(plain.webhook_uuid, { payload: JSON.stringify({ target: 'big.example.com', pad: 'x'.repeat(70 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: true, message: 'Request body is too large (limit 65536 bytes)' });
    expect(await runCount()).toBe(before);
  });

  it('disabling again by reload closes the route without a restart', async () => {
    setEnabled(false);
    try {
      const res = await trigger(plain.webhook_uuid);
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toMatch(/^Route POST .* not found$/);
    } finally {
      setEnabled(true);
    }
    expect((await trigger(plain.webhook_uuid)).statusCode).toBe(202);
  });
});

describe('GET /osm/api/webhook-runs/list and DELETE', () => {
  it('needs authentication', async () => {
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/webhook-runs/list' })).statusCode).toBe(401);
    expect((await t.server.inject({ method: 'DELETE', url: `/osm/api/webhook-runs/${plain.webhook_uuid}` })).statusCode).toBe(401);
  });

  it('lists templates newest first with webhook_url; the key and secret params are redacted', async () => {
    const res = await t.server.inject({ method: 'GET', url: '/osm/api/webhook-runs/list', headers: t.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.total).toBe(body.data.length);
    expect(body.total).toBeGreaterThanOrEqual(2);
    expect(res.body).not.toContain(KEY);
    expect(res.body).not.toContain('tok-secret-999');
    const k = body.data.find((d: { webhook_uuid: string }) => d.webhook_uuid === keyed.webhook_uuid);
    expect(k).toMatchObject({
      id: keyed.id, workflow_name: 'quick', workflow_kind: 'module', target: 'keyed.example.com', status: 'webhook', trigger_type: 'webhook',
      priority: 'high', webhook_auth_key: '[REDACTED]', webhook_url: `/osm/api/webhook-runs/${keyed.webhook_uuid}/trigger`,
    });
    const p = body.data.find((d: { webhook_uuid: string }) => d.webhook_uuid === plain.webhook_uuid);
    expect(p).toMatchObject({ webhook_auth_key: '', params: { api_token: '[REDACTED]' } });
    const ids = body.data.map((d: { id: number }) => d.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
  });

  it('DELETE removes a template (its runs stay); unknown is 404', async () => {
    const [tmp] = await registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['gone.example.com'] });
    const del = await t.server.inject({ method: 'DELETE', url: `/osm/api/webhook-runs/${tmp!.webhook_uuid}`, headers: t.auth });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ message: 'Webhook deleted', webhook_uuid: tmp!.webhook_uuid });
    const again = await t.server.inject({ method: 'DELETE', url: `/osm/api/webhook-runs/${tmp!.webhook_uuid}`, headers: t.auth });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: true, message: 'Webhook not found' });
    setEnabled(true);
    try {
      expect((await trigger(tmp!.webhook_uuid)).json()).toEqual({ error: true, message: 'Webhook not found' });
    } finally {
      setEnabled(false);
    }
  });
});

describe('registration checks (shared with osm run --as-webhook)', () => {
  it('validates targets, params, the key and the workflow like a run', async () => {
    await expect(registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['a.com|id'] })).rejects.toThrow(/forbidden character "\|"/);
    await expect(registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['a.com'], params: { x: '$(id)' } })).rejects.toThrow(/forbidden character/);
    await expect(registerWebhookRuns(t.app, { workflows: ['quick'], targets: [] })).rejects.toThrow(/At least one target/);
    await expect(registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['a.com'], authKey: ' ' })).rejects.toThrow(/--webhook-auth-key/);
    await expect(registerWebhookRuns(t.app, { workflows: ['nope'], targets: ['a.com'] })).rejects.toThrow(/not found/i);
    // A workflow file outside the workflows folder cannot be found by name by the daemon.
    const outside = path.join(os.tmpdir(), `osm-wh-outside-${process.pid}.yaml`);
    fs.writeFileSync(outside, 'kind: module\nname: outside-only\nsteps:\n  - name: a\n    type: bash\n    command: echo a\n');
    try {
      await expect(registerWebhookRuns(t.app, { workflows: [outside], targets: ['a.com'] })).rejects.toThrow(/Install it in the workflows folder/);
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });
});
