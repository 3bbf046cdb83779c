import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
beforeEach(async () => {
  t = await makeTestServer();
});
afterEach(async () => {
  await t.close();
});

const yamlHeaders = () => ({ ...t.auth, 'content-type': 'text/yaml' });

async function login(): Promise<string> {
  const users = t.app.settings().settings.server.simple_user_map_key as Record<string, string>;
  const [username, password] = Object.entries(users)[0]!;
  const res = await t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username, password } });
  expect(res.statusCode).toBe(200);
  return res.json().token as string;
}

function claims(token: string): { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

describe('auth', () => {
  it('every settings route needs credentials', async () => {
    for (const [method, url] of [['GET', '/osm/api/settings/yaml'], ['GET', '/osm/api/settings/yaml/'], ['PUT', '/osm/api/settings/yaml'], ['POST', '/osm/api/settings/reload'], ['GET', '/osm/api/settings/status']] as const) {
      const res = await t.server.inject({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json()).toEqual({ error: true, message: 'Missing authorization header' });
    }
  });
});

describe('GET /settings/yaml', () => {
  it('returns the file as text/yaml with secrets redacted', async () => {
    for (const url of ['/osm/api/settings/yaml', '/osm/api/settings/yaml/']) {
      const res = await t.server.inject({ method: 'GET', url, headers: t.auth });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/yaml/);
      expect(res.body).toMatch(/auth_api_key: "\[REDACTED\]"/);
      expect(res.body).not.toContain(t.apiKey);
      const jwtSecret = String(t.app.settings().settings.server.jwt.secret_signing_key);
      expect(res.body).not.toContain(jwtSecret);
      expect(res.body).toContain('port: 8002');
    }
  });
});

describe('PUT /settings/yaml', () => {
  it('validates database.* (engine, ssl_mode, url) and shows database.url with only its password masked', async () => {
    const get = async () => (await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth })).body;
    const put = (payload: string) => t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: yamlHeaders(), payload });
    const redacted = await get();
    expect(redacted).toMatch(/db_engine: sqlite/);
    for (const bad of [redacted.replace(/db_engine: sqlite/, 'db_engine: oracle'), redacted.replace(/ssl_mode: "disable"/, 'ssl_mode: "sometimes"'), redacted.replace(/url: ""/, 'url: "mysql://db/osm"')]) {
      expect(bad).not.toBe(redacted);
      const r = await put(bad);
      expect(r.statusCode).toBe(400);
      expect(r.json().message).toMatch(/^Invalid YAML configuration: database\./);
    }
    const ok = await put(redacted.replace(/url: ""/, 'url: "postgres://osm:s3cretPassw0rd@db.internal:5432/osm"'));
    expect(ok.statusCode, ok.body).toBe(200);
    const shown = await get();
    expect(shown).toContain('postgres://osm:[REDACTED]@db.internal:5432/osm');
    expect(shown).not.toContain('s3cretPassw0rd');
    // Sent back as shown, the real URL is kept.
    expect((await put(shown)).statusCode).toBe(200);
    expect(fs.readFileSync(t.app.manager.path, 'utf8')).toContain('postgres://osm:s3cretPassw0rd@db.internal:5432/osm');
  });

  it('refuses unknown keys and a file that would lock every client out, leaving the file untouched', async () => {
    const before = fs.readFileSync(t.app.manager.path, 'utf8');
    const put = (payload: string) => t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: yamlHeaders(), payload });
    const lockout = await put('server:\n  port: 8500\n');
    expect(lockout.statusCode).toBe(400);
    expect(lockout.json().message).toMatch(/^Invalid YAML configuration: server: no credentials would be left/);
    const redacted = (await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth })).body;
    const typo = await put(`${redacted}\nbogus_section: 1\n`);
    expect(typo.statusCode).toBe(400);
    expect(typo.json()).toEqual({ error: true, message: 'Invalid YAML configuration: unknown key: bogus_section' });
    expect(fs.readFileSync(t.app.manager.path, 'utf8')).toBe(before);
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: t.auth })).statusCode).toBe(200);
  });

  it('applies a new API key at once: the old key gets 401, the new one 200; redacted secrets are kept', async () => {
    const token = await login();
    const jwtSecret = String(t.app.settings().settings.server.jwt.secret_signing_key);
    const before = fs.readFileSync(t.app.manager.path, 'utf8');
    const redacted = (await t.server.inject({ method: 'GET', url: '/osm/api/settings/yaml', headers: t.auth })).body;
    const newKey = 'n3wKey0123456789abcdefABCDEF0123';
    const edited = redacted.replace(/auth_api_key: "\[REDACTED\]"/, `auth_api_key: "${newKey}"`);
    expect(edited).not.toBe(redacted);

    const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: yamlHeaders(), payload: edited });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ message: 'Configuration updated successfully', path: t.app.manager.path, backup: `${t.app.manager.path}.backup` });
    expect(fs.readFileSync(body.backup, 'utf8')).toBe(before);

    const written = fs.readFileSync(t.app.manager.path, 'utf8');
    expect(written).not.toContain('[REDACTED]');
    expect(written).toContain(newKey);
    expect(written).toContain(jwtSecret);
    expect(t.app.settings().settings.server.jwt.secret_signing_key).toBe(jwtSecret);

    const old = await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: { 'x-osm-api-key': t.apiKey } });
    expect(old.statusCode).toBe(401);
    const fresh = await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: { 'x-osm-api-key': newKey } });
    expect(fresh.statusCode).toBe(200);
    // The JWT secret was merged back, so a token issued before the change still works.
    const viaToken = await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: { authorization: `Bearer ${token}` } });
    expect(viaToken.statusCode).toBe(200);
  });

  it('jwt.expiration_minutes applies to new tokens', async () => {
    const first = claims(await login());
    expect(first.exp - first.iat).toBe(1440 * 60);
    const text = fs.readFileSync(t.app.manager.path, 'utf8').replace(/expiration_minutes: \d+/, 'expiration_minutes: 5');
    const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { ...t.auth, 'content-type': 'application/yaml' }, payload: text });
    expect(res.statusCode).toBe(200);
    const second = claims(await login());
    expect(second.exp - second.iat).toBe(5 * 60);
  });

  it('refuses a [REDACTED] value that has no current secret to keep', async () => {
    const before = fs.readFileSync(t.app.manager.path, 'utf8');
    const doc = parseDocument(before);
    doc.setIn(['global_vars', 'NEW_TOKEN'], { value: '[REDACTED]', as_env: true });
    const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: yamlHeaders(), payload: doc.toString() });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Invalid YAML configuration: global_vars\.NEW_TOKEN\.value: "\[REDACTED\]" can only keep an existing secret/);
    expect(fs.readFileSync(t.app.manager.path, 'utf8')).toBe(before);
  });

  it('rejects invalid YAML and schema errors with 400, leaving the file untouched', async () => {
    const before = fs.readFileSync(t.app.manager.path, 'utf8');
    for (const payload of ['server: [unclosed', 'server:\n  port: not-a-port\n', '   ']) {
      const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: { ...t.auth, 'content-type': 'text/plain' }, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error).toBe(true);
      expect(res.json().message).toMatch(/^Invalid YAML configuration: /);
    }
    expect(fs.readFileSync(t.app.manager.path, 'utf8')).toBe(before);
    expect(fs.existsSync(`${t.app.manager.path}.backup`)).toBe(false);
  });

  it('answers 415 for a body that is not YAML text', async () => {
    const res = await t.server.inject({ method: 'PUT', url: '/osm/api/settings/yaml', headers: t.auth, payload: { server: { port: 1 } } });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ error: true, message: 'Unsupported content type: application/json' });
  });
});

describe('POST /settings/reload and GET /settings/status', () => {
  it('reloads the file, reports the version, and keeps the old config when the file is bad', async () => {
    const status0 = (await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: t.auth })).json();
    expect(status0).toMatchObject({ path: t.app.manager.path, is_watching: false, error: '', version: expect.any(Number) });
    expect(Date.parse(status0.last_reload)).not.toBeNaN();

    const newKey = 'reloadKey0123456789abcdefABCDEF0';
    const text = fs.readFileSync(t.app.manager.path, 'utf8').replace(/auth_api_key: .*/, `auth_api_key: "${newKey}"`);
    fs.writeFileSync(t.app.manager.path, text);
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/settings/reload', headers: t.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Configuration reloaded successfully', path: t.app.manager.path, version: status0.version + 1 });
    const auth = { 'x-osm-api-key': newKey };
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: t.auth })).statusCode).toBe(401);

    fs.writeFileSync(t.app.manager.path, 'server:\n  port: [broken');
    const bad = await t.server.inject({ method: 'POST', url: '/osm/api/settings/reload', headers: auth });
    expect(bad.statusCode).toBe(500);
    expect(bad.json().message).toMatch(/^Failed to reload configuration: /);
    const status = (await t.server.inject({ method: 'GET', url: '/osm/api/settings/status', headers: auth })).json();
    expect(status.version).toBe(status0.version + 1);
    expect(status.error).not.toBe('');
  });
});
