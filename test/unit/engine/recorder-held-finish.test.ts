/**
 * The recorder on PostgreSQL holds a step's end until the next step starts (one statement for
 * both); anything else writes it first (settle), and so does the next turn of the event loop.
 * SQLite writes each end at once. Checked against a store that logs the calls it gets.
 */
import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../../src/engine/recorder.js';
import type { AsyncStore, RunRecord } from '../../../src/store/index.js';

function loggingStore(engine: 'sqlite' | 'postgresql', opts: { failFinish?: boolean } = {}) {
  const calls: string[] = [];
  let nextId = 1;
  const step = (name: string) => ({ id: nextId++, step_name: name }) as never;
  const store = {
    engine,
    steps: {
      create: async (i: { step_name: string }) => (calls.push(`create ${i.step_name}`), step(i.step_name)),
      finish: async (id: number) => {
        calls.push(`finish ${id}`);
        if (opts.failFinish) throw new Error('database refused');
        return undefined;
      },
      finishThenCreate: async (f: { id: number }, i: { step_name: string }) => (calls.push(`finish ${f.id} + create ${i.step_name}`), step(i.step_name)),
    },
    runs: {
      finish: async () => (calls.push('run finish'), { id: 1, status: 'completed', completed_steps: 0 }),
      update: async () => calls.push('run update'),
    },
    tx: async (fn: () => Promise<unknown>) => fn(),
  } as unknown as AsyncStore;
  return { store, calls };
}

const run = { id: 1, run_uuid: 'r', target: 't', params: {}, workflow_name: 'wf', workspace: 'ws', completed_steps: 0, status: 'running' } as unknown as RunRecord;
const info = (name: string) => ({ moduleName: 'm', stepName: name, stepType: 'bash', stepIndex: 0, command: 'true', logFile: '' });
const done = { output: '', durationMs: 1, outputLines: 0 };

describe('a step end held for the next step start', () => {
  it('PostgreSQL: the end goes with the next start; the last one with settle(), before the run ends', async () => {
    const { store, calls } = loggingStore('postgresql');
    const rec = new RunRecorder(store, run, 'api');
    const told: string[] = [];
    rec.observe((s) => told.push(`${s.step} ${s.status}`));
    const a = await rec.stepStarted(info('a'));
    await rec.stepFinished(a, 'a', 'completed', done, 'a');
    expect(calls).toEqual(['create a']);
    expect(told).toEqual(['a running']);
    const b = await rec.stepStarted(info('b'));
    expect(calls).toEqual(['create a', `finish ${a} + create b`]);
    // Told in the order written: a's end, then b's start.
    expect(told).toEqual(['a running', 'a completed', 'b running']);
    expect(rec.run.completed_steps).toBe(1);
    await rec.stepFinished(b, 'b', 'completed', done, 'b');
    await rec.finished('completed', { durationMs: 1 });
    expect(calls).toEqual(['create a', `finish ${a} + create b`, `finish ${b}`, 'run finish']);
  });

  it('PostgreSQL: nothing else in this turn of the event loop: the end is written alone', async () => {
    const { store, calls } = loggingStore('postgresql');
    const rec = new RunRecorder(store, run, 'api');
    const a = await rec.stepStarted(info('a'));
    await rec.stepFinished(a, 'a', 'completed', done);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['create a', `finish ${a}`]);
    // The next start is then a plain insert.
    await rec.stepStarted(info('b'));
    expect(calls.at(-1)).toBe('create b');
  });

  it('PostgreSQL: a held end that fails alone fails the next write of the run', async () => {
    const { store } = loggingStore('postgresql', { failFinish: true });
    const rec = new RunRecorder(store, run, 'api');
    const a = await rec.stepStarted(info('a'));
    await rec.stepFinished(a, 'a', 'completed', done);
    await new Promise((r) => setImmediate(r));
    await expect(rec.settle()).rejects.toThrow(/database refused/);
    // Thrown once.
    await expect(rec.settle()).resolves.toBeUndefined();
  });

  it('PostgreSQL: with another step of the run still open, an end is written at once', async () => {
    const { store, calls } = loggingStore('postgresql');
    const rec = new RunRecorder(store, run, 'api');
    const parent = await rec.stepStarted(info('parent'));
    const child = await rec.stepStarted(info('child'));
    await rec.stepFinished(child, 'child', 'completed', done);
    expect(calls).toEqual(['create parent', 'create child', `finish ${child}`]);
    await rec.stepFinished(parent, 'parent', 'completed', done);
    expect(calls).toHaveLength(3);
    await rec.settle();
    expect(calls.at(-1)).toBe(`finish ${parent}`);
  });

  it('SQLite: each end is written at once', async () => {
    const { store, calls } = loggingStore('sqlite');
    const rec = new RunRecorder(store, run, 'api');
    const a = await rec.stepStarted(info('a'));
    await rec.stepFinished(a, 'a', 'completed', done);
    expect(calls).toEqual(['create a', `finish ${a}`]);
  });
});
