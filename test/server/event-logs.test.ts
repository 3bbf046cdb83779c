import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let run: { id: number; run_uuid: string };

const KEYS = ['created_at', 'data', 'data_type', 'error', 'event_id', 'id', 'name', 'processed', 'processed_at', 'run_id', 'source', 'topic', 'workflow_name', 'workspace'];

beforeAll(async () => {
  t = await makeTestServer();
  const s = t.app.repos;
  run = await s.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'a.com' });
  const ev = async (e: Parameters<typeof s.events.insert>[0]) => s.events.insert(e);
  await ev({ topic: 'run.started', name: 'run.started', source: 'api', data_type: 'scan', data: { scan_id: run.run_uuid, target: 'a.com', params: { api_key: 'k3y-value-1234', threads: '5' } }, workspace: 'a.com', run_id: run.run_uuid, workflow_name: 'quick', processed: true });
  await ev({ topic: 'step.completed', name: 'hello', source: 'executor', data_type: 'step', data: { step_name: 'hello', duration_ms: 3 }, workspace: 'a.com', run_id: run.run_uuid, workflow_name: 'quick', processed: true });
  await ev({ topic: 'run.completed', name: 'run.completed', source: 'executor', data_type: 'scan', data: { scan_id: run.run_uuid }, workspace: 'a.com', run_id: run.run_uuid, workflow_name: 'quick', processed: true });
  await ev({ topic: 'schedule.triggered', name: 'nightly', source: 'scheduler', data_type: 'schedule', data: 'raw text', workspace: 'b.com', workflow_name: 'other', processed: false, error: 'server not configured' });
});

afterAll(async () => {
  await t?.close();
});

const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });
const topics = (body: { data: { topic: string }[] }) => body.data.map((d) => d.topic);

describe('GET /osm/api/event-logs', () => {
  it('requires authentication', async () => {
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/event-logs' })).statusCode).toBe(401);
  });

  it('lists newest first with exactly the spec fields (data as JSON text, processed bool)', async () => {
    const res = await get('/osm/api/event-logs');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toEqual({ total: 4, offset: 0, limit: 20 });
    expect(topics(body)).toEqual(['schedule.triggered', 'run.completed', 'step.completed', 'run.started']);
    expect(Object.keys(body.data[0]).sort()).toEqual(KEYS);
    expect(body.data[0]).toMatchObject({ processed: false, processed_at: null, error: 'server not configured', data: 'raw text', source: 'scheduler' });
    const started = body.data[3];
    expect(started.processed).toBe(true);
    expect(typeof started.data).toBe('string');
    expect(started.event_id).toMatch(/^[0-9a-f-]{36}$/);
    // Secret-looking keys in the payload are redacted; the rest is kept.
    expect(JSON.parse(started.data)).toEqual({ scan_id: run.run_uuid, target: 'a.com', params: { api_key: '[REDACTED]', threads: '5' } });
  });

  it('filters by topic, name, source, workspace, run_id (uuid or numeric id), workflow_name, processed', async () => {
    expect(topics((await get('/osm/api/event-logs?topic=run.started')).json())).toEqual(['run.started']);
    expect(topics((await get('/osm/api/event-logs?name=hello')).json())).toEqual(['step.completed']);
    expect(topics((await get('/osm/api/event-logs?source=executor')).json())).toEqual(['run.completed', 'step.completed']);
    expect(topics((await get('/osm/api/event-logs?workspace=b.com')).json())).toEqual(['schedule.triggered']);
    expect((await get(`/osm/api/event-logs?run_id=${run.run_uuid}`)).json().pagination.total).toBe(3);
    expect((await get(`/osm/api/event-logs?run_id=${run.id}`)).json().pagination.total).toBe(3);
    expect(topics((await get('/osm/api/event-logs?workflow_name=other')).json())).toEqual(['schedule.triggered']);
    expect((await get('/osm/api/event-logs?processed=true')).json().pagination.total).toBe(3);
    expect(topics((await get('/osm/api/event-logs?processed=false')).json())).toEqual(['schedule.triggered']);
  });

  it('paginates with bounds and rejects junk', async () => {
    const page = (await get('/osm/api/event-logs?offset=2&limit=1')).json();
    expect(topics(page)).toEqual(['step.completed']);
    expect(page.pagination).toEqual({ total: 4, offset: 2, limit: 1 });
    expect((await get('/osm/api/event-logs?limit=50000')).json().pagination.limit).toBe(10000);
    for (const qs of ['processed=maybe', 'limit=-1', 'offset=x']) {
      const res = await get(`/osm/api/event-logs?${qs}`);
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().error).toBe(true);
    }
  });
});

describe('GET /osm/api/events', () => {
  it('filters by topic, run_id and a created_at window, in the list envelope', async () => {
    const all = (await get('/osm/api/events')).json();
    expect(all.pagination).toEqual({ total: 4, offset: 0, limit: 20 });
    expect(topics((await get('/osm/api/events?topic=run.completed')).json())).toEqual(['run.completed']);
    expect((await get(`/osm/api/events?run_id=${run.run_uuid}`)).json().pagination.total).toBe(3);
    expect((await get('/osm/api/events?from=2000-01-01&to=2000-01-02')).json().pagination.total).toBe(0);
    expect((await get('/osm/api/events?from=2000-01-01&limit=2')).json()).toMatchObject({ pagination: { total: 4, offset: 0, limit: 2 } });
    const bad = await get('/osm/api/events?from=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: true, message: 'invalid from time format: use RFC3339, Unix timestamp, YYYY-MM-DD or "YYYY-MM-DD HH:MM:SS"' });
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/events' })).statusCode).toBe(401);
  });
});
