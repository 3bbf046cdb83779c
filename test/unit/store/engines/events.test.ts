/** The event log repository on both engines. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';

describe.each(ENGINES)('events on $name', (engine) => {
  const s = useStore(engine);

  it('inserts, reads, lists with filters and marks processed', async () => {
    const e1 = await s().events.insert({ topic: 'run.started', data: { a: 1 }, workspace: 'w1', run_id: 'r1' });
    expect(e1).toMatchObject({ topic: 'run.started', data: '{"a":1}', processed: false, processed_at: null, error: '', name: '' });
    const e2 = await s().events.insert({ topic: 'run.done', data: 'text', workspace: 'w2', processed: true });
    expect(e2.processed).toBe(true);
    expect(e2.processed_at).toBe(e2.created_at);
    const e3 = await s().events.insert({ topic: 'run.started', workspace: 'w1' });
    expect(e3.data).toBe('{}');
    expect(await s().events.get(e1.id)).toEqual(e1);
    const started = await s().events.list({ topic: 'run.started' }, { offset: 0, limit: 1 });
    expect(started).toEqual({ total: 2, data: [e3] });
    expect((await s().events.list({ processed: true }, { offset: 0, limit: 10 })).data.map((e) => e.id)).toEqual([e2.id]);
    expect((await s().events.list({ from: e1.created_at, to: e3.created_at }, { offset: 0, limit: 10 })).total).toBe(3);
    expect((await s().events.list({ from: '2999-01-01' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().events.list({ org_uuid: [] }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().events.listUnprocessed(10)).map((e) => e.id)).toEqual([e1.id, e3.id]);
    await s().events.markProcessed(e1.id, 'hook failed');
    expect(await s().events.get(e1.id)).toMatchObject({ processed: true, error: 'hook failed' });
    expect((await s().events.listUnprocessed(10)).map((e) => e.id)).toEqual([e3.id]);
    expect((await s().events.listAfter(e1.id, 1)).map((e) => e.id)).toEqual([e2.id]);
    expect(await s().events.maxId()).toBe(e3.id);
  });

  it('imports a run’s events once, whatever the repetitions', async () => {
    expect(await s().events.maxId()).toBe(0);
    const ev = (id: string) => ({ topic: 't', event_id: id, name: 'n', source: 's', source_type: 'st', data_type: 'dt', data: '{}', workspace: 'w', workflow_name: 'wf', processed: false, error: '', created_at: '2024-01-01T00:00:00.000Z' });
    expect(await s().events.importForRun('run-1', [ev('a'), ev('b'), ev('a'), ev('')])).toBe(2);
    expect(await s().events.importForRun('run-1', [ev('a'), ev('c')])).toBe(1);
    expect(await s().events.importForRun('run-2', [ev('a')])).toBe(1);
    const page = await s().events.list({ run_id: 'run-1' }, { offset: 0, limit: 10 });
    expect(page.data.map((e) => e.event_id)).toEqual(['c', 'b', 'a']);
    expect(page.data[0]!.created_at).toBe('2024-01-01T00:00:00.000Z');
  });
});
