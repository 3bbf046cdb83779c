import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { sqlRun } from '../helpers/engine-sql.js';
import { importAssetsJsonl } from '../../src/ingest/index.js';
import { recordRunDiff } from '../../src/services/diffs.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
let t: TestServer;
const RUN1 = '2026-02-01T10:00:00.000Z';
const RUN2 = '2026-02-02T10:00:00.000Z';

beforeAll(async () => {
  t = await makeTestServer();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(RUN1));
  await importAssetsJsonl(t.app.repos, 'example.com', fx('httpx-run1.jsonl'));
  vi.setSystemTime(new Date(RUN2));
  await importAssetsJsonl(t.app.repos, 'example.com', fx('httpx-run2.jsonl'));
  await importAssetsJsonl(t.app.repos, 'other.org', fx('httpx-run2.jsonl'));
  vi.useRealTimers();
  // Findings of the same two runs: gone (not seen again), kept (seen again), moved (severity changed), fresh (new).
  const v = (template_id: string, severity: string) => ({ template_id, vuln_info: template_id, asset_value: 'www.example.com', severity });
  await t.app.repos.vulns.upsertMany('example.com', [v('gone', 'low'), v('kept', 'high'), v('moved', 'medium')], RUN1);
  await t.app.repos.vulns.upsertMany('example.com', [v('kept', 'high'), v('moved', 'critical'), v('fresh', 'info')], RUN2);
});
afterAll(async () => {
  vi.useRealTimers();
  await t.close();
});

const get = (url: string, headers: Record<string, string> = t.auth) => t.server.inject({ method: 'GET', url, headers });

describe('GET /osm/api/assets', () => {
  it('lists newest first with the envelope, without raw_json_data', async () => {
    const r = await get('/osm/api/assets?workspace=example.com');
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.pagination).toEqual({ total: 6, offset: 0, limit: 20 });
    expect(body.data).toHaveLength(6);
    expect(body.data[0]).not.toHaveProperty('raw_json_data');
    expect(body.data[0]).toMatchObject({ workspace: 'example.com', asset_value: 'new.example.com', tech: ['Caddy'] });
  });

  it('filters by asset_type, status_code and search, and paginates', async () => {
    expect((await get('/osm/api/assets?status_code=403')).json().pagination.total).toBe(2);
    expect((await get('/osm/api/assets?workspace=example.com&status_code=302')).json().data[0].asset_value).toBe('admin.example.com');
    expect((await get('/osm/api/assets?asset_type=http')).json().pagination.total).toBe(11);
    expect((await get('/osm/api/assets?asset_type=ip')).json().pagination.total).toBe(0);
    expect((await get('/osm/api/assets?search=brand')).json().pagination.total).toBe(2);
    const p = (await get('/osm/api/assets?offset=10&limit=5')).json();
    expect(p.pagination).toEqual({ total: 11, offset: 10, limit: 5 });
    expect(p.data).toHaveLength(1);
  });

  it('caps limit at 10000 and rejects junk pagination', async () => {
    expect((await get('/osm/api/assets?limit=50000')).json().pagination.limit).toBe(10000);
    const bad = await get('/osm/api/assets?limit=abc&offset=-1');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: true, message: expect.stringMatching(/offset: .*; limit: /) });
    expect((await get('/osm/api/assets?status_code=x')).statusCode).toBe(400);
  });

  it('requires authentication', async () => {
    for (const url of ['/osm/api/assets', '/osm/api/assets/1', '/osm/api/assets/diff', '/osm/api/assets/diffs']) {
      const r = await get(url, {});
      expect(r.statusCode).toBe(401);
      expect(r.json().error).toBe(true);
    }
  });
});

describe('GET /osm/api/assets/:id', () => {
  it('returns one asset with its raw JSON', async () => {
    const id = (await get('/osm/api/assets?search=www.example.com&workspace=example.com')).json().data[0].id;
    const r = await get(`/osm/api/assets/${id}`);
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ id, asset_value: 'www.example.com', status_code: 200 });
    expect(JSON.parse(r.json().data.raw_json_data).input).toBe('www.example.com');
  });

  it('answers 404 Asset not found and 400 Invalid asset ID', async () => {
    expect((await get('/osm/api/assets/999999')).json()).toEqual({ error: true, message: 'Asset not found' });
    expect((await get('/osm/api/assets/999999')).statusCode).toBe(404);
    const bad = await get('/osm/api/assets/abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: true, message: 'Invalid asset ID' });
  });
});

describe('GET /osm/api/assets/diff', () => {
  it('computes the diff between two runs with field-level changes', async () => {
    const r = await get('/osm/api/assets/diff?workspace=example.com&from=2026-02-01T12:00:00Z&to=2026-02-03');
    expect(r.statusCode).toBe(200);
    const d = r.json().data;
    expect(d).toMatchObject({ workspace_name: 'example.com', from_time: '2026-02-01T12:00:00.000Z', to_time: '2026-02-03T00:00:00.000Z' });
    expect(d.added.map((a: { asset_value: string }) => a.asset_value)).toEqual(['new.example.com']);
    expect(d.removed.map((a: { asset_value: string }) => a.asset_value)).toEqual(['old.example.com']);
    expect(d.changed[0].changes).toContainEqual({ field: 'status_code', old_value: 401, new_value: 200 });
    expect(d.summary).toEqual({ total_added: 1, total_removed: 1, total_changed: 1 });
  });

  it('accepts every documented time format and defaults to to=now', async () => {
    for (const from of ['2026-02-01T12:00:00Z', '2026-02-01T19:00:00+07:00', String(Date.parse('2026-02-01T12:00:00Z') / 1000), '2026-02-01 12:00:00', '2026-02-01T12:00:00']) {
      const r = await get(`/osm/api/assets/diff?workspace=example.com&from=${encodeURIComponent(from)}`);
      expect(r.statusCode, from).toBe(200);
      expect(r.json().data.from_time, from).toBe('2026-02-01T12:00:00.000Z');
      expect(r.json().data.summary.total_added).toBe(1);
    }
    const dateOnly = (await get('/osm/api/assets/diff?workspace=example.com&from=2026-02-02')).json().data;
    expect(dateOnly.from_time).toBe('2026-02-02T00:00:00.000Z');
    expect(Date.parse(dateOnly.to_time)).toBeGreaterThan(Date.parse('2026-02-03T00:00:00Z'));
  });

  it('answers the documented 400s', async () => {
    const msg = async (q: string) => {
      const r = await get(`/osm/api/assets/diff${q}`);
      expect(r.statusCode).toBe(400);
      return r.json().message;
    };
    expect(await msg('?from=2026-01-01')).toBe('workspace parameter is required');
    expect(await msg('?workspace=example.com')).toBe('from parameter is required');
    expect(await msg('?workspace=example.com&from=yesterday')).toBe('invalid from time format: use RFC3339, Unix timestamp, YYYY-MM-DD or "YYYY-MM-DD HH:MM:SS"');
    expect(await msg('?workspace=example.com&from=2026-02-30')).toMatch(/^invalid from time format/);
    expect(await msg('?workspace=example.com&from=2026-01-01&to=soon')).toBe('invalid to time format: use RFC3339, Unix timestamp, YYYY-MM-DD or "YYYY-MM-DD HH:MM:SS"');
  });
});

describe('GET /osm/api/assets/diffs and /osm/api/vulnerabilities/diffs', () => {
  it('lists stored diffs (written by recordRunDiff), filtered by workspace, newest first', async () => {
    expect((await get('/osm/api/assets/diffs')).json()).toEqual({ data: [], pagination: { total: 0, offset: 0, limit: 20 } });
    expect((await get('/osm/api/vulnerabilities/diffs')).json()).toEqual({ data: [], pagination: { total: 0, offset: 0, limit: 20 } });
    const run = await t.app.repos.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'example.com', workspace: 'example.com', status: 'running' });
    await sqlRun(t, 'UPDATE runs SET started_at = ? WHERE id = ?', '2026-02-01T12:00:00.000Z', run.id);
    await t.app.repos.runs.transition(run.id, 'completed');
    const { assets: stored, vulns } = (await recordRunDiff(t.app, run.id))!;
    expect(stored).toMatchObject({ workspace_name: 'example.com', run_id: run.id, total_added: 1, total_removed: 1, total_changed: 1 });
    expect(JSON.parse(stored.diff_data).changed[0].asset_value).toBe('api.example.com');
    const list = (await get('/osm/api/assets/diffs?workspace=example.com')).json();
    expect(list.pagination.total).toBe(1);
    expect(list.data[0]).toMatchObject({ id: stored.id, from_time: '2026-02-01T12:00:00.000Z', total_added: 1 });
    expect((await get('/osm/api/assets/diffs?workspace=other.org')).json().pagination.total).toBe(0);

    // The vulnerability snapshot: same window, same run, the computed diff's counts and lists.
    expect(vulns).toMatchObject({ workspace_name: 'example.com', run_id: run.id, from_time: stored.from_time, to_time: stored.to_time, total_added: 1, total_removed: 1, total_changed: 1 });
    const data = JSON.parse(vulns.diff_data);
    expect(data.added.map((x: { template_id: string }) => x.template_id)).toEqual(['fresh']);
    expect(data.removed.map((x: { template_id: string }) => x.template_id)).toEqual(['gone']);
    expect(data.changed).toEqual([{ vuln_id: expect.any(Number), vuln_info: 'moved', asset_value: 'www.example.com', changes: [{ field: 'severity', old_value: 'medium', new_value: 'critical' }] }]);
    expect(data).not.toHaveProperty('truncated');
    const computed = (await get(`/osm/api/vulnerabilities/diff?workspace=example.com&from=${stored.from_time}&to=${encodeURIComponent(stored.to_time)}`)).json().data;
    expect({ added: data.added, removed: data.removed, changed: data.changed }).toEqual({ added: computed.added, removed: computed.removed, changed: computed.changed });
    const vlist = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com')).json();
    expect(vlist).toEqual({ data: [vulns], pagination: { total: 1, offset: 0, limit: 20 } });
    expect((await get('/osm/api/vulnerabilities/diffs?workspace=other.org')).json().pagination.total).toBe(0);

    // A second run: one more row in each table, newest first, paged.
    const again = await t.app.repos.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'example.com', workspace: 'example.com', status: 'running' });
    await t.app.repos.runs.transition(again.id, 'completed');
    const second = (await recordRunDiff(t.app, again.id))!;
    expect(second.vulns).toMatchObject({ run_id: again.id, total_added: 0, total_changed: 0 });
    const page1 = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com&limit=1')).json();
    expect(page1).toMatchObject({ data: [{ id: second.vulns.id, run_id: again.id }], pagination: { total: 2, offset: 0, limit: 1 } });
    const page2 = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com&limit=1&offset=1')).json();
    expect(page2).toMatchObject({ data: [{ id: vulns.id, run_id: run.id }], pagination: { total: 2, offset: 1, limit: 1 } });
    expect((await get('/osm/api/assets/diffs')).json().pagination.total).toBe(2);

    // Runs without a workspace or that never started store nothing; unknown runs are an error.
    const unstarted = await t.app.repos.runs.create({ workflow_name: 'recon', workflow_kind: 'flow', target: 'example.com', workspace: 'example.com' });
    expect(await recordRunDiff(t.app, unstarted.id)).toBeUndefined();
    expect((await get('/osm/api/vulnerabilities/diffs')).json().pagination.total).toBe(2);
    await expect(recordRunDiff(t.app, 987654)).rejects.toThrow('Run not found');
  });
});
