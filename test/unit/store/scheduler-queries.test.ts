/** The store queries the scheduler relies on: tailing the event log and storing next_run. */
import { describe, expect, it } from 'vitest';
import { memStore } from './helpers.js';

describe('events.listAfter / maxId', () => {
  it('returns rows after an id, oldest first, limited, and the max id', () => {
    const store = memStore();
    expect(store.events.maxId()).toBe(0);
    expect(store.events.listAfter(0, 10)).toEqual([]);
    const ids = ['a', 'b', 'c', 'd'].map((t) => store.events.insert({ topic: t, processed: t === 'b' }).id);
    expect(store.events.maxId()).toBe(ids[3]);
    const after = store.events.listAfter(ids[0]!, 2);
    expect(after.map((e) => e.topic)).toEqual(['b', 'c']);
    expect(after[0]!.processed).toBe(true);
    expect(store.events.listAfter(ids[3]!, 10)).toEqual([]);
    expect(store.events.listAfter(ids[1]!, 0)).toEqual([]);
  });

  it('is a primary-key range scan, not a table scan', () => {
    const store = memStore();
    const plan = store.db.prepare('EXPLAIN QUERY PLAN SELECT * FROM event_logs WHERE id > ? ORDER BY id ASC LIMIT ?').all(5, 10) as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toMatch(/SEARCH event_logs USING INTEGER PRIMARY KEY \(rowid>\?\)/);
  });
});

describe('schedules.setNextRun', () => {
  it('stores and clears next_run without touching updated_at', () => {
    const store = memStore();
    const s = store.schedules.create({ name: 'n', workflow_name: 'w', schedule: '* * * * *' });
    expect(s.next_run).toBeNull();
    expect(store.schedules.setNextRun(s.id, '2030-01-01T00:00:00.000Z')).toBe(true);
    const after = store.schedules.get(s.id)!;
    expect(after.next_run).toBe('2030-01-01T00:00:00.000Z');
    expect(after.updated_at).toBe(s.updated_at);
    expect(store.schedules.setNextRun(s.id, null)).toBe(true);
    expect(store.schedules.get(s.id)!.next_run).toBeNull();
    expect(store.schedules.setNextRun('sch_missing', null)).toBe(false);
  });
});
