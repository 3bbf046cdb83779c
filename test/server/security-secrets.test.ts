/**
 * Secrets cannot leak through YAML aliases, public routes, the settings views or step output;
 * malformed YAML is a 400, never a 500.
 */
import fs from 'node:fs';
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

const put = (payload: string) => t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { ...t.auth, 'content-type': 'text/yaml' }, payload });
const redactedFile = async () => (await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth })).body;

describe('PUT /settings/yaml and aliases', () => {
  it('refuses an alias that would copy a redacted secret into a field a public route shows', async () => {
    const before = fs.readFileSync(t.app.manager.path, 'utf8');
    const password = String((t.app.settings().settings.server.simple_user_map_key as Record<string, string>).osmedeus);
    const text = (await redactedFile())
      .replace(/ {4}osmedeus: "\[REDACTED\]"/, '    osmedeus: &k "[REDACTED]"')
      .replace(/license: .*/, 'license: *k');
    expect(text).toContain('license: *k');
    const res = await put(text);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: expect.stringMatching(/^Invalid YAML configuration: aliases of secret values are not allowed \(server\.license: \*k\)/) });
    expect(fs.readFileSync(t.app.manager.path, 'utf8')).toBe(before);
    for (const url of ['/server-info', '/status', '/api/info', '/health', '/osm/api/health']) {
      const body = (await t.server.inject({ method: 'GET', url })).body;
      expect(body, url).not.toContain(password);
    }
  });

  it('refuses aliases of a whole section holding secrets', async () => {
    const base = await redactedFile();
    const jwtAnchored = base.replace(/\n {2}jwt:\n/, '\n  jwt: &j\n');
    expect(jwtAnchored).toContain('jwt: &j');
    const r1 = await put(jwtAnchored.replace(/^scan_tactic:\n(?: {2}.*\n)*/m, 'scan_tactic: *j\n'));
    expect(r1.statusCode).toBe(400);
    expect(r1.json().message).toMatch(/aliases of secret values are not allowed/);
  });

  it('accepts aliases of values that are not secret', async () => {
    const plain = (await redactedFile()).replace(/(\nserver:\n(?:.*\n)*?) {2}port: (\d+)/, '$1  port: &p $2').replace(/max_snapshot_mb: \d+/, 'max_snapshot_mb: *p');
    expect(plain).toContain('max_snapshot_mb: *p');
    const res = await put(plain);
    expect(res.statusCode, res.body).toBe(200);
    expect(t.app.settings().settings.server.max_snapshot_mb).toBe(t.app.settings().settings.server.port);
  });

  it('answers malformed YAML (bad alias, alias bomb) with 400 Invalid YAML configuration, never 500', async () => {
    const bad = await put('server: *nope\n');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: true, message: expect.stringMatching(/^Invalid YAML configuration: .*nope/) });
    const bomb = ['a: &a [1,1,1,1,1,1,1,1,1]'];
    for (const n of ['b', 'c', 'd', 'e', 'f']) bomb.push(`${n}: &${n} [${Array(9).fill(`*${String.fromCharCode(n.charCodeAt(0) - 1)}`).join(',')}]`);
    const res = await put(`${bomb.join('\n')}\n`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Invalid YAML configuration: /);
  });
});

describe('redaction of every secret-bearing field', () => {
  it('hides webhook URLs and all their headers, storage keys, database password, LLM keys and notification tokens', async () => {
    const file = t.app.manager.path;
    const text = fs.readFileSync(file, 'utf8')
      .replace(/^ {2}webhooks: \[\]$/m, '  webhooks:\n    - url: "https://hooks.slack.test/services/T0/B0/hooksecret1"\n      headers: {X-Custom: "hdrsecret2"}')
      .replace(/^ {2}secret_access_key: .*$/m, '  secret_access_key: "s3secret3"')
      .replace(/^ {2}access_key_id: .*$/m, '  access_key_id: "AKIASECRET4"')
      .replace(/^(database:\n(?: {2}.*\n)*?) {2}password: .*$/m, '$1  password: "dbsecret5"')
      .replace(/auth_token: ""/, 'auth_token: "llmsecret6"')
      .replace(/bot_token: .*/, 'bot_token: "123:tgsecret7"');
    fs.writeFileSync(file, text);
    t.app.manager.reload();
    const shown = await redactedFile();
    for (const secret of ['hooksecret1', 'hooks.slack.test', 'hdrsecret2', 's3secret3', 'AKIASECRET4', 'dbsecret5', 'llmsecret6', 'tgsecret7']) {
      expect(text, `fixture has ${secret}`).toContain(secret);
      expect(shown, secret).not.toContain(secret);
    }
  });

  it('masks settings secrets in step output shown by the API', async () => {
    const srv = await makeTestServer({ withQueue: true });
    try {
      const wfDir = srv.app.settings().paths.workflows;
      fs.writeFileSync(path.join(wfDir, 'modules', 'leak.yaml'), `kind: module\nname: leak\nsteps:\n  - name: cat-settings\n    type: bash\n    command: grep auth_api_key "${srv.app.manager.path}"\n`);
      const res = await srv.server.inject({ method: 'POST', url: '/osm/api/runs', headers: srv.auth, payload: { module: 'leak', target: 'example.com' } });
      expect(res.statusCode, res.body).toBe(202);
      const uuid = res.json().run_uuid as string;
      let status = '';
      for (let i = 0; i < 300 && !['completed', 'failed'].includes(status); i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await srv.server.inject({ method: 'GET', url: `/osm/api/runs/${uuid}`, headers: srv.auth })).json().data.status;
      }
      expect(status).toBe('completed');
      const steps = (await srv.server.inject({ method: 'GET', url: `/osm/api/runs/${uuid}/steps`, headers: srv.auth })).body;
      expect(steps).toContain('auth_api_key');
      expect(steps).not.toContain(srv.apiKey);
      const results = (await srv.server.inject({ method: 'GET', url: '/osm/api/step-results', headers: srv.auth })).body;
      expect(results).toContain('auth_api_key');
      expect(results).not.toContain(srv.apiKey);
    } finally {
      await srv.close();
    }
  });
});
