/**
 * Store queries added for distributed mode: distributed runs are never claimed by the local
 * queue nor reconciled as local runs, the master lists its unfinished ones, transitions can carry
 * the worker's timestamps, and imported steps/events are idempotent. Plans are index-served.
 */
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import type { StepImport } from '../../../src/store/steps.js';
import type { EventImport } from '../../../src/store/events.js';
import { memStore } from './helpers.js';

function run(s: Store, mode: 'local' | 'distributed', extra: { status?: 'queued' | 'running' | 'pending'; priority?: 'low' | 'normal' | 'high' | 'critical' } = {}) {
  return s.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: `${mode}.example.com`, run_mode: mode, status: extra.status ?? 'queued', priority: extra.priority });
}

function step(name: string, index: number, extra: Partial<StepImport> = {}): StepImport {
  return {
    workspace: 'ws', module_name: 'w', step_name: name, step_type: 'bash', step_index: index, status: 'completed', command: `echo ${name}`, output: name,
    error_message: '', exports: {}, duration_ms: 5, log_file: '', started_at: '2026-01-01T00:00:00.000Z', completed_at: '2026-01-01T00:00:01.000Z',
    created_at: '2026-01-01T00:00:00.000Z', ...extra,
  };
}

function event(id: string, topic = 'step.completed'): EventImport {
  return { topic, event_id: id, name: topic, source: 'executor', source_type: 'run', data_type: 'step', data: '{}', workspace: 'ws', workflow_name: 'w', processed: true, error: '', created_at: '2026-01-01T00:00:00.000Z' };
}

describe('runs: distributed runs stay out of the local queue', () => {
  it('listQueued and claimNext skip distributed runs, whatever their priority', () => {
    const s = memStore();
    run(s, 'distributed', { priority: 'critical' });
    const local = run(s, 'local', { priority: 'low' });
    expect(s.runs.listQueued(10, []).map((r) => r.id)).toEqual([local.id]);
    expect(s.runs.claimNext(1)?.id).toBe(local.id);
    expect(s.runs.claimNext(1)).toBeUndefined();
  });

  it('listActive (daemon-start reconciliation) ignores distributed runs; listUnfinishedByMode lists them', () => {
    const s = memStore();
    const d1 = run(s, 'distributed', { status: 'running' });
    const d2 = run(s, 'distributed');
    const l = run(s, 'local', { status: 'running' });
    run(s, 'distributed', { status: 'pending' });
    expect(s.runs.listActive().map((r) => r.id)).toEqual([l.id]);
    expect(s.runs.listUnfinishedByMode('distributed').map((r) => r.id)).toEqual([d1.id, d2.id]);
    expect(s.runs.listUnfinishedByMode('local').map((r) => r.id)).toEqual([l.id]);
  });

  it('transition records the time it happened elsewhere', () => {
    const s = memStore();
    const r = run(s, 'distributed');
    const started = s.runs.transition(r.id, 'running', { at: '2026-01-01T00:00:00.000Z' })!;
    expect(started.started_at).toBe('2026-01-01T00:00:00.000Z');
    const done = s.runs.transition(r.id, 'completed', { at: '2026-01-01T00:05:00.000Z' })!;
    expect(done.completed_at).toBe('2026-01-01T00:05:00.000Z');
    // Without `at` it is now, as before.
    const r2 = run(s, 'local');
    expect(Date.parse(s.runs.transition(r2.id, 'running')!.started_at!)).toBeGreaterThan(Date.parse('2026-01-02'));
  });
});

describe('steps.importForRun', () => {
  it('inserts with the worker timestamps, then updates instead of duplicating', () => {
    const s = memStore();
    const r = run(s, 'distributed', { status: 'running' });
    const steps = [step('a', 0), step('b', 1), step('b', 1, { output: 'second b' })];
    expect(s.steps.importForRun(r.id, r.run_uuid, steps)).toEqual({ inserted: 3, updated: 0 });
    expect(s.steps.importForRun(r.id, r.run_uuid, steps.map((x) => ({ ...x, output: `${x.output}!` })))).toEqual({ inserted: 0, updated: 3 });
    const rows = s.steps.listByRun(r.id);
    expect(rows.map((x) => [x.step_name, x.output])).toEqual([['a', 'a!'], ['b', 'b!'], ['b', 'second b!']]);
    expect(rows[0]).toMatchObject({ run_uuid: r.run_uuid, started_at: '2026-01-01T00:00:00.000Z', completed_at: '2026-01-01T00:00:01.000Z', duration_ms: 5, status: 'completed' });
  });

  it('adds steps that were not there before', () => {
    const s = memStore();
    const r = run(s, 'distributed', { status: 'running' });
    s.steps.importForRun(r.id, r.run_uuid, [step('a', 0)]);
    expect(s.steps.importForRun(r.id, r.run_uuid, [step('a', 0), step('b', 1)])).toEqual({ inserted: 1, updated: 1 });
    expect(s.steps.listByRun(r.id)).toHaveLength(2);
  });
});

describe('events.importForRun', () => {
  it('keeps the worker event ids and skips ones already stored', () => {
    const s = memStore();
    const r = run(s, 'distributed');
    expect(s.events.importForRun(r.run_uuid, [event('e1', 'run.started'), event('e2')])).toBe(2);
    expect(s.events.importForRun(r.run_uuid, [event('e1', 'run.started'), event('e2'), event('e3', 'run.completed')])).toBe(1);
    const rows = s.events.list({ run_id: r.run_uuid }, { offset: 0, limit: 10 }).data;
    expect(rows.map((e) => e.event_id).sort()).toEqual(['e1', 'e2', 'e3']);
    expect(rows.every((e) => e.run_id === r.run_uuid && e.created_at === '2026-01-01T00:00:00.000Z')).toBe(true);
  });
});

describe('query plans of the distributed queries', () => {
  function plans(s: Store, fn: () => void): string[][] {
    const db = s.db as Database.Database;
    const original = db.prepare.bind(db);
    const seen: { sql: string; args: unknown[] }[] = [];
    db.prepare = ((sql: string) => {
      const stmt = original(sql);
      return new Proxy(stmt, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop === 'all' || prop === 'get' || prop === 'run') return (...args: unknown[]) => (seen.push({ sql, args }), (value as (...a: unknown[]) => unknown).apply(target, args));
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    }) as Database.Database['prepare'];
    try {
      fn();
    } finally {
      db.prepare = original;
    }
    return seen.filter((q) => /^\s*(SELECT|UPDATE)/i.test(q.sql)).map((q) => (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.args) as { detail: string }[]).map((r) => r.detail));
  }

  it('never scan a whole table', () => {
    const s = memStore();
    const r = run(s, 'distributed', { status: 'running' });
    for (const fn of [
      () => s.runs.listUnfinishedByMode('distributed'),
      () => s.runs.listQueued(10, []),
      () => s.runs.listActive(),
      () => s.runs.claimNext(1),
      () => s.steps.importForRun(r.id, r.run_uuid, [step('a', 0)]),
      () => s.events.importForRun(r.run_uuid, [event('x')]),
    ]) {
      for (const p of plans(s, fn)) expect(p.filter((d) => /^SCAN (runs|step_results|event_logs)\b/.test(d)), p.join('\n')).toEqual([]);
    }
  });
});
