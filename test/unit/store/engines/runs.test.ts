/** The runs repository on both engines: the same cases against SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../../../src/store/async.js';
import { ENGINES, useStore } from './engines.js';

const base = { workflow_name: 'wf', workflow_kind: 'module', target: 'Example.com' };

async function queued(s: AsyncStore, priority: 'low' | 'normal' | 'high' | 'critical', extra: { run_group_id?: string; run_mode?: string } = {}): Promise<number> {
  return (await s.runs.create({ ...base, status: 'queued', priority, ...extra })).id;
}

describe.each(ENGINES)('runs on $name', (engine) => {
  const s = useStore(engine);

  it('creates with defaults and reads back by id, uuid and find', async () => {
    const r = await s().runs.create({ ...base, params: { a: '1' }, options: { x: true }, hooks_enabled: true });
    expect(r).toMatchObject({ status: 'queued', priority: 'normal', priority_rank: 2, run_mode: 'local', trigger_type: 'manual', runner_type: 'host', started_at: null, completed_at: null, hooks_enabled: true, params: { a: '1' }, options: { x: true }, org_uuid: '00000000-0000-0000-0000-000000000001' });
    expect(typeof r.id).toBe('number');
    expect(r.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await s().runs.get(r.id)).toEqual(r);
    expect(await s().runs.getByUuid(r.run_uuid)).toEqual(r);
    expect(await s().runs.find(String(r.id))).toEqual(r);
    expect(await s().runs.find(r.run_uuid)).toEqual(r);
    expect(await s().runs.find(999999)).toBeUndefined();
    const running = await s().runs.create({ ...base, status: 'running' });
    expect(running.started_at).toBe(running.created_at);
    await expect(s().runs.create({ ...base, priority: 'urgent' as never })).rejects.toThrow(/priority/);
    await expect(s().runs.create({ ...base, status: 'completed' as never })).rejects.toThrow(/cannot be created/);
  });

  it('lists with filters, a total and newest first; the target filter ignores case', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s().runs.create({ ...base, workspace: i % 2 ? 'odd' : 'even', target: `host${i}.Example.com` })).id);
    await s().runs.create({ ...base, workflow_name: 'other', target: 'x_y%z' });
    const all = await s().runs.list({}, { offset: 0, limit: 100 });
    expect(all.total).toBe(6);
    const even = await s().runs.list({ workspace: 'even' }, { offset: 0, limit: 2 });
    expect(even.total).toBe(3);
    expect(even.data.map((r) => r.id)).toEqual([ids[4], ids[2]]);
    expect((await s().runs.list({ workspace: 'even' }, { offset: 2, limit: 2 })).data.map((r) => r.id)).toEqual([ids[0]]);
    expect((await s().runs.list({ target: 'HOST3.example' }, { offset: 0, limit: 10 })).data.map((r) => r.id)).toEqual([ids[3]]);
    // LIKE wildcards in the filter are literal.
    expect((await s().runs.list({ target: '_y%' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().runs.list({ target: '%' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().runs.list({ workflow_name: 'other' }, { offset: 0, limit: 0 })).data).toEqual([]);
    expect((await s().runs.list({ org_uuid: [] }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().runs.list({ status: 'running' }, { offset: -5, limit: 10 })).total).toBe(0);
  });

  it('transitions only from allowed states; terminal states are sticky', async () => {
    const r = await s().runs.create({ ...base, status: 'pending' });
    expect(await s().runs.transition(r.id, 'completed')).toBeUndefined();
    const running = await s().runs.transition(r.id, 'running');
    expect(running?.status).toBe('running');
    expect(running?.started_at).not.toBeNull();
    await s().runs.update(r.id, { current_pid: 42, current_pid_start: 'x' });
    const done = await s().runs.transition(r.id, 'failed', { error_message: 'boom', at: '2020-01-02T03:04:05.000Z' });
    expect(done).toMatchObject({ status: 'failed', error_message: 'boom', completed_at: '2020-01-02T03:04:05.000Z', current_pid: 0, current_pid_start: '' });
    expect(await s().runs.transition(r.id, 'cancelled')).toBeUndefined();
    expect(await s().runs.transition(r.id, 'pending')).toBeUndefined();
    // A PID written after the terminal transition does not stick.
    await s().runs.update(r.id, { current_pid: 7, total_steps: 3, params: { k: 'v' } });
    const after = await s().runs.get(r.id);
    expect(after).toMatchObject({ current_pid: 0, total_steps: 3, params: { k: 'v' }, status: 'failed' });
    await s().runs.incrementCompletedSteps(r.id);
    await s().runs.incrementCompletedSteps(r.id);
    expect((await s().runs.get(r.id))?.completed_steps).toBe(2);
  });

  it('claims by priority then FIFO, never distributed runs, and lists the queue the same way', async () => {
    const low = await queued(s(), 'low');
    const n1 = await queued(s(), 'normal', { run_group_id: 'job-a' });
    const crit = await queued(s(), 'critical');
    const n2 = await queued(s(), 'normal');
    await queued(s(), 'critical', { run_mode: 'distributed' });
    expect((await s().runs.listQueued(10, [])).map((r) => r.id)).toEqual([crit, n1, n2, low]);
    expect((await s().runs.listQueued(10, ['job-a'])).map((r) => r.id)).toEqual([crit, n2, low]);
    expect(await s().runs.listQueued(0, [])).toEqual([]);
    const order: number[] = [];
    for (;;) {
      const r = await s().runs.claimNext(1234);
      if (!r) break;
      expect(r).toMatchObject({ status: 'running', owner_pid: 1234 });
      order.push(r.id);
    }
    expect(order).toEqual([crit, n1, n2, low]);
    expect((await s().runs.listActive()).map((r) => r.id)).toEqual([low, n1, crit, n2]);
    expect((await s().runs.listUnfinishedByMode('distributed')).length).toBe(1);
    expect(await s().runs.countByStatus()).toEqual({ running: 4, queued: 1 });
  });

  it('hands each queued run to exactly one of 4 concurrent claimers', async () => {
    const ids = new Set<number>();
    for (let i = 0; i < 50; i++) ids.add(await queued(s(), i % 3 === 0 ? 'high' : 'normal'));
    const claimer = async (pid: number) => {
      const got: number[] = [];
      for (;;) {
        const r = await s().runs.claimNext(pid);
        if (!r) return got;
        got.push(r.id);
      }
    };
    const results = await Promise.all([1, 2, 3, 4].map(claimer));
    const all = results.flat();
    expect(all.length).toBe(50);
    expect(new Set(all)).toEqual(ids);
    const runs = await s().runs.list({ status: 'running' }, { offset: 0, limit: 100 });
    expect(runs.total).toBe(50);
    for (const r of runs.data) expect(results[r.owner_pid - 1]).toContain(r.id);
  });

  it.runIf(engine.name === 'postgresql')('two stores on one database (two daemons) never claim the same run', async () => {
    const other = await s.opened().another!();
    for (let i = 0; i < 40; i++) await queued(s(), 'normal');
    const claimer = async (store: AsyncStore, pid: number) => {
      const got: number[] = [];
      for (let r = await store.runs.claimNext(pid); r; r = await store.runs.claimNext(pid)) got.push(r.id);
      return got;
    };
    const results = await Promise.all([claimer(s(), 1), claimer(s(), 2), claimer(other, 3), claimer(other, 4)]);
    const all = results.flat();
    expect(all.length).toBe(40);
    expect(new Set(all).size).toBe(40);
  });

  it('claims a batch of queued runs with their owner, in the order asked, leaving runs no longer queued', async () => {
    const a = await queued(s(), 'normal');
    const b = await queued(s(), 'high');
    const c = await queued(s(), 'normal');
    const gone = await queued(s(), 'normal');
    await s().runs.transition(gone, 'cancelled');
    expect(await s().runs.claim([], 1)).toEqual([]);
    const got = await s().runs.claim([b, gone, a, 999999], 4321);
    expect(got.map((r) => r.id)).toEqual([b, a]);
    for (const r of got) expect(r).toMatchObject({ status: 'running', owner_pid: 4321, owner_host: expect.any(String) });
    expect(got[0]!.started_at).not.toBeNull();
    expect(await s().runs.get(b)).toEqual(got[0]);
    // Already claimed: nobody gets them again.
    expect(await s().runs.claim([a, b, c], 1)).toMatchObject([{ id: c, owner_pid: 1 }]);
  });

  it('concurrent batch claims over the same runs hand each to exactly one claimer', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await queued(s(), 'normal'));
    const stores = engine.name === 'postgresql' ? [s(), await s.opened().another!()] : [s()];
    const results = await Promise.all([1, 2, 3, 4].map((pid) => stores[pid % stores.length]!.runs.claim(pid % 2 ? ids : [...ids].reverse(), pid)));
    const all = results.flat().map((r) => r.id);
    expect(all.length).toBe(30);
    expect(new Set(all).size).toBe(30);
  });

  it('claimQueued: lists and claims in one write, in claim order, within each job’s cap, stopping at a job without one', async () => {
    // Earlier tests of this file leave queued runs: each case looks at its own runs only.
    const drain = async () => {
      for (;;) if ((await s().runs.claimQueued({ free: 50, scan: 50, exclude: [], caps: {}, ownerPid: 1, at: '2000-01-01T00:00:00.000Z' })).length === 0) break;
    };
    for (const r of (await s().runs.list({ status: 'queued' }, { offset: 0, limit: 1000 })).data) await s().runs.transition(r.id, 'cancelled');
    await drain();
    const at = '2030-01-02T03:04:05.678Z';
    const low = await queued(s(), 'low');
    const j1 = [await queued(s(), 'normal', { run_group_id: 'j1' }), await queued(s(), 'normal', { run_group_id: 'j1' }), await queued(s(), 'normal', { run_group_id: 'j1' })];
    const high = await queued(s(), 'high');
    const dist = await queued(s(), 'critical', { run_mode: 'distributed' });
    const x = await queued(s(), 'normal', { run_group_id: 'excluded' });
    const claim = (free: number, caps: Record<string, number>, exclude: string[] = ['excluded']) => s().runs.claimQueued({ free, scan: free + 16, exclude, caps, ownerPid: 77, at });
    // j1 may start 2: high first, then j1's first two; the third of j1 is over its cap, `low` is next.
    const got = await claim(10, { j1: 2 });
    expect(got.map((r) => r.id)).toEqual([high, j1[0], j1[1], low]);
    for (const r of got) expect(r).toMatchObject({ status: 'running', owner_pid: 77, updated_at: at, started_at: at });
    expect((await s().runs.get(dist))?.status).toBe('queued');
    expect((await s().runs.get(x))?.status).toBe('queued');
    expect(await claim(0, { j1: 5 })).toEqual([]);
    // A job the caller has no cap for stops the claim there, even for runs of no job after it.
    const j2 = await queued(s(), 'high', { run_group_id: 'j2' });
    const after = await queued(s(), 'normal');
    expect(await claim(5, { j1: 1 })).toEqual([]);
    expect(((await claim(5, { j1: 1, j2: 1 })).map((r) => r.id))).toEqual([j2, j1[2], after]);
    // Excluded no more: claimed.
    expect((await claim(5, {}, [])).map((r) => r.id)).toEqual([]);
    expect((await claim(5, { excluded: 1 }, [])).map((r) => r.id)).toEqual([x]);
    expect((await s().runs.get(dist))?.status).toBe('queued');
  });

  it('concurrent one-write claims hand each run to exactly one claimer', async () => {
    for (const r of (await s().runs.list({ status: 'queued' }, { offset: 0, limit: 1000 })).data) await s().runs.transition(r.id, 'cancelled');
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await queued(s(), 'normal'));
    const stores = engine.name === 'postgresql' ? [s(), await s.opened().another!()] : [s()];
    const results: number[][] = [[], [], [], []];
    await Promise.all(
      [0, 1, 2, 3].map(async (k) => {
        for (;;) {
          const got = await stores[k % stores.length]!.runs.claimQueued({ free: 3, scan: 19, exclude: [], caps: {}, ownerPid: 100 + k, at: new Date().toISOString() });
          if (got.length === 0) break;
          results[k]!.push(...got.map((r) => r.id));
        }
      }),
    );
    const all = results.flat();
    expect(all.length).toBe(30);
    expect(new Set(all)).toEqual(new Set(ids));
  });

  it('start: to running with the owner and its event at once; a finished run is left alone', async () => {
    const event = (r: { run_uuid: string }) => ({ topic: 'run.started', name: 'run.started', source: 'api', source_type: 'run', data_type: 'scan', data: { scan_id: r.run_uuid }, run_id: r.run_uuid, workspace: 'ws', processed: true });
    for (const status of ['queued', 'pending', 'running'] as const) {
      const r = await s().runs.create({ ...base, status });
      const started = await s().runs.start(r.id, 777, event(r));
      expect(started).toMatchObject({ id: r.id, status: 'running', owner_pid: 777 });
      expect(started!.started_at).not.toBeNull();
      if (status === 'running') expect(started!.started_at).toBe(r.started_at);
      expect(await s().runs.get(r.id)).toEqual(started);
      const events = (await s().events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 })).data;
      expect(events).toMatchObject([{ topic: 'run.started', processed: true, workspace: 'ws', data: JSON.stringify({ scan_id: r.run_uuid }) }]);
    }
    const done = await s().runs.create({ ...base, status: 'pending' });
    await s().runs.transition(done.id, 'cancelled');
    expect(await s().runs.start(done.id, 777, event(done))).toBeUndefined();
    expect(await s().runs.start(999999, 777, event(done))).toBeUndefined();
    expect((await s().events.list({ run_id: done.run_uuid }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().runs.get(done.id))).toMatchObject({ status: 'cancelled', owner_pid: 0 });
  });

  it('start with a patch: the workspace (its org following the workspace row) and the step count in the same write', async () => {
    const event = (r: { run_uuid: string }) => ({ topic: 'run.started', name: 'run.started', source: 'api', source_type: 'run', data_type: 'scan', data: {}, run_id: r.run_uuid, workspace: 'moved', processed: true });
    const org = await s().orgs.create({ name: 'start-org' });
    await s().workspaces.upsertRunInfo({ name: 'moved', local_path: '/moved', org_uuid: org.uuid });
    const r = await s().runs.create({ ...base, status: 'queued' });
    const started = await s().runs.start(r.id, 777, event(r), { workspace: 'moved', total_steps: 7 });
    expect(started).toMatchObject({ status: 'running', workspace: 'moved', total_steps: 7, org_uuid: org.uuid });
    expect(await s().runs.get(r.id)).toEqual(started);
    // A workspace without a row leaves the run's org as it was.
    const other = await s().runs.create({ ...base, status: 'queued' });
    expect(await s().runs.start(other.id, 777, event(other), { workspace: 'no-row-yet' })).toMatchObject({ workspace: 'no-row-yet', org_uuid: other.org_uuid, total_steps: other.total_steps });
    // A finished run takes no patch.
    const done = await s().runs.create({ ...base, status: 'pending' });
    await s().runs.transition(done.id, 'cancelled');
    expect(await s().runs.start(done.id, 777, event(done), { workspace: 'moved', total_steps: 3 })).toBeUndefined();
    expect(await s().runs.get(done.id)).toMatchObject({ workspace: done.workspace, total_steps: done.total_steps });
  });

  it('start with the workspace row: the row is written in the same write and the run takes the org of a new row', async () => {
    const event = (r: { run_uuid: string }) => ({ topic: 'run.started', name: 'run.started', source: 'api', source_type: 'run', data_type: 'scan', data: {}, run_id: r.run_uuid, workspace: 'fresh', processed: true });
    const org = await s().orgs.create({ name: 'row-org' });
    const r = await s().runs.create({ ...base, status: 'queued' });
    const row = { name: 'fresh-ws', local_path: '/w/fresh-ws', run_workflow: 'wf', org_uuid: org.uuid };
    const started = await s().runs.start(r.id, 777, event(r), { workspace: 'fresh-ws', total_steps: 2, workspaceRow: row });
    expect(started).toMatchObject({ status: 'running', workspace: 'fresh-ws', total_steps: 2, org_uuid: org.uuid });
    expect(await s().workspaces.get('fresh-ws')).toMatchObject({ local_path: '/w/fresh-ws', run_workflow: 'wf', org_uuid: org.uuid });
    // An existing row keeps its org; the run follows it, and the row's run fields are updated.
    const other = await s().orgs.create({ name: 'other-org' });
    const r2 = await s().runs.create({ ...base, status: 'queued' });
    await s().runs.start(r2.id, 777, event(r2), { workspace: 'fresh-ws', workspaceRow: { ...row, local_path: '/w/moved', org_uuid: other.uuid } });
    expect(await s().runs.get(r2.id)).toMatchObject({ workspace: 'fresh-ws', org_uuid: org.uuid });
    expect(await s().workspaces.get('fresh-ws')).toMatchObject({ local_path: '/w/moved', org_uuid: org.uuid });
    // A finished run does not start, but the workspace row is written all the same.
    const done = await s().runs.create({ ...base, status: 'pending' });
    await s().runs.transition(done.id, 'cancelled');
    expect(await s().runs.start(done.id, 777, event(done), { workspace: 'late-ws', workspaceRow: { name: 'late-ws', local_path: '/w/late' } })).toBeUndefined();
    expect(await s().workspaces.get('late-ws')).toMatchObject({ local_path: '/w/late' });
    expect(await s().runs.get(done.id)).toMatchObject({ status: 'cancelled', workspace: done.workspace });
  });

  it('finish: the terminal transition and its event, whose data gets the row’s completed_steps; once only', async () => {
    const r = await s().runs.create({ ...base, status: 'running' });
    await s().runs.update(r.id, { current_pid: 42, current_pid_start: 'x' });
    await s().runs.incrementCompletedSteps(r.id);
    await s().runs.incrementCompletedSteps(r.id);
    const event = (topic: string, data: Record<string, unknown>) => ({ topic, name: topic, source: 'executor', source_type: 'run', data_type: 'scan', data, run_id: r.run_uuid, processed: true });
    const done = await s().runs.finish(r.id, 'failed', { error_message: 'boom' }, event('run.failed', { scan_id: r.run_uuid, error: 'boom', steps_completed: -1 }));
    expect(done).toMatchObject({ status: 'failed', error_message: 'boom', completed_steps: 2, current_pid: 0, current_pid_start: '' });
    expect(done!.completed_at).not.toBeNull();
    expect(await s().runs.finish(r.id, 'completed', {}, event('run.completed', {}))).toBeUndefined();
    const events = (await s().events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 })).data;
    expect(events.map((e) => [e.topic, e.data])).toEqual([['run.failed', `{"scan_id":"${r.run_uuid}","error":"boom","steps_completed":2}`]]);
    // An empty data object still makes valid JSON.
    const e = await s().runs.create({ ...base, status: 'running' });
    await s().runs.finish(e.id, 'completed', {}, { ...event('run.completed', {}), run_id: e.run_uuid });
    expect((await s().events.list({ run_id: e.run_uuid }, { offset: 0, limit: 10 })).data[0]!.data).toBe('{"steps_completed":0}');
  });

  it('finish with artifacts: upserted in the same write, and even when the run was already finished', async () => {
    const r = await s().runs.create({ ...base, status: 'running', workspace: 'ws' });
    const event = (topic: string) => ({ topic, name: topic, source: 'executor', source_type: 'run', data_type: 'scan', data: {}, run_id: r.run_uuid, processed: true });
    const art = (name: string, size: number) => ({ run_id: r.id, workspace: 'ws', name, artifact_path: `/w/ws/${name}`, artifact_type: 'state_file', content_type: 'json', size_bytes: size, line_count: 1, optional: false, description: '' });
    const done = await s().runs.finish(r.id, 'completed', {}, event('run.completed'), [art('state-file', 10), art('state-completed', 11)]);
    expect(done?.status).toBe('completed');
    const listed = async () => (await s().artifacts.listByRun(r.id)).map((a) => [a.name, a.size_bytes]).sort();
    expect(await listed()).toEqual([['state-completed', 11], ['state-file', 10]]);
    // Finished already: no transition, no event, the artifacts still upserted (sizes refreshed, one row per key).
    expect(await s().runs.finish(r.id, 'failed', {}, event('run.failed'), [art('state-file', 20)])).toBeUndefined();
    expect(await listed()).toEqual([['state-completed', 11], ['state-file', 20]]);
    // Two rows of one key (which one statement cannot both write) are upserted one after the other.
    const r2 = await s().runs.create({ ...base, status: 'running', workspace: 'ws' });
    const dup = { ...art('report', 1), run_id: r2.id };
    expect((await s().runs.finish(r2.id, 'completed', {}, { ...event('run.completed'), run_id: r2.run_uuid }, [dup, { ...dup, size_bytes: 2 }]))?.status).toBe('completed');
    expect((await s().artifacts.listByRun(r2.id)).map((a) => a.size_bytes)).toEqual([2]);
    const events = (await s().events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 })).data.map((e) => e.topic);
    expect(events).toEqual(['run.completed']);
  });

  it('showPid: the last PID of a run wins, in order, and a finished run gets none', async () => {
    const a = await s().runs.create({ ...base, status: 'running' });
    const b = await s().runs.create({ ...base, status: 'running' });
    const done = await s().runs.create({ ...base, status: 'running' });
    await s().runs.transition(done.id, 'completed');
    // Calls close together (on PostgreSQL: one statement) and calls after them.
    await Promise.all([s().runs.showPid(a.id, 101, 'sa1'), s().runs.showPid(b.id, 201, 'sb'), s().runs.showPid(a.id, 102, 'sa2'), s().runs.showPid(done.id, 301, 'sd')]);
    expect(await s().runs.get(a.id)).toMatchObject({ current_pid: 102, current_pid_start: 'sa2' });
    expect(await s().runs.get(b.id)).toMatchObject({ current_pid: 201, current_pid_start: 'sb' });
    expect(await s().runs.get(done.id)).toMatchObject({ current_pid: 0, current_pid_start: '' });
    // Not awaited one by one: a later call never lands before an earlier one.
    const writes: Promise<void>[] = [];
    for (let i = 1; i <= 30; i++) {
      writes.push(s().runs.showPid(a.id, 1000 + i, `s${i}`));
      if (i % 7 === 0) await new Promise((r) => setTimeout(r, 12));
    }
    writes.push(s().runs.showPid(a.id, 0, ''));
    await Promise.all(writes);
    expect(await s().runs.get(a.id)).toMatchObject({ current_pid: 0, current_pid_start: '' });
  });

  it('an outside reader never sees a transaction’s uncommitted rows', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let wrote!: () => void;
    const written = new Promise<void>((r) => (wrote = r));
    let committed = false;
    const tx = s().tx(async () => {
      await s().runs.create({ ...base, workflow_name: 'in-tx' });
      wrote();
      await gate;
    }).then(() => (committed = true));
    // The transaction has written; read from outside its async context.
    await written;
    const outside = s().runs.list({ workflow_name: 'in-tx' }, { offset: 0, limit: 10 }).then((page) => ({ total: page.total, committed }));
    if (engine.name === 'postgresql') {
      // PostgreSQL answers at once with the committed state: no row while the transaction is open.
      expect((await outside).total).toBe(0);
      release();
      await tx;
    } else {
      // SQLite: the reader waits for the commit, then sees the row.
      await new Promise((r) => setTimeout(r, 20));
      release();
      await tx;
      const seen = await outside;
      expect(seen.total).toBe(seen.committed ? 1 : 0);
    }
    expect((await s().runs.list({ workflow_name: 'in-tx' }, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('groups, scope rows and delete', async () => {
    const a = await s().runs.create({ ...base, run_group_id: 'g' });
    const b = await s().runs.create({ ...base, run_group_id: 'g' });
    expect((await s().runs.byGroup('g')).map((r) => r.id)).toEqual([a.id, b.id]);
    expect(await s().runs.scopeStats(a.id)).toBeUndefined();
    await s().runs.initScope(a.id, [{ name: 'l', include: ['*.x'], exclude: [] }]);
    await s().runs.addScopeDrops(a.id, { dns: 2, http: 1 }, [{ source: 'dns', value: 'a' }]);
    await s().runs.addScopeDrops(a.id, { dns: 1 }, [{ source: 'dns', value: 'b' }]);
    await s().runs.addScopeDrops(999999, { dns: 1 }, []);
    expect(await s().runs.scopeStats(a.id)).toEqual({
      dropped: 4,
      by_source: { dns: 3, http: 1 },
      samples: [{ source: 'dns', value: 'a' }, { source: 'dns', value: 'b' }],
      layers: [{ name: 'l', include: ['*.x'], exclude: [] }],
    });
    await s().runs.delete(a.id);
    expect(await s().runs.get(a.id)).toBeUndefined();
    expect((await s().runs.byGroup('g')).map((r) => r.id)).toEqual([b.id]);
  });

  it('a failing transaction leaves nothing behind; a successful one commits', async () => {
    await expect(
      s().tx(async () => {
        await s().runs.create({ ...base, workflow_name: 'rolled-back' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await s().runs.list({ workflow_name: 'rolled-back' }, { offset: 0, limit: 10 })).total).toBe(0);
    const id = await s().tx(async () => (await s().runs.create({ ...base, workflow_name: 'kept' })).id);
    expect((await s().runs.get(id))?.workflow_name).toBe('kept');
  });
});
