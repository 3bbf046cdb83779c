import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { TEST_ENGINE } from '../helpers/pg.js';

let t: TestServer;
beforeAll(async () => {
  t = await makeTestServer();
});
afterAll(async () => {
  await t?.close();
});

const anon = (url: string) => t.server.inject({ method: 'GET', url });

describe('health routes (public)', () => {
  it('answer without credentials', async () => {
    expect((await anon('/health')).json()).toEqual({ status: 'ok' });
    expect((await anon('/health/ready')).json()).toEqual({ status: 'ready', database: 'ok', engine: TEST_ENGINE });
    expect((await anon('/server-info')).json()).toMatchObject({ name: 'osm' });
    const api = await anon('/osm/api/health');
    expect(api.statusCode).toBe(200);
    expect(api.json()).toMatchObject({ status: 'healthy', database: 'connected', database_engine: TEST_ENGINE, database_reachable: true });
    expect(typeof api.json().workflows_loaded).toBe('number');
  });

  it('Swagger UI at /swagger and at the reference path /swagger/index.html; /favicon.ico', async () => {
    for (const url of ['/swagger', '/swagger/', '/swagger/index.html']) {
      const r = await anon(url);
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type']).toMatch(/text\/html/);
      expect(r.body).toContain("url: '/openapi.json'");
    }
    const icon = await anon('/favicon.ico');
    expect([200, 204]).toContain(icon.statusCode);
    if (icon.statusCode === 200) expect(icon.headers['content-type']).toBe('image/png');
  });

  it('while the API proper still needs them', async () => {
    const r = await anon('/osm/api/runs');
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ error: true, message: 'Missing authorization header' });
  });
});
