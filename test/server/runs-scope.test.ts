/** POST /runs with a `scope` (docs/scope.md): validated, enforced on targets, counts in GET /runs/:id. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await makeTestServer({ withQueue: true });
});
afterAll(async () => {
  await t.close();
});

const post = (payload: Record<string, unknown>) => t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload });

async function finished(id: string): Promise<Record<string, any>> {
  for (;;) {
    const r = (await t.server.inject({ method: 'GET', url: `/osm/api/runs/${id}`, headers: t.auth })).json().data;
    if (['completed', 'failed', 'cancelled'].includes(r.status)) return r;
    await new Promise((res) => setTimeout(res, 200));
  }
}

describe('POST /osm/api/runs with scope', () => {
  it('an invalid scope is a 400 naming every bad entry', async () => {
    const r = await post({ module: 'sample-foreach', target: 'example.com', scope: { include: ['ok.example.com', 'bad*.example.com'], exclude: ['10.0.0.0/99'] } });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe(true);
    expect(r.json().message).toMatch(/wildcards are only allowed/);
    expect(r.json().message).toMatch(/invalid CIDR/);
    const wrongType = await post({ module: 'sample-foreach', target: 'example.com', scope: 42 });
    expect(wrongType.statusCode).toBe(400);
    const unknownKey = await post({ module: 'sample-foreach', target: 'example.com', scope: { includes: ['x.com'] } });
    expect(unknownKey.statusCode).toBe(400);
  });

  it('a request with an out-of-scope target is refused as a whole (400), nothing is queued', async () => {
    const before = (await t.app.repos.runs.list({}, { offset: 0, limit: 1000 })).total;
    const r = await post({ module: 'sample-foreach', targets: ['www.example.com', 'evil.org'], scope: 'example.com\n.example.com\n!admin.example.com\n' });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: true, message: expect.stringContaining('evil.org: out of scope: matched by no include entry in the run scope') });
    expect((await t.app.repos.runs.list({}, { offset: 0, limit: 1000 })).total).toBe(before);
  });

  it('in-scope runs execute with the scope: loop items out of it are dropped and counted in the run detail', async () => {
    const r = await post({ module: 'sample-foreach', target: 'example.com', scope: { include: ['example.com', 'www.example.com'], exclude: [] } });
    expect(r.statusCode, r.body).toBe(202);
    const run = await finished(r.json().run_uuid);
    expect(run.status, run.error_message).toBe('completed');
    expect(run.scope).toEqual({
      dropped: 1,
      by_source: { foreach: 1 },
      samples: [{ source: 'foreach', value: 'api.example.com' }],
      layers: [{ name: 'run', include: ['example.com', 'www.example.com'], exclude: [] }],
    });
    // A run without a scope has no scope field (additive).
    const plain = await post({ module: 'sample-foreach', target: 'plain.example.com' });
    const done = await finished(plain.json().run_uuid);
    expect(done.scope).toBeUndefined();
  });
});
