import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { startScheduler, type Scheduler } from '../../src/scheduler/index.js';
import { createSchedule } from '../../src/services/schedules.js';

let t: TestServer;
let scheduler: Scheduler | undefined;
beforeEach(async () => {
  t = await makeTestServer();
  scheduler = undefined;
});
afterEach(async () => {
  await scheduler?.stop();
  await t.close();
});

const emit = (payload: unknown) => t.server.inject({ method: 'POST', url: '/osm/api/events/emit', headers: t.auth, payload: payload as object });
const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });
const eventRow = async (eventId: string) => (await t.app.repos.events.list({}, { offset: 0, limit: 100 })).data.find((e) => e.event_id === eventId)!;

describe('auth', () => {
  it('needs credentials', async () => {
    expect((await t.server.inject({ method: 'POST', url: '/osm/api/events/emit', payload: { topic: 'x' } })).statusCode).toBe(401);
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/event-receiver/status' })).statusCode).toBe(401);
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/event-receiver/workflows' })).statusCode).toBe(401);
    expect(await t.app.repos.events.maxId()).toBe(0);
  });
});

describe('POST /events/emit', () => {
  it('records the event (unprocessed while no scheduler runs)', async () => {
    const res = await emit({ topic: 'assets.new', name: 'subdomain.found', source: 'external-scanner', data_type: 'subdomain', data: { url: 'https://api.example.com' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ success: true, message: 'Event emitted successfully', event_id: expect.stringMatching(/^[0-9a-f-]{36}$/), receiver_running: false });
    const row = await eventRow(body.event_id);
    expect(row).toMatchObject({ topic: 'assets.new', name: 'subdomain.found', source: 'external-scanner', source_type: 'api', data_type: 'subdomain', processed: false, processed_at: null });
    expect(JSON.parse(row.data)).toEqual({ url: 'https://api.example.com' });
  });

  it('400 Topic is required, and other fields are checked', async () => {
    for (const payload of [{}, { topic: '' }, { topic: '   ' }, { topic: 5 }]) {
      const res = await emit(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: true, message: 'Topic is required' });
    }
    expect((await emit({ topic: 'a\nb' })).statusCode).toBe(400);
    expect((await emit({ topic: 'x', name: 'a\u0000b' })).statusCode).toBe(400);
    expect((await emit({ topic: 'x'.repeat(201) })).statusCode).toBe(400);
    expect((await t.server.inject({ method: 'POST', url: '/osm/api/events/emit', headers: t.auth })).json()).toEqual({ error: true, message: 'Invalid request body' });
    expect(await t.app.repos.events.maxId()).toBe(0);
  });

  it('hands the event to the live scheduler, which launches matching triggers and marks it processed', async () => {
    scheduler = await startScheduler(t.app, {});
    const sched = await createSchedule(t.app, { name: 'on-assets', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'assets.*', target: 'example.com' });
    const res = await emit({ topic: 'assets.new', data: { url: 'x' } });
    expect(res.json().receiver_running).toBe(true);
    await scheduler.processPending();
    const row = await eventRow(res.json().event_id);
    expect(row.processed).toBe(true);
    expect(row.error).toBe('');
    const runs = (await t.app.repos.runs.list({}, { offset: 0, limit: 10 })).data;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger_type: 'event', schedule_id: sched.id, target: 'example.com', status: 'queued' });
    const envelope = JSON.parse(Buffer.from(runs[0]!.params._event_envelope!, 'base64').toString('utf8'));
    expect(envelope).toMatchObject({ topic: 'assets.new', id: res.json().event_id, data: { url: 'x' } });
    // Non-matching topic: processed, no run.
    const other = await emit({ topic: 'other' });
    await scheduler.processPending();
    expect((await eventRow(other.json().event_id)).processed).toBe(true);
    expect((await t.app.repos.runs.list({}, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('an event emitted while no scheduler ran is handled when one starts', async () => {
    await createSchedule(t.app, { name: 'on-x', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'x', target: 'example.com' });
    const res = await emit({ topic: 'x' });
    scheduler = await startScheduler(t.app, {});
    expect((await eventRow(res.json().event_id)).processed).toBe(true);
    expect((await t.app.repos.runs.list({ status: 'queued' }, { offset: 0, limit: 10 })).total).toBe(1);
  });
});

describe('serve --no-event-receiver', () => {
  it('records emitted events but fires no event trigger', async () => {
    scheduler = await startScheduler(t.app, { eventReceiver: false });
    await createSchedule(t.app, { name: 'on-y', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'y', target: 'example.com' });
    const before = (await t.app.repos.runs.list({}, { offset: 0, limit: 1 })).total;
    const res = await emit({ topic: 'y' });
    expect(res.json()).toMatchObject({ success: true, receiver_running: false });
    await scheduler.processPending();
    expect((await eventRow(res.json().event_id)).processed).toBe(false);
    expect((await t.app.repos.runs.list({}, { offset: 0, limit: 1 })).total).toBe(before);
  });
});

describe('GET /event-receiver/status and /workflows', () => {
  it('reports a stopped receiver when no scheduler runs', async () => {
    expect((await get('/osm/api/event-receiver/status')).json()).toEqual({ enabled: false, running: false, workflow_count: 0, trigger_count: 0 });
    expect((await get('/osm/api/event-receiver/workflows')).json()).toEqual({ workflows: [], triggers: [] });
  });

  it('reports the registered triggers', async () => {
    scheduler = await startScheduler(t.app, {});
    const sched = await createSchedule(t.app, { name: 'on-assets', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'assets.*' });
    await createSchedule(t.app, { name: 'nightly', workflow_name: 'sample-recon', schedule: '0 2 * * *' });
    expect((await get('/osm/api/event-receiver/status')).json()).toEqual({ enabled: true, running: true, workflow_count: 1, trigger_count: 2 });
    const body = (await get('/osm/api/event-receiver/workflows')).json();
    expect(body.workflows).toEqual([{ name: 'sample-recon', kind: 'module', description: expect.any(String), triggers: ['on-assets', 'nightly'] }]);
    expect(body.triggers).toContainEqual(expect.objectContaining({ workflow_name: 'sample-recon', trigger_name: 'on-assets', topic: 'assets.*', enabled: true, type: 'event', schedule_id: sched.id }));
    expect(body.triggers).toContainEqual(expect.objectContaining({ trigger_name: 'nightly', topic: '', type: 'cron', schedule: '0 2 * * *', next_run: expect.any(String) }));
  });
});
