/** The step results repository on both engines. */
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../../../src/store/async.js';
import { ENGINES, useStore } from './engines.js';

async function run(s: AsyncStore, workspace = 'ws') {
  return s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', workspace });
}

describe.each(ENGINES)('steps on $name', (engine) => {
  const s = useStore(engine);

  it('finish: the step, its event and its run’s count and PID in one write; the event even when the step cannot move', async () => {
    const r = await run(s());
    await s().runs.transition(r.id, 'running');
    const st = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'a', step_type: 'bash', status: 'running' });
    const event = (topic: string) => ({ topic, name: 'a', source: 'executor', source_type: 'run', data_type: 'step', data: { step_name: 'a' }, run_id: r.run_uuid, workspace: 'ws', processed: true });
    const done = await s().steps.finish(st.id, 'completed', { output: 'out', exports: { k: 1 }, duration_ms: 12, command: 'echo a' }, { event: event('step.completed'), runId: r.id, count: true, pid: { current_pid: 4242, current_pid_start: 'then' } });
    expect(done).toMatchObject({ id: st.id, status: 'completed', output: 'out', exports: { k: 1 }, duration_ms: 12, command: 'echo a' });
    expect(done!.completed_at).not.toBeNull();
    expect(await s().steps.get(st.id)).toEqual(done);
    expect(await s().runs.get(r.id)).toMatchObject({ completed_steps: 1, current_pid: 4242, current_pid_start: 'then' });
    // Already finished: the step stays as it was; the event is still written; no count, PID cleared.
    expect(await s().steps.finish(st.id, 'failed', { error_message: 'late' }, { event: event('step.failed'), runId: r.id, pid: { current_pid: 0, current_pid_start: '' } })).toBeUndefined();
    expect((await s().steps.get(st.id))?.status).toBe('completed');
    expect(await s().runs.get(r.id)).toMatchObject({ completed_steps: 1, current_pid: 0, current_pid_start: '' });
    // Neither count nor PID: the run row is untouched.
    const before = await s().runs.get(r.id);
    const b = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'b', step_type: 'bash', status: 'running' });
    expect((await s().steps.finish(b.id, 'failed', { error_message: 'x' }, { event: event('step.failed'), runId: r.id }))?.status).toBe('failed');
    expect(await s().runs.get(r.id)).toEqual(before);
    const topics = (await s().events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 })).data.map((e) => [e.topic, e.data, e.workspace]);
    expect(topics.reverse()).toEqual([
      ['step.completed', '{"step_name":"a"}', 'ws'],
      ['step.failed', '{"step_name":"a"}', 'ws'],
      ['step.failed', '{"step_name":"a"}', 'ws'],
    ]);
    // A finished run never gets a PID back.
    await s().runs.transition(r.id, 'completed');
    const c = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'c', step_type: 'bash', status: 'running' });
    await s().steps.finish(c.id, 'completed', {}, { event: event('step.completed'), runId: r.id, pid: { current_pid: 99, current_pid_start: 'x' } });
    expect(await s().runs.get(r.id)).toMatchObject({ current_pid: 0, current_pid_start: '' });
  });

  it('finishThenCreate: one step’s end and the next step’s start in one write, the end at its own time', async () => {
    const r = await run(s());
    await s().runs.transition(r.id, 'running');
    const a = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'a', step_type: 'bash', status: 'running' });
    const event = { topic: 'step.completed', name: 'a', source: 'executor', source_type: 'run', data_type: 'step', data: { step_name: 'a' }, run_id: r.run_uuid, workspace: 'ws', processed: true };
    const ended = '2031-05-06T07:08:09.010Z';
    const b = await s().steps.finishThenCreate(
      { id: a.id, to: 'completed', patch: { output: 'A', duration_ms: 5, at: ended }, writes: { event, runId: r.id, count: true, pid: { current_pid: 0, current_pid_start: '' } } },
      { run_id: r.id, run_uuid: r.run_uuid, step_name: 'b', step_type: 'bash', step_index: 1, status: 'running', command: 'echo b' },
    );
    expect(b).toMatchObject({ step_name: 'b', status: 'running', command: 'echo b', step_index: 1 });
    expect(b.started_at).not.toBeNull();
    expect(await s().steps.get(a.id)).toMatchObject({ status: 'completed', output: 'A', duration_ms: 5, completed_at: ended });
    expect((await s().steps.listByRun(r.id)).map((x) => [x.step_name, x.status])).toEqual([['a', 'completed'], ['b', 'running']]);
    expect((await s().runs.get(r.id))?.completed_steps).toBe(1);
    expect((await s().events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 })).data.map((e) => e.topic)).toEqual(['step.completed']);
    // A next step the database refuses leaves the end unwritten too: one write, both or neither.
    const c = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'c', step_type: 'bash', status: 'running' });
    await expect(s().steps.finishThenCreate({ id: c.id, to: 'completed', patch: {}, writes: { event, runId: r.id, count: true } }, { run_id: r.id, run_uuid: r.run_uuid, step_name: null as never, step_type: 'bash', status: 'running' })).rejects.toThrow();
    expect((await s().steps.get(c.id))?.status).toBe('running');
    expect((await s().runs.get(r.id))?.completed_steps).toBe(1);
  });

  it('runningNamesOf: the running steps of several runs in one query, in start order', async () => {
    const [r1, r2, r3] = [await run(s()), await run(s()), await run(s())];
    for (const [r, name, status] of [[r1, 'a', 'running'], [r2, 'b', 'running'], [r1, 'c', 'running'], [r1, 'd', 'pending'], [r3, 'e', 'skipped']] as const) {
      await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: name, step_type: 'bash', status });
    }
    expect(await s().steps.runningNamesOf([r1.id, r2.id, r3.id, 999999])).toEqual({ [r1.id]: ['a', 'c'], [r2.id]: ['b'] });
    expect(await s().steps.runningNamesOf([])).toEqual({});
  });

  it('creates, transitions with sticky terminal states and computes durations', async () => {
    const r = await run(s());
    const p = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'a', step_type: 'bash' });
    expect(p).toMatchObject({ status: 'pending', started_at: null, completed_at: null, exports: {}, duration_ms: 0, workspace: '' });
    const skipped = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'b', step_type: 'bash', status: 'skipped' });
    expect(skipped.completed_at).not.toBeNull();
    await expect(s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'c', step_type: 'bash', status: 'failed' as never })).rejects.toThrow(/cannot be created/);
    expect(await s().steps.transition(p.id, 'completed')).toBeUndefined();
    const running = await s().steps.transition(p.id, 'running', { command: 'echo hi' });
    expect(running).toMatchObject({ status: 'running', command: 'echo hi' });
    expect(await s().steps.runningNames(r.id)).toEqual(['a']);
    const done = await s().steps.transition(p.id, 'completed', { output: 'out', exports: { k: 1 } });
    expect(done).toMatchObject({ status: 'completed', output: 'out', exports: { k: 1 }, command: 'echo hi' });
    const elapsed = Date.parse(done!.completed_at!) - Date.parse(done!.started_at!);
    expect(done!.duration_ms).toBe(elapsed);
    expect(await s().steps.transition(p.id, 'failed')).toBeUndefined();
    const q = await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'd', step_type: 'bash', status: 'running' });
    expect((await s().steps.transition(q.id, 'failed', { duration_ms: 1234, error_message: 'x' }))?.duration_ms).toBe(1234);
    expect(await s().steps.get(q.id)).toMatchObject({ status: 'failed', error_message: 'x' });
    expect((await s().steps.listByRun(r.id)).map((x) => x.step_name)).toEqual(['a', 'b', 'd']);
  });

  it('lists with filters, totals and newest first, including the org filter', async () => {
    const r1 = await run(s(), 'one');
    const r2 = await run(s(), 'two');
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push((await s().steps.create({ run_id: r1.id, run_uuid: r1.run_uuid, workspace: 'one', step_name: `s${i}`, step_type: i % 2 ? 'bash' : 'function' })).id);
    await s().steps.create({ run_id: r2.id, run_uuid: r2.run_uuid, workspace: 'two', step_name: 'x', step_type: 'bash' });
    const page = await s().steps.list({ workspace: 'one' }, { offset: 1, limit: 2 });
    expect(page.total).toBe(4);
    expect(page.data.map((x) => x.id)).toEqual([ids[2], ids[1]]);
    expect((await s().steps.list({ step_type: 'bash' }, { offset: 0, limit: 10 })).total).toBe(3);
    expect((await s().steps.list({ run_id: r2.id }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().steps.list({ org_uuid: '00000000-0000-0000-0000-000000000001' }, { offset: 0, limit: 10 })).total).toBe(5);
    expect((await s().steps.list({ org_uuid: 'nope' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().steps.list({ org_uuid: [] }, { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('fails unfinished steps and imports a run idempotently', async () => {
    const r = await run(s());
    await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'a', step_type: 'bash', status: 'running' });
    await s().steps.create({ run_id: r.id, run_uuid: r.run_uuid, step_name: 'b', step_type: 'bash', status: 'skipped' });
    expect(await s().steps.failUnfinished(r.id, 'lost')).toBe(1);
    const r2 = await run(s());
    const step = (name: string, status: 'completed' | 'failed') => ({
      workspace: 'ws', module_name: 'm', step_name: name, step_type: 'bash', step_index: 0, status, command: 'c', output: 'o', error_message: '',
      exports: { n: name }, duration_ms: 10.4, log_file: '', started_at: '2024-01-01T00:00:00.000Z', completed_at: '2024-01-01T00:00:01.000Z', created_at: '2024-01-01T00:00:00.000Z',
    });
    expect(await s().steps.importForRun(r2.id, r2.run_uuid, [step('a', 'completed'), step('a', 'completed'), step('b', 'failed')])).toEqual({ inserted: 3, updated: 0 });
    expect(await s().steps.importForRun(r2.id, r2.run_uuid, [step('a', 'failed'), step('a', 'completed'), step('b', 'completed'), step('c', 'completed')])).toEqual({ inserted: 1, updated: 3 });
    const rows = await s().steps.listByRun(r2.id);
    expect(rows.map((x) => [x.step_name, x.status, x.duration_ms])).toEqual([['a', 'failed', 10], ['a', 'completed', 10], ['b', 'completed', 10], ['c', 'completed', 10]]);
    expect(rows[0]!.exports).toEqual({ n: 'a' });
    expect(rows[0]!.created_at).toBe('2024-01-01T00:00:00.000Z');
  });
});
