import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { memStore } from './helpers.js';

const base = { workflow_name: 'wf', workflow_kind: 'module', target: 'example.com' };

function queued(store: Store, priority: 'low' | 'normal' | 'high' | 'critical', group = ''): number {
  return store.runs.create({ ...base, status: 'queued', priority, run_group_id: group }).id;
}

describe('runs.listQueued', () => {
  it('orders by priority (critical first) then FIFO, and only lists queued runs', () => {
    const store = memStore();
    const low = queued(store, 'low');
    const n1 = queued(store, 'normal');
    const crit = queued(store, 'critical');
    const n2 = queued(store, 'normal');
    const high = queued(store, 'high');
    store.runs.create({ ...base, status: 'pending', priority: 'critical' });
    store.runs.create({ ...base, status: 'running', priority: 'critical' });
    const cancelled = queued(store, 'critical');
    store.runs.transition(cancelled, 'cancelled');
    expect(store.runs.listQueued(50, []).map((r) => r.id)).toEqual([crit, high, n1, n2, low]);
  });

  it('honours the limit', () => {
    const store = memStore();
    const ids = [queued(store, 'normal'), queued(store, 'normal'), queued(store, 'normal')];
    expect(store.runs.listQueued(2, []).map((r) => r.id)).toEqual(ids.slice(0, 2));
    expect(store.runs.listQueued(0, [])).toEqual([]);
  });

  it('skips runs of excluded groups but keeps ungrouped runs and other groups', () => {
    const store = memStore();
    const a1 = queued(store, 'high', 'job-a');
    const b1 = queued(store, 'normal', 'job-b');
    const none = queued(store, 'low');
    const a2 = queued(store, 'critical', 'job-a');
    expect(store.runs.listQueued(10, ['job-a']).map((r) => r.id)).toEqual([b1, none]);
    expect(store.runs.listQueued(10, ['job-a', 'job-b']).map((r) => r.id)).toEqual([none]);
    expect(store.runs.listQueued(10, []).map((r) => r.id)).toEqual([a2, a1, b1, none]);
    // A group name is data, never SQL.
    expect(store.runs.listQueued(10, ["x') OR 1=1 --"]).map((r) => r.id)).toEqual([a2, a1, b1, none]);
  });

  it('is served by idx_runs_queue without a sort step', () => {
    const store = memStore();
    for (let i = 0; i < 20; i++) queued(store, i % 2 ? 'high' : 'low', `g${i % 3}`);
    // Capture the SQL the repository really prepares (first use after the wrap).
    const db = store.db as unknown as { prepare: (sql: string) => unknown };
    const original = db.prepare.bind(db);
    const seen: string[] = [];
    db.prepare = (sql: string) => {
      seen.push(sql);
      return original(sql);
    };
    try {
      store.runs.listQueued(50, ['g1']);
    } finally {
      db.prepare = original;
    }
    const sql = seen.find((q) => /FROM runs/.test(q));
    expect(sql).toBeDefined();
    const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('["g1"]', 50) as { detail: string }[]).map((r) => r.detail);
    expect(plan.some((d) => /USING INDEX idx_runs_queue/.test(d)), plan.join('\n')).toBe(true);
    expect(plan.some((d) => /TEMP B-TREE FOR ORDER BY/.test(d)), plan.join('\n')).toBe(false);
    expect(plan.some((d) => /^SCAN runs$/.test(d)), plan.join('\n')).toBe(false);
  });
});
