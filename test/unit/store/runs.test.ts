import { describe, expect, it } from 'vitest';
import { openStore, RUN_STATUSES, type RunStatus, type Store } from '../../../src/store/index.js';
import { fileStore, memStore, onCleanup, page } from './helpers.js';

const base = { workflow_name: 'subdomain-enum', workflow_kind: 'module', target: 'example.com' };

/** Puts a fresh run in `status` through the allowed path. */
function runIn(store: Store, status: RunStatus): number {
  if (status === 'pending' || status === 'queued' || status === 'running') return store.runs.create({ ...base, status }).id;
  const id = store.runs.create({ ...base, status: 'running' }).id;
  expect(store.runs.transition(id, status)).toBeDefined();
  return id;
}

const ALLOWED: Record<RunStatus, RunStatus[]> = {
  pending: ['queued', 'running', 'cancelled', 'failed'],
  queued: ['running', 'cancelled', 'failed'],
  running: ['completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

describe('runs.create / get / find', () => {
  it('fills defaults and parses JSON columns', () => {
    const store = memStore();
    const run = store.runs.create({ ...base, params: { threads: '10' }, options: { dry: true }, hooks_enabled: true, priority: 'critical' });
    expect(run).toMatchObject({
      status: 'queued',
      params: { threads: '10' },
      options: { dry: true },
      hooks_enabled: true,
      priority: 'critical',
      priority_rank: 4,
      run_mode: 'local',
      trigger_type: 'manual',
      started_at: null,
      completed_at: null,
      current_pid: 0,
    });
    expect(run.run_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.created_at).toBe(run.updated_at);
    expect(store.runs.create({ ...base, status: 'running' }).started_at).not.toBeNull();
  });

  it('finds by numeric id, digit string or uuid', () => {
    const store = memStore();
    const run = store.runs.create({ ...base, run_uuid: 'c0ffee00-0000-4000-8000-000000000001' });
    expect(store.runs.find(run.id)?.run_uuid).toBe(run.run_uuid);
    expect(store.runs.find(String(run.id))?.id).toBe(run.id);
    expect(store.runs.find(run.run_uuid)?.id).toBe(run.id);
    expect(store.runs.getByUuid(run.run_uuid)?.id).toBe(run.id);
    expect(store.runs.find('999')).toBeUndefined();
    expect(store.runs.find('nope')).toBeUndefined();
    expect(store.runs.get(999)).toBeUndefined();
  });

  it('refuses to create a run in a terminal state or with an unknown priority', () => {
    const store = memStore();
    expect(() => store.runs.create({ ...base, status: 'completed' as 'running' })).toThrow(/cannot be created/);
    expect(() => store.runs.create({ ...base, priority: 'medium' as 'normal' })).toThrow(/priority/);
  });
});

describe('runs.transition', () => {
  for (const from of RUN_STATUSES) {
    for (const to of RUN_STATUSES) {
      const allowed = ALLOWED[from].includes(to);
      it(`${from} → ${to} is ${allowed ? 'allowed' : 'refused'}`, () => {
        const store = memStore();
        const id = runIn(store, from);
        const before = store.runs.get(id)!;
        const after = store.runs.transition(id, to, { error_message: 'why' });
        if (allowed) {
          expect(after?.status).toBe(to);
          expect(after?.error_message).toBe('why');
          expect(after!.updated_at >= before.updated_at).toBe(true);
        } else {
          expect(after).toBeUndefined();
          expect(store.runs.get(id)).toEqual(before);
        }
      });
    }
  }

  it('sets started_at once, and completed_at with current_pid=0 on terminal states', () => {
    const store = memStore();
    const id = store.runs.create({ ...base, status: 'pending' }).id;
    store.runs.update(id, { current_pid: 4242 });
    const queued = store.runs.transition(id, 'queued')!;
    expect(queued.started_at).toBeNull();
    const running = store.runs.transition(id, 'running')!;
    expect(running.started_at).not.toBeNull();
    expect(running.current_pid).toBe(4242);
    const done = store.runs.transition(id, 'completed')!;
    expect(done.started_at).toBe(running.started_at);
    expect(done.completed_at).not.toBeNull();
    expect(done.current_pid).toBe(0);
    // a PID write racing with the terminal transition cannot bring a process back
    store.runs.update(id, { current_pid: 5151, current_pid_start: '123' });
    expect(store.runs.get(id)).toMatchObject({ current_pid: 0, current_pid_start: '' });
  });

  it('keeps terminal states sticky: a late failure cannot overwrite a cancel', () => {
    const store = memStore();
    const id = runIn(store, 'running');
    expect(store.runs.transition(id, 'cancelled', { error_message: 'Cancelled by user' })?.status).toBe('cancelled');
    expect(store.runs.transition(id, 'failed', { error_message: 'context canceled' })).toBeUndefined();
    expect(store.runs.transition(id, 'completed')).toBeUndefined();
    expect(store.runs.get(id)).toMatchObject({ status: 'cancelled', error_message: 'Cancelled by user' });
  });

  it('lets only one of two connections win the same transition', () => {
    const { store: a, file } = fileStore();
    const b = openStore(file);
    onCleanup(() => b.close());
    const id = runIn(a, 'running');
    const seenByB = b.runs.get(id)!;
    expect(seenByB.status).toBe('running');
    expect(a.runs.transition(id, 'cancelled')).toBeDefined();
    // b still believes the run is running, but its conditional update finds nothing to change.
    expect(b.runs.transition(id, 'completed')).toBeUndefined();
    expect(b.runs.get(id)?.status).toBe('cancelled');
  });
});

describe('runs.claimNext', () => {
  it('claims by priority, then first in first out, and skips non-queued runs', () => {
    const store = memStore();
    const mk = (target: string, priority: 'low' | 'normal' | 'high' | 'critical', status: 'queued' | 'pending' = 'queued') =>
      store.runs.create({ ...base, target, priority, status }).id;
    mk('n1', 'normal');
    mk('l1', 'low');
    mk('h1', 'high');
    mk('n2', 'normal');
    mk('c1', 'critical');
    mk('h2', 'high');
    mk('p1', 'critical', 'pending');
    const order: string[] = [];
    for (let r = store.runs.claimNext(77); r; r = store.runs.claimNext(77)) {
      expect(r.status).toBe('running');
      expect(r.owner_pid).toBe(77);
      expect(r.started_at).not.toBeNull();
      order.push(r.target);
    }
    expect(order).toEqual(['c1', 'h1', 'h2', 'n1', 'n2', 'l1']);
    expect(store.runs.find(String(store.runs.list({ target: 'p1' }, page()).data[0]!.id))?.status).toBe('pending');
  });
});

describe('runs bookkeeping', () => {
  it('update patches only the given columns and never the status', () => {
    const store = memStore();
    const id = runIn(store, 'running');
    store.runs.update(id, { total_steps: 5, workspace: 'ws', params: { a: 'b' }, options: { x: 1 }, owner_pid: 9, run_group_id: 'job1' });
    expect(store.runs.get(id)).toMatchObject({ total_steps: 5, workspace: 'ws', params: { a: 'b' }, options: { x: 1 }, owner_pid: 9, run_group_id: 'job1', status: 'running' });
    store.runs.update(id, {});
    expect(store.runs.get(id)?.total_steps).toBe(5);
  });

  it('incrementCompletedSteps adds exactly one per call', () => {
    const store = memStore();
    const id = runIn(store, 'running');
    store.runs.incrementCompletedSteps(id);
    store.runs.incrementCompletedSteps(id);
    expect(store.runs.get(id)?.completed_steps).toBe(2);
  });

  it('listActive returns running runs and runs that still record a pid', () => {
    const store = memStore();
    const running = runIn(store, 'running');
    const queuedWithPid = runIn(store, 'queued');
    store.runs.update(queuedWithPid, { current_pid: 123 });
    runIn(store, 'completed');
    runIn(store, 'pending');
    expect(store.runs.listActive().map((r) => r.id).sort()).toEqual([running, queuedWithPid].sort());
  });

  it('countByStatus and delete (with steps and artifacts)', () => {
    const store = memStore();
    const id = runIn(store, 'running');
    runIn(store, 'running');
    runIn(store, 'failed');
    expect(store.runs.countByStatus()).toEqual({ running: 2, failed: 1 });
    const run = store.runs.get(id)!;
    store.steps.create({ run_id: id, run_uuid: run.run_uuid, step_name: 's', step_type: 'bash' });
    store.artifacts.upsert({ run_id: id, workspace: 'w', name: 'a', artifact_path: '/x', artifact_type: 'output', content_type: 'txt', size_bytes: 1, line_count: 1, optional: false, description: '' });
    store.runs.delete(id);
    expect(store.runs.get(id)).toBeUndefined();
    expect(store.steps.listByRun(id)).toEqual([]);
    expect(store.artifacts.listByRun(id)).toEqual([]);
  });
});

describe('runs.list', () => {
  it('filters exactly (target by substring), sorts newest first and paginates with totals', () => {
    const store = memStore();
    for (let i = 0; i < 7; i++) {
      store.runs.create({ ...base, target: `t${i}.example.com`, workspace: i % 2 ? 'odd' : 'even', workflow_name: i < 3 ? 'a' : 'b', run_group_id: i < 2 ? 'g1' : '' });
    }
    const all = store.runs.list({}, page());
    expect(all.total).toBe(7);
    expect(all.data.map((r) => r.target)[0]).toBe('t6.example.com');
    const ids = all.data.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));

    expect(store.runs.list({ workspace: 'odd' }, page()).total).toBe(3);
    expect(store.runs.list({ workflow_name: 'a' }, page()).total).toBe(3);
    expect(store.runs.list({ run_group_id: 'g1' }, page()).total).toBe(2);
    expect(store.runs.list({ target: 't3' }, page()).data.map((r) => r.target)).toEqual(['t3.example.com']);
    expect(store.runs.list({ target: '%' }, page()).total).toBe(0); // wildcards are literal
    expect(store.runs.list({ status: 'queued', workspace: 'even', workflow_name: 'b' }, page()).total).toBe(2);

    const p2 = store.runs.list({}, page(2, 2));
    expect(p2.total).toBe(7);
    expect(p2.data.map((r) => r.id)).toEqual(ids.slice(2, 4));
    expect(store.runs.list({}, page(10, 5))).toEqual({ data: [], total: 7 });
    expect(store.runs.list({}, page(0, 0)).data).toEqual([]);

    expect(store.runs.byGroup('g1').map((r) => r.target)).toEqual(['t0.example.com', 't1.example.com']);
  });
});
