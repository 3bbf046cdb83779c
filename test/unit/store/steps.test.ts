import { describe, expect, it } from 'vitest';
import { STEP_STATUSES, type StepStatus, type Store } from '../../../src/store/index.js';
import { memStore, page } from './helpers.js';

function setup(store: Store, workspace = 'ws') {
  const run = store.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 't', status: 'running', workspace });
  const step = (name: string, extra: Partial<Parameters<Store['steps']['create']>[0]> = {}) =>
    store.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace, step_name: name, step_type: 'bash', ...extra });
  return { run, step };
}

const ALLOWED: Record<StepStatus, StepStatus[]> = {
  pending: ['running', 'skipped', 'failed'],
  running: ['completed', 'failed'],
  completed: [],
  failed: [],
  skipped: [],
};

describe('steps.transition', () => {
  for (const from of STEP_STATUSES) {
    for (const to of STEP_STATUSES) {
      const allowed = ALLOWED[from].includes(to);
      it(`${from} → ${to} is ${allowed ? 'allowed' : 'refused'}`, () => {
        const store = memStore();
        const { step } = setup(store);
        const id = step('s').id;
        if (from === 'running' || from === 'completed') store.steps.transition(id, 'running');
        if (from !== 'pending' && from !== 'running') expect(store.steps.transition(id, from)?.status).toBe(from);
        const before = store.steps.get(id)!;
        const after = store.steps.transition(id, to, { output: 'out' });
        if (allowed) {
          expect(after?.status).toBe(to);
          expect(after?.output).toBe('out');
        } else {
          expect(after).toBeUndefined();
          expect(store.steps.get(id)).toEqual(before);
        }
      });
    }
  }

  it('records timestamps, exports and duration', () => {
    const store = memStore();
    const { step } = setup(store);
    const created = step('s', { status: 'running', command: 'echo hi' });
    expect(created.started_at).not.toBeNull();
    expect(created.step_uuid).toMatch(/^[0-9a-f-]{36}$/);
    const done = store.steps.transition(created.id, 'completed', { exports: { count: 3 }, duration_ms: 1234 })!;
    expect(done.completed_at).not.toBeNull();
    expect(done.exports).toEqual({ count: 3 });
    expect(done.duration_ms).toBe(1234);
    expect(done.command).toBe('echo hi');
    const computed = store.steps.transition(step('t', { status: 'running' }).id, 'failed', { error_message: 'exit 1' })!;
    expect(computed.duration_ms).toBeGreaterThanOrEqual(0);
    expect(computed.error_message).toBe('exit 1');
    const skipped = step('u', { status: 'skipped' });
    expect(skipped.completed_at).not.toBeNull();
  });

  it('counts completed_steps once per step even when completion is reported twice', () => {
    const store = memStore();
    const { run, step } = setup(store);
    const ids = [step('a').id, step('b').id];
    // The engine's pattern: count a step only when its transition actually happened.
    const finish = (id: number) => {
      store.steps.transition(id, 'running');
      for (let attempt = 0; attempt < 2; attempt++) {
        if (store.steps.transition(id, 'completed')) store.runs.incrementCompletedSteps(run.id);
      }
    };
    ids.forEach(finish);
    expect(store.runs.get(run.id)?.completed_steps).toBe(2);
  });
});

describe('steps listing', () => {
  it('lists a run in order and filters the global listing with totals', () => {
    const store = memStore();
    const a = setup(store, 'alpha');
    const b = setup(store, 'beta');
    a.step('a1');
    a.step('a2', { status: 'running' });
    a.step('a3', { step_type: 'function' });
    b.step('b1', { status: 'running' });
    expect(store.steps.listByRun(a.run.id).map((s) => s.step_name)).toEqual(['a1', 'a2', 'a3']);
    const all = store.steps.list({}, page());
    expect(all.total).toBe(4);
    expect(all.data.map((s) => s.step_name)).toEqual(['b1', 'a3', 'a2', 'a1']);
    expect(store.steps.list({ workspace: 'alpha' }, page()).total).toBe(3);
    expect(store.steps.list({ status: 'running' }, page()).total).toBe(2);
    expect(store.steps.list({ step_type: 'function' }, page()).data.map((s) => s.step_name)).toEqual(['a3']);
    expect(store.steps.list({ run_id: b.run.id }, page()).total).toBe(1);
    expect(store.steps.list({ workspace: 'alpha', status: 'pending' }, page()).total).toBe(2);
    const p = store.steps.list({ workspace: 'alpha' }, page(1, 1));
    expect(p).toMatchObject({ total: 3 });
    expect(p.data.map((s) => s.step_name)).toEqual(['a2']);
  });

  it('failUnfinished fails pending and running steps only', () => {
    const store = memStore();
    const { run, step } = setup(store);
    step('p');
    step('r', { status: 'running' });
    const done = step('d', { status: 'running' });
    store.steps.transition(done.id, 'completed');
    expect(store.steps.failUnfinished(run.id, 'orphaned by a crash')).toBe(2);
    expect(store.steps.listByRun(run.id).map((s) => [s.step_name, s.status])).toEqual([
      ['p', 'failed'],
      ['r', 'failed'],
      ['d', 'completed'],
    ]);
    expect(store.steps.listByRun(run.id)[0]!.error_message).toBe('orphaned by a crash');
  });
});
