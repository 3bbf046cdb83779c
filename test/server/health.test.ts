import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

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
    expect((await anon('/health/ready')).json()).toEqual({ status: 'ready', database: 'ok' });
    expect((await anon('/server-info')).json()).toMatchObject({ name: 'osm' });
    const api = await anon('/osm/api/health');
    expect(api.statusCode).toBe(200);
    expect(api.json()).toMatchObject({ status: 'healthy', database: 'connected' });
    expect(typeof api.json().workflows_loaded).toBe('number');
  });

  it('while the API proper still needs them', async () => {
    const r = await anon('/osm/api/runs');
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ error: true, message: 'Missing authorization header' });
  });
});
