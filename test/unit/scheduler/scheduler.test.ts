/**
 * The scheduler against a real app context (temporary base folder, SQLite database, sample
 * workflows): registration, event matching, dedupe, loop guards, re-registration, resync, replay,
 * cron fires under fake timers, watch fires, failures recorded as events, and stop().
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAppContext, type SqliteAppContext as AppContext } from '../../../src/services/context.js';
import { Scheduler } from '../../../src/scheduler/scheduler.js';
import { liveScheduler } from '../../../src/scheduler/live.js';
import { createSchedule, deleteSchedule, setScheduleEnabled, updateSchedule } from '../../../src/services/schedules.js';
import { emitEvent } from '../../../src/services/events.js';
import { tempDir } from '../../helpers/tmp.js';

const TRIGGER_WORKFLOW = `kind: module
name: on-asset
description: reacts to new assets
triggers:
  - name: on-new
    on: event
    enabled: true
    event:
      topic: "assets.*"
      filters: ["event.data.status == 200"]
      dedupe_key: "{{event.data.url}}"
      dedupe_window: 5m
    input:
      target: event_data.host
      note: event_data.note
  - name: nightly
    on: cron
    schedule: "0 2 * * *"
    enabled: true
  - name: switched-off
    on: event
    event:
      topic: never
steps:
  - name: echo
    type: bash
    command: echo hi
`;

interface Ctx {
  app: AppContext;
  base: string;
  scheduler: Scheduler;
  logs: { msg: string; fields?: Record<string, unknown> }[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanups.length) await cleanups.pop()!();
});

function makeApp(withTriggerWorkflow = true): { app: AppContext; base: string } {
  const { dir, cleanup } = tempDir('osm-test-');
  const app = createAppContext({ baseFolder: dir });
  if (withTriggerWorkflow) fs.writeFileSync(path.join(app.settings().paths.workflows, 'modules', 'on-asset.yaml'), TRIGGER_WORKFLOW);
  cleanups.push(() => {
    app.close();
    cleanup();
  });
  return { app, base: dir };
}

async function start(opts: { withTriggerWorkflow?: boolean; app?: { app: AppContext; base: string } } = {}): Promise<Ctx> {
  const made = opts.app ?? makeApp(opts.withTriggerWorkflow ?? true);
  const logs: Ctx['logs'] = [];
  const scheduler = new Scheduler(made.app, { log: (msg, fields) => logs.push({ msg, fields }), watchDebounceMs: 20 });
  await scheduler.start();
  cleanups.push(() => scheduler.stop());
  return { ...made, scheduler, logs };
}

function runsOf(app: AppContext) {
  return app.store.runs.list({}, { offset: 0, limit: 100 }).data;
}

function decodeEnvelope(value: string | undefined) {
  return JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
}

describe('Scheduler: registration', () => {
  it('registers enabled workflow triggers and becomes the live scheduler', async () => {
    const c = await start();
    expect(liveScheduler(c.app)).toBe(c.scheduler);
    expect(c.scheduler.status()).toEqual({ enabled: true, running: true, workflow_count: 1, trigger_count: 2 });
    const wf = c.scheduler.workflows();
    expect(wf.workflows).toEqual([{ name: 'on-asset', kind: 'module', description: 'reacts to new assets', triggers: expect.arrayContaining(['on-new', 'nightly']) }]);
    const nightly = wf.triggers.find((t) => t.trigger_name === 'nightly')!;
    expect(nightly.type).toBe('cron');
    expect(nightly.next_run).toMatch(/^\d{4}-/);
    expect(wf.triggers.find((t) => t.trigger_name === 'switched-off')).toBeUndefined();
  });

  it('stop() drops every trigger and forgets the live scheduler', async () => {
    const c = await start();
    await c.scheduler.stop();
    expect(c.scheduler.status()).toEqual({ enabled: true, running: false, workflow_count: 0, trigger_count: 0 });
    expect(liveScheduler(c.app)).toBeUndefined();
  });
});

describe('Scheduler: event triggers', () => {
  it('fires a matching workflow trigger with its input mapping and envelope, then marks the event processed', async () => {
    const c = await start();
    const ev = c.app.store.events.insert({ topic: 'assets.new', source: 'scanner', data: { status: 200, host: 'a.example.com', url: 'u1', note: 'hello there' } });
    await c.scheduler.processPending();
    const runs = runsOf(c.app);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run).toMatchObject({ workflow_name: 'on-asset', target: 'a.example.com', trigger_type: 'event', trigger_name: 'on-new', status: 'queued', schedule_id: '' });
    expect(run.params.note).toBe('hello there');
    const envelope = decodeEnvelope(run.params._event_envelope);
    expect(envelope).toMatchObject({ topic: 'assets.new', id: ev.event_id, source: 'scanner', data: { host: 'a.example.com' } });
    const row = c.app.store.events.get(ev.id)!;
    expect(row.processed).toBe(true);
    expect(row.processed_at).not.toBeNull();
    expect(row.error).toBe('');
    const fired = c.app.store.events.list({ topic: 'schedule.triggered' }, { offset: 0, limit: 10 }).data;
    expect(fired).toHaveLength(1);
    expect(JSON.parse(fired[0]!.data)).toMatchObject({ trigger_type: 'event', run_uuid: run.run_uuid, event_id: ev.event_id });
    expect(fired[0]!.source).toBe('scheduler');
  });

  it('applies filters, topic globs and the dedupe window', async () => {
    const c = await start();
    const emit = (topic: string, data: unknown) => c.app.store.events.insert({ topic, data });
    emit('assets.new', { status: 404, host: 'b.example.com', url: 'u2' });
    emit('other.topic', { status: 200, host: 'c.example.com', url: 'u3' });
    emit('assets.updated', { status: 200, host: 'd.example.com', url: 'u4' });
    emit('assets.new', { status: 200, host: 'e.example.com', url: 'u4' }); // same dedupe key within 5m
    await c.scheduler.processPending();
    expect(runsOf(c.app).map((r) => r.target)).toEqual(['d.example.com']);
    // Every examined API event is marked processed (matched or not), so a restart does not replay it.
    expect(c.app.store.events.list({ processed: false }, { offset: 0, limit: 10 }).total).toBe(0);
  });

  it('refuses a hostile target from event data and records the failure', async () => {
    const c = await start();
    const ev = c.app.store.events.insert({ topic: 'assets.new', data: { status: 200, host: 'a.com;id', url: 'u9' } });
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(0);
    const row = c.app.store.events.get(ev.id)!;
    expect(row.processed).toBe(true);
    expect(row.error).toMatch(/on-asset:on-new: .*forbidden character ";"/);
    const fired = c.app.store.events.list({ topic: 'schedule.triggered' }, { offset: 0, limit: 10 }).data;
    expect(fired[0]!.error).toMatch(/forbidden character/);
  });

  it('matches engine events (already processed rows) and never feeds a trigger its own runs', async () => {
    const c = await start({ withTriggerWorkflow: false });
    const sched = await createSchedule(c.app, { name: 'after-run', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'run.*', target: 'example.com' });
    c.app.store.events.insert({ topic: 'run.completed', source: 'executor', source_type: 'run', processed: true, data: { scan_id: 'x' } });
    await c.scheduler.processPending();
    const runs = runsOf(c.app);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ schedule_id: sched.id, trigger_type: 'event', target: 'example.com' });
    // The run this trigger started completes: its own run.completed must not fire it again.
    c.app.store.events.insert({ topic: 'run.completed', source: 'executor', source_type: 'run', processed: true, run_id: runs[0]!.run_uuid, data: {} });
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(1);
    expect(c.app.store.schedules.get(sched.id)!.run_count).toBe(1);
  });

  it('an every-topic trigger is not fed by the scheduler’s own records', async () => {
    const c = await start({ withTriggerWorkflow: false });
    await createSchedule(c.app, { name: 'all', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: '*', target: 'example.com' });
    await emitEvent(c.app, { topic: 'anything' });
    await c.scheduler.processPending();
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(1);
  });

  it('replays events left unprocessed while no scheduler ran', async () => {
    const made = makeApp();
    const ev = made.app.store.events.insert({ topic: 'assets.new', data: { status: 200, host: 'r.example.com', url: 'r' } });
    const c = await start({ app: made });
    expect(runsOf(c.app).map((r) => r.target)).toEqual(['r.example.com']);
    expect(c.app.store.events.get(ev.id)!.processed).toBe(true);
  });
});

describe('Scheduler: schedule changes', () => {
  it('re-registers on update, enable/disable and delete', async () => {
    const c = await start({ withTriggerWorkflow: false });
    const s = await createSchedule(c.app, { name: 'ev', workflow_name: 'sample-recon', trigger_type: 'event', event_topic: 'a', target: 'example.com' });
    expect(c.scheduler.status().trigger_count).toBe(1);
    c.app.store.events.insert({ topic: 'b' });
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(0);
    await updateSchedule(c.app, s.id, { event_topic: 'b' });
    c.app.store.events.insert({ topic: 'b' });
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(1);
    await setScheduleEnabled(c.app, s.id, false);
    expect(c.scheduler.status().trigger_count).toBe(0);
    c.app.store.events.insert({ topic: 'b' });
    await c.scheduler.processPending();
    expect(runsOf(c.app)).toHaveLength(1);
    await setScheduleEnabled(c.app, s.id, true);
    expect(c.scheduler.status().trigger_count).toBe(1);
    await deleteSchedule(c.app, s.id);
    expect(c.scheduler.status().trigger_count).toBe(0);
  });

  it('picks up rows written by another process on resync', async () => {
    const c = await start({ withTriggerWorkflow: false });
    const row = c.app.store.schedules.create({ name: 'cli', workflow_name: 'sample-recon', trigger_type: 'cron', schedule: '0 5 * * *', input_config: { target: 'example.com' } });
    expect(c.scheduler.status().trigger_count).toBe(0);
    await c.scheduler.resyncSchedules();
    expect(c.scheduler.status().trigger_count).toBe(1);
    expect(c.app.store.schedules.get(row.id)!.next_run).toMatch(/^\d{4}-/);
    c.app.store.schedules.setEnabled(row.id, false);
    await c.scheduler.resyncSchedules();
    expect(c.scheduler.status().trigger_count).toBe(0);
  });

  it('records a fire that fails (workflow gone) without throwing', async () => {
    const c = await start({ withTriggerWorkflow: false });
    const s = await createSchedule(c.app, { name: 'doomed', workflow_name: 'sample-recon', trigger_type: 'cron', schedule: '0 1 * * *', target: 'example.com' });
    c.app.store.schedules.update(s.id, { workflow_name: 'no-such-workflow' });
    await expect(c.scheduler.fireCron(`schedule:${s.id}`)).resolves.toBeUndefined();
    const fired = c.app.store.events.list({ topic: 'schedule.triggered' }, { offset: 0, limit: 10 }).data;
    expect(fired).toHaveLength(1);
    expect(fired[0]!.error).toMatch(/no-such-workflow/);
    expect(runsOf(c.app)).toHaveLength(0);
    expect(c.logs.some((l) => l.msg === 'scheduler: fire failed')).toBe(true);
  });
});

describe('Scheduler: hostile filters', () => {
  it('a filter stuck in an endless loop runs off the event loop: the process keeps serving, the filter times out as no match', async () => {
    const made = makeApp(false);
    const marker = path.join(made.base, 'filter-started');
    const filter = `write_file(${JSON.stringify(marker)}, "x"); while (true) {}`;
    fs.writeFileSync(
      path.join(made.app.settings().paths.workflows, 'modules', 'on-loop.yaml'),
      `kind: module\nname: on-loop\ntriggers:\n  - name: looping\n    on: event\n    enabled: true\n    event:\n      topic: loop.test\n      filter_functions: [${JSON.stringify(filter)}]\nsteps:\n  - name: echo\n    type: bash\n    command: echo hi\n`,
    );
    const logs: Ctx['logs'] = [];
    const scheduler = new Scheduler(made.app, { log: (msg, fields) => logs.push({ msg, fields }), exprTimeoutMs: 3000 });
    await scheduler.start();
    cleanups.push(() => scheduler.stop());
    made.app.store.events.insert({ topic: 'loop.test', source: 'test', data: { a: 1 } });
    let settled = false;
    const pending = Promise.resolve(scheduler.processPending()).then(() => (settled = true));
    // Timers keep firing while the filter spins: the event loop is free.
    const end = Date.now() + 60_000;
    do await new Promise((r) => setTimeout(r, 20));
    while (!fs.existsSync(marker) && Date.now() < end);
    expect(fs.existsSync(marker)).toBe(true);
    expect(settled).toBe(false);
    await pending;
    expect(runsOf(made.app)).toHaveLength(0);
    const ev = made.app.store.events.list({ topic: 'loop.test' }, { offset: 0, limit: 1 }).data[0]!;
    expect(ev.processed).toBe(true);
  }, 60_000);
});

describe('Scheduler: cron under fake timers', () => {
  it('fires on the minute, records last_run/run_count/next_run, and stop() leaves no timer behind', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date'] });
    vi.setSystemTime(new Date(2030, 0, 1, 10, 0, 30));
    const c = await start({ withTriggerWorkflow: false });
    const s = await createSchedule(c.app, { name: 'every-minute', workflow_name: 'sample-recon', schedule: '* * * * *', target: 'example.com' });
    expect(new Date(c.app.store.schedules.get(s.id)!.next_run!).getTime()).toBe(new Date(2030, 0, 1, 10, 1, 0).getTime());
    expect(runsOf(c.app)).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(31_000);
    const runs = runsOf(c.app);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger_type: 'cron', schedule_id: s.id, trigger_name: 'every-minute', target: 'example.com', status: 'queued' });
    const after = c.app.store.schedules.get(s.id)!;
    expect(after.run_count).toBe(1);
    expect(after.last_run).not.toBeNull();
    expect(new Date(after.next_run!).getTime()).toBe(new Date(2030, 0, 1, 10, 2, 0).getTime());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runsOf(c.app)).toHaveLength(2);
    await c.scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('Scheduler: watch triggers', () => {
  it('fires when the watched file is written', async () => {
    const c = await start({ withTriggerWorkflow: false });
    const file = path.join(c.app.settings().paths.data, 'targets.txt');
    const fired = new Promise<Record<string, unknown> | undefined>((resolve) => {
      const timer = setInterval(() => {
        const hit = c.logs.find((l) => l.msg === 'scheduler: fired' || l.msg === 'scheduler: fire failed');
        if (hit) {
          clearInterval(timer);
          resolve(hit.fields);
        }
      }, 10);
    });
    const s = await createSchedule(c.app, { name: 'watch', workflow_name: 'sample-recon', trigger_type: 'watch', watch_path: file, target: 'example.com' });
    await c.scheduler.settled();
    fs.writeFileSync(file, 'a.example.com\n');
    const fields = await fired;
    expect(fields).toMatchObject({ type: 'watch' });
    const runs = runsOf(c.app);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger_type: 'watch', schedule_id: s.id });
  });
});
