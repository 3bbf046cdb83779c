import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { startScheduler, type Scheduler } from '../../src/scheduler/index.js';

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

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.server.inject({ method, url: `/osm/api${url}`, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

const valid = { name: 'nightly', workflow_name: 'sample-recon', schedule: '0 2 * * *', target: 'example.com', params: { prefixes: 'www,api' } };

async function create(body: Record<string, unknown> = valid): Promise<string> {
  const res = await api('POST', '/schedules', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

describe('auth', () => {
  it('every schedule route needs credentials', async () => {
    const routes: [string, string][] = [['GET', '/schedules'], ['POST', '/schedules'], ['GET', '/schedules/x'], ['PUT', '/schedules/x'], ['DELETE', '/schedules/x'], ['POST', '/schedules/x/enable'], ['POST', '/schedules/x/disable'], ['POST', '/schedules/x/trigger']];
    for (const [method, url] of routes) {
      const res = await t.server.inject({ method: method as 'GET', url: `/osm/api${url}`, payload: method === 'GET' || method === 'DELETE' ? undefined : valid });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
    expect((await t.app.repos.schedules.list({ offset: 0, limit: 10 })).total).toBe(0);
  });
});

describe('POST /schedules', () => {
  it('creates an enabled cron schedule with next_run and the spec response', async () => {
    const res = await api('POST', '/schedules', valid);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ message: 'Schedule created', data: { id: expect.stringMatching(/^sch_/), name: 'nightly', workflow_name: 'sample-recon', schedule: '0 2 * * *', is_enabled: true } });
    const row = (await api('GET', `/schedules/${body.data.id}`)).json();
    expect(row).toMatchObject({
      id: body.data.id, name: 'nightly', trigger_name: 'nightly', trigger_type: 'cron', workflow_name: 'sample-recon', workflow_kind: 'module',
      input_config: { target: 'example.com', params: { prefixes: 'www,api' } }, is_enabled: true, run_count: 0, last_run: null,
    });
    expect(row.workflow_path).toMatch(/sample-recon\.yaml$/);
    expect(Date.parse(row.next_run)).toBeGreaterThan(Date.now());
  });

  it('accepts workflow, is_enabled:false, event and watch triggers', async () => {
    const id = await create({ name: 'off', workflow: 'sample-recon', schedule: '@daily', is_enabled: false });
    const off = (await api('GET', `/schedules/${id}`)).json();
    expect(off).toMatchObject({ is_enabled: false, schedule: '0 0 * * *', next_run: null });
    const ev = (await api('GET', `/schedules/${await create({ name: 'ev', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'assets.*' })}`)).json();
    expect(ev).toMatchObject({ trigger_type: 'event', event_topic: 'assets.*', schedule: '', next_run: null });
    const file = path.join(t.app.settings().paths.data, 'targets.txt');
    const w = (await api('GET', `/schedules/${await create({ name: 'w', workflow_name: 'sample-recon', trigger_type: 'watch', watch_path: file })}`)).json();
    expect(w).toMatchObject({ trigger_type: 'watch', watch_path: file });
    const rel = (await api('GET', `/schedules/${await create({ name: 'rel', workflow_name: 'sample-recon', trigger_type: 'watch', watch_path: 'external-data/x.txt' })}`)).json();
    expect(rel.watch_path).toBe(path.join(t.base, 'external-data', 'x.txt'));
  });

  it('validates the cron expression', async () => {
    for (const [schedule, msg] of [['61 * * * *', 'Invalid cron expression: minute: 61 is out of range 0-59'], ['0 0 * * 7', 'Invalid cron expression: day of week: 7 is out of range 0-6'], ['* * *', /^Invalid cron expression: expected 5 fields/], ['', 'Invalid cron expression: schedule is required for cron triggers']] as const) {
      const res = await api('POST', '/schedules', { ...valid, schedule });
      expect(res.statusCode, schedule).toBe(400);
      if (typeof msg === 'string') expect(res.json()).toEqual({ error: true, message: msg });
      else expect(res.json().message).toMatch(msg);
    }
  });

  it('requires name, workflow, event_topic for event and watch_path for watch', async () => {
    expect((await api('POST', '/schedules', { workflow_name: 'sample-recon', schedule: '* * * * *' })).json().message).toBe('name is required');
    expect((await api('POST', '/schedules', { name: 'x', schedule: '* * * * *' })).json().message).toBe('workflow_name is required');
    expect((await api('POST', '/schedules', { name: 'x', workflow_name: 'sample-recon', trigger_type: 'event' })).json().message).toBe('event_topic is required for event triggers');
    expect((await api('POST', '/schedules', { name: 'x', workflow_name: 'sample-recon', trigger_type: 'watch' })).json().message).toBe('watch_path is required for watch triggers');
    const bad = await api('POST', '/schedules', { name: 5, workflow_name: 'sample-recon', trigger_type: 'sometimes', params: { a: 1 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/name: .*; .*trigger_type: .*; .*params\.a: must be a string/);
  });

  it('404 Workflow not found', async () => {
    const res = await api('POST', '/schedules', { ...valid, workflow_name: 'no-such-flow' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Workflow not found' });
    expect((await api('POST', '/schedules', { ...valid, workflow_kind: 'flow' })).statusCode).toBe(400);
  });

  it('validates the untrusted target and params', async () => {
    for (const target of ['a.com;id', '$(id)', '`id`', 'a.com\nid', '-oProxyCommand=id']) {
      const res = await api('POST', '/schedules', { ...valid, target });
      expect(res.statusCode, target).toBe(400);
      expect(res.json().message).toMatch(/target/);
    }
    const p = await api('POST', '/schedules', { ...valid, params: { x: 'a;b' } });
    expect(p.statusCode).toBe(400);
    expect(p.json().message).toMatch(/params\["x"\] contains forbidden character/);
    const ic = await api('POST', '/schedules', { ...valid, target: undefined, input_config: { target: 'a.com|id' } });
    expect(ic.statusCode).toBe(400);
    expect((await t.app.repos.schedules.list({ offset: 0, limit: 10 })).total).toBe(0);
  });

  it('refuses watch paths outside the base and data folders (also through a symlink)', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    try {
      fs.symlinkSync(outside, path.join(t.base, 'link-out'));
      for (const watch_path of ['/etc/passwd', '../../etc/passwd', path.join(t.base, 'link-out', 'x.txt'), outside, t.base]) {
        const res = await api('POST', '/schedules', { name: 'w', workflow_name: 'sample-recon', trigger_type: 'watch', watch_path });
        expect(res.statusCode, watch_path).toBe(400);
        expect(res.json().message).toMatch(/^watch_path must be inside the base folder or the data folder/);
      }
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('GET /schedules', () => {
  it('lists newest first with pagination (default limit 20)', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await create({ ...valid, name: `s${i}` }));
    const body = (await api('GET', '/schedules')).json();
    expect(body.data.map((s: { name: string }) => s.name)).toEqual(['s2', 's1', 's0']);
    expect(body.pagination).toEqual({ total: 3, offset: 0, limit: 20 });
    const page = (await api('GET', '/schedules?offset=1&limit=1')).json();
    expect(page.data.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    expect((await api('GET', '/schedules?limit=0')).statusCode).toBe(400);
    expect((await api('GET', '/schedules?limit=x')).statusCode).toBe(400);
    expect((await api('GET', '/schedules?limit=20000')).json().pagination.limit).toBe(10000);
  });

  it('GET /schedules/{id} 404', async () => {
    const res = await api('GET', '/schedules/sch_nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Schedule not found' });
  });
});

describe('PUT, DELETE, enable, disable', () => {
  it('updates partially and re-validates', async () => {
    const id = await create();
    const res = await api('PUT', `/schedules/${id}`, { name: 'renamed', schedule: '*/10 * * * *' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Schedule updated', data: { id, name: 'renamed', schedule: '*/10 * * * *' } });
    const row = (await api('GET', `/schedules/${id}`)).json();
    expect(row).toMatchObject({ name: 'renamed', trigger_name: 'renamed', input_config: { target: 'example.com', params: { prefixes: 'www,api' } } });
    expect((await api('PUT', `/schedules/${id}`, { schedule: '99 * * * *' })).json().message).toMatch(/^Invalid cron expression/);
    expect((await api('PUT', `/schedules/${id}`, { trigger_type: 'event' })).json().message).toBe('event_topic is required for event triggers');
    expect((await api('PUT', `/schedules/${id}`, { target: 'x;y' })).statusCode).toBe(400);
    expect((await api('PUT', '/schedules/sch_nope', { name: 'x' })).statusCode).toBe(404);
    expect((await api('GET', `/schedules/${id}`)).json().schedule).toBe('*/10 * * * *');
  });

  it('enables, disables and deletes', async () => {
    const id = await create();
    expect((await api('POST', `/schedules/${id}/disable`)).json()).toEqual({ message: 'Schedule disabled' });
    expect((await api('GET', `/schedules/${id}`)).json()).toMatchObject({ is_enabled: false, next_run: null });
    expect((await api('POST', `/schedules/${id}/enable`)).json()).toEqual({ message: 'Schedule enabled' });
    expect((await api('GET', `/schedules/${id}`)).json().next_run).not.toBeNull();
    expect((await api('DELETE', `/schedules/${id}`)).json()).toEqual({ message: 'Schedule deleted' });
    for (const [method, url] of [['GET', `/schedules/${id}`], ['DELETE', `/schedules/${id}`], ['POST', `/schedules/${id}/enable`], ['POST', `/schedules/${id}/disable`], ['POST', `/schedules/${id}/trigger`]] as const) {
      const res = await api(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().message).toBe('Schedule not found');
    }
  });

  it('every change reaches the live scheduler', async () => {
    scheduler = await startScheduler(t.app, {});
    const id = await create();
    expect(scheduler.status().trigger_count).toBe(1);
    await api('PUT', `/schedules/${id}`, { schedule: '5 5 * * *' });
    expect(scheduler.list()[0]).toMatchObject({ schedule: '5 5 * * *', schedule_id: id });
    await api('POST', `/schedules/${id}/disable`);
    expect(scheduler.status().trigger_count).toBe(0);
    await api('POST', `/schedules/${id}/enable`);
    expect(scheduler.status().trigger_count).toBe(1);
    await api('DELETE', `/schedules/${id}`);
    expect(scheduler.status().trigger_count).toBe(0);
  });
});

describe('POST /schedules/{id}/trigger', () => {
  it('creates a queued manual run now and counts it', async () => {
    const id = await create({ ...valid, enabled: false });
    const res = await api('POST', `/schedules/${id}/trigger`);
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toEqual({ message: 'Schedule triggered', schedule: 'nightly', workflow: 'sample-recon', run_uuid: expect.any(String) });
    const run = (await t.app.repos.runs.getByUuid(body.run_uuid))!;
    expect(run).toMatchObject({ status: 'queued', trigger_type: 'manual', schedule_id: id, trigger_name: 'nightly', target: 'example.com', params: { prefixes: 'www,api' } });
    const row = (await api('GET', `/schedules/${id}`)).json();
    expect(row.run_count).toBe(1);
    expect(row.last_run).not.toBeNull();
    const ev = (await t.app.repos.events.list({ topic: 'schedule.triggered' }, { offset: 0, limit: 5 })).data[0]!;
    expect(JSON.parse(ev.data)).toMatchObject({ schedule_id: id, trigger_type: 'manual', schedule: '0 2 * * *', run_uuid: body.run_uuid });
  });

  it('the run is executed by the queue', async () => {
    await t.close();
    t = await makeTestServer({ withQueue: true });
    const id = await create();
    const { run_uuid } = (await api('POST', `/schedules/${id}/trigger`)).json();
    // The queue was kicked: wait for the run to reach a terminal state (bounded by the test timeout).
    let status = '';
    while (!['completed', 'failed', 'cancelled'].includes(status)) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await t.app.repos.runs.getByUuid(run_uuid))!.status;
    }
    expect(status).toBe('completed');
  });
});
