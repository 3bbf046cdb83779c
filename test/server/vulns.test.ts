import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { importVulnsJsonl } from '../../src/ingest/index.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
let t: TestServer;

beforeAll(async () => {
  t = await makeTestServer();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-02-01T10:00:00.000Z'));
  await importVulnsJsonl(t.app.repos, 'example.com', fx('nuclei.jsonl'));
  vi.useRealTimers();
});
afterAll(async () => {
  vi.useRealTimers();
  await t.close();
});

const inject = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = t.auth) =>
  t.server.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const get = (url: string) => inject('GET', url);

describe('GET /osm/api/vulnerabilities', () => {
  it('lists with the envelope and filters by one severity or a comma list', async () => {
    const all = (await get('/osm/api/vulnerabilities?workspace=example.com')).json();
    expect(all.pagination).toEqual({ total: 6, offset: 0, limit: 20 });
    expect((await get('/osm/api/vulnerabilities?severity=critical')).json().data.map((v: { vuln_info: string }) => v.vuln_info)).toEqual(['CVE-2021-41773']);
    expect((await get('/osm/api/vulnerabilities?severity=critical,high')).json().pagination.total).toBe(2);
    expect((await get('/osm/api/vulnerabilities?severity=INFO')).json().pagination.total).toBe(2);
    expect((await get('/osm/api/vulnerabilities?asset_value=api.example')).json().pagination.total).toBe(2);
    expect((await get('/osm/api/vulnerabilities?offset=5&limit=2')).json()).toMatchObject({ pagination: { total: 6, offset: 5, limit: 2 }, data: [{}] });
  });

  it('applies confidence to the rows and to the total', async () => {
    const created = (await inject('POST', '/osm/api/vulnerabilities', { workspace: 'conf.io', vuln_info: 'x', confidence: 'Tentative' })).json().data;
    await inject('POST', '/osm/api/vulnerabilities', { workspace: 'conf.io', vuln_info: 'y' });
    const r = (await get('/osm/api/vulnerabilities?workspace=conf.io&confidence=Tentative')).json();
    expect(r.pagination.total).toBe(1);
    expect(r.data.map((v: { id: number }) => v.id)).toEqual([created.id]);
  });

  it('rejects an unknown severity and junk pagination', async () => {
    const r = await get('/osm/api/vulnerabilities?severity=high,urgent');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: true, message: 'Invalid severity: urgent (use critical, high, medium, low or info)' });
    expect((await get('/osm/api/vulnerabilities?limit=0')).statusCode).toBe(400);
    expect((await get('/osm/api/vulnerabilities?limit=20000')).json().pagination.limit).toBe(10000);
  });

  it('requires authentication on every route', async () => {
    const routes: [('GET' | 'POST' | 'DELETE'), string][] = [
      ['GET', '/osm/api/vulnerabilities'], ['GET', '/osm/api/vulnerabilities/summary'], ['GET', '/osm/api/vulnerabilities/diff'],
      ['GET', '/osm/api/vulnerabilities/1'], ['POST', '/osm/api/vulnerabilities'], ['DELETE', '/osm/api/vulnerabilities/1'], ['POST', '/osm/api/vulnerabilities/import'],
    ];
    for (const [method, url] of routes) expect((await inject(method, url, method === 'POST' ? {} : undefined, {})).statusCode, url).toBe(401);
  });
});

describe('GET /osm/api/vulnerabilities/summary', () => {
  it('counts by severity with all five keys, per workspace or overall', async () => {
    expect((await get('/osm/api/vulnerabilities/summary?workspace=example.com')).json()).toEqual({
      data: { by_severity: { critical: 1, high: 1, medium: 1, low: 1, info: 2 }, total: 6, workspace: 'example.com' },
    });
    expect((await get('/osm/api/vulnerabilities/summary?workspace=nothing.here')).json()).toEqual({
      data: { by_severity: { critical: 0, high: 0, medium: 0, low: 0, info: 0 }, total: 0, workspace: 'nothing.here' },
    });
    const overall = (await get('/osm/api/vulnerabilities/summary')).json().data;
    expect(overall.workspace).toBe('');
    expect(overall.total).toBe(Object.values(overall.by_severity as Record<string, number>).reduce((a, b) => a + b, 0));
  });
});

describe('GET and DELETE /osm/api/vulnerabilities/:id', () => {
  it('gets one, deletes it, then answers 404', async () => {
    const id = (await get('/osm/api/vulnerabilities?severity=medium')).json().data[0].id;
    expect((await get(`/osm/api/vulnerabilities/${id}`)).json().data).toMatchObject({ id, vuln_info: 'exposed-admin', tags: ['panel', 'exposure'] });
    const del = await inject('DELETE', `/osm/api/vulnerabilities/${id}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ message: 'Vulnerability deleted successfully' });
    for (const method of ['GET', 'DELETE'] as const) {
      const r = await inject(method, `/osm/api/vulnerabilities/${id}`);
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ error: true, message: 'Vulnerability not found' });
    }
    // Re-import brings it back (deleted rows are not remembered).
    await importVulnsJsonl(t.app.repos, 'example.com', fx('nuclei.jsonl'));
  });

  it('answers 400 Invalid vulnerability ID for a non-integer id', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const r = await inject(method, '/osm/api/vulnerabilities/1.5');
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: true, message: 'Invalid vulnerability ID' });
    }
  });
});

describe('POST /osm/api/vulnerabilities', () => {
  it('creates a record: 201, Certain by default, raw_vuln_json object serialised', async () => {
    const r = await inject('POST', '/osm/api/vulnerabilities', {
      workspace: 'acme.io', vuln_info: 'CVE-2024-0001', vuln_title: 'Thing', severity: 'High', asset_value: 'https://acme.io', tags: ['a', 'b'], raw_vuln_json: { k: 1 },
    });
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({
      message: 'Vulnerability created successfully',
      data: { workspace: 'acme.io', vuln_info: 'CVE-2024-0001', severity: 'high', confidence: 'Certain', tags: ['a', 'b'], raw_vuln_json: '{"k":1}' },
    });
    // Plain insert: the same body twice gives two rows.
    await inject('POST', '/osm/api/vulnerabilities', { workspace: 'acme.io', vuln_info: 'CVE-2024-0001' });
    expect((await get('/osm/api/vulnerabilities?workspace=acme.io')).json().pagination.total).toBe(2);
  });

  it('answers 400 Workspace is required (missing, empty, not a string) and lists every other issue', async () => {
    for (const body of [{}, { workspace: '' }, { workspace: '  ' }, { workspace: 3, severity: 'bad' }]) {
      const r = await inject('POST', '/osm/api/vulnerabilities', body);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: true, message: 'Workspace is required' });
    }
    const bad = await inject('POST', '/osm/api/vulnerabilities', { workspace: 'w', severity: 'urgent', tags: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('Invalid request body: severity: must be one of critical, high, medium, low, info; tags: Invalid input: expected array, received string');
    const notJson = await t.server.inject({ method: 'POST', url: '/osm/api/vulnerabilities', headers: { ...t.auth, 'content-type': 'application/json' }, payload: '{bad' });
    expect(notJson.json()).toEqual({ error: true, message: 'Invalid request body' });
  });
});

describe('GET /osm/api/vulnerabilities/diff', () => {
  it('lists added findings with the spec fields', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-02-02T10:00:00.000Z'));
    await t.app.repos.vulns.upsertMany('example.com', [{ template_id: 'fresh', vuln_info: 'fresh', asset_value: 'new.example.com', severity: 'low' }]);
    vi.useRealTimers();
    const d = (await get('/osm/api/vulnerabilities/diff?workspace=example.com&from=2026-02-02&to=2026-02-02T23:59:59Z')).json().data;
    expect(d.added).toEqual([{ id: expect.any(Number), vuln_info: 'fresh', asset_value: 'new.example.com', severity: 'low', template_id: 'fresh', created_at: '2026-02-02T10:00:00.000Z' }]);
    expect(d.summary.total_added).toBe(1);
    expect((await get('/osm/api/vulnerabilities/diff?workspace=example.com')).json().message).toBe('from parameter is required');
    expect((await get('/osm/api/vulnerabilities/diff?from=2026-01-01')).json().message).toBe('workspace parameter is required');
    expect((await get('/osm/api/vulnerabilities/diff?workspace=x&from=2026-01-01&to=nope')).statusCode).toBe(400);
  });
});

describe('POST /osm/api/vulnerabilities/import', () => {
  const nuclei = fs.readFileSync(fx('nuclei.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  it('imports nuclei and osm-shaped records, dedupes, and lists bad records by index', async () => {
    const body = { workspace: 'imp.io', data: [...nuclei, { vuln_info: 'manual-1', severity: 'critical', asset_value: 'imp.io' }, 'nope', { severity: 'bad' }] };
    const r = await inject('POST', '/osm/api/vulnerabilities/import', body);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      message: 'Imported 7 new and 0 updated vulnerabilities',
      imported: 7, updated: 0, skipped: 0,
      errors: [
        { index: 7, message: 'not a JSON object' },
        { index: 8, message: 'severity: must be one of critical, high, medium, low, info; vuln_info: required (or template_id)' },
      ],
    });
    const again = (await inject('POST', '/osm/api/vulnerabilities/import', { workspace: 'imp.io', data: nuclei })).json();
    expect(again).toMatchObject({ imported: 0, updated: 0, skipped: 6, errors: [] });
    const changed = (await inject('POST', '/osm/api/vulnerabilities/import', { workspace: 'imp.io', data: [{ vuln_info: 'manual-1', asset_value: 'imp.io', severity: 'low' }] })).json();
    expect(changed).toMatchObject({ imported: 0, updated: 1 });
    expect((await get('/osm/api/vulnerabilities/summary?workspace=imp.io')).json().data).toMatchObject({ total: 7, by_severity: { critical: 1, low: 2 } });
  });

  it('validates workspace and data', async () => {
    const r1 = await inject('POST', '/osm/api/vulnerabilities/import', { data: [] });
    expect(r1.statusCode).toBe(400);
    expect(r1.json().message).toBe('Workspace is required');
    const r2 = await inject('POST', '/osm/api/vulnerabilities/import', { workspace: 'x', data: { a: 1 } });
    expect(r2.json()).toEqual({ error: true, message: 'data: expected an array of records' });
    const r3 = await inject('POST', '/osm/api/vulnerabilities/import', { workspace: 'x', data: Array.from({ length: 10_001 }, () => 0) });
    expect(r3.statusCode).toBe(400);
    expect(r3.json().message).toBe('data: at most 10000 records per request');
  });

  it('answers 413 for a body over the server limit', async () => {
    const big = { workspace: 'x', data: [{ vuln_info: 'a', vuln_desc: 'x'.repeat(5 * 1024 * 1024) }] };
    const r = await inject('POST', '/osm/api/vulnerabilities/import', big);
    expect(r.statusCode).toBe(413);
    expect(r.json().error).toBe(true);
  });
});
