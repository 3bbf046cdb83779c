/**
 * The engine-side writers on the async store, on both engines (SQLite adapted, PostgreSQL when
 * its server answers): the run recorder's state changes and events, and the batched file imports.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../../src/engine/recorder.js';
import { importAssetsJsonl, importVulnsJsonl } from '../../../src/ingest/index.js';
import type { AsyncStore } from '../../../src/store/index.js';
import { ENGINES, useStore } from '../store/engines/engines.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../../fixtures/data/', import.meta.url)), name);
const all = { offset: 0, limit: 1000 };

/** Topics of a run's events, oldest first. */
async function topics(s: AsyncStore, runUuid: string): Promise<string[]> {
  return (await s.events.list({ run_id: runUuid }, all)).data.map((e) => e.topic).reverse();
}

describe.each(ENGINES)('run recorder on $name', (engine) => {
  const s = useStore(engine);

  it('writes start, steps (counted once per key), the live PID and the end, each with its event', async () => {
    const run = await s().runs.create({ workflow_name: 'recon', workflow_kind: 'module', target: 'example.com', workspace: 'example.com' });
    const rec = new RunRecorder(s(), run, 'cli');
    expect(await rec.started()).toBe(true);
    expect(rec.run.status).toBe('running');
    expect(rec.run.owner_pid).toBe(process.pid);

    const first = await rec.stepStarted({ moduleName: 'recon', stepName: 'enum', stepType: 'bash', stepIndex: 0, command: 'true', logFile: '' });
    expect((await s().steps.get(first))?.status).toBe('running');
    await rec.stepFinished(first, 'enum', 'completed', { output: 'ok', durationMs: 5, outputLines: 1, exitCode: 0, currentPid: process.pid }, 'recon\u0000enum');
    // The same key again (a loop step) is not counted twice.
    const again = await rec.stepStarted({ moduleName: 'recon', stepName: 'enum', stepType: 'bash', stepIndex: 0, command: 'true', logFile: '' });
    await rec.stepFinished(again, 'enum', 'completed', { output: '', durationMs: 1, outputLines: 0 }, 'recon\u0000enum');
    await rec.stepSkipped({ moduleName: 'recon', stepName: 'later', stepType: 'bash', stepIndex: 1, command: '' }, 'pre_condition is false', 'recon\u0000later');
    const mid = (await s().runs.get(run.id))!;
    expect(mid).toMatchObject({ completed_steps: 2, current_pid: process.pid });
    expect(await rec.currentStatus()).toBe('running');

    expect(await rec.finished('completed', { durationMs: 10, assetsFound: 3 })).toBe(true);
    expect(await rec.finished('failed', { durationMs: 11 })).toBe(false);
    expect(rec.run).toMatchObject({ status: 'completed', completed_steps: 2, current_pid: 0 });
    expect((await s().steps.listByRun(run.id)).map((x) => [x.step_name, x.status])).toEqual([
      ['enum', 'completed'],
      ['enum', 'completed'],
      ['later', 'skipped'],
    ]);
    expect(await topics(s(), run.run_uuid)).toEqual(['run.started', 'step.completed', 'step.completed', 'run.completed']);
  });

  it('does not start a run cancelled before it could', async () => {
    const run = await s().runs.create({ workflow_name: 'recon', workflow_kind: 'module', target: 'example.com' });
    await s().runs.transition(run.id, 'cancelled');
    const rec = new RunRecorder(s(), run, 'api');
    expect(await rec.started()).toBe(false);
    expect(rec.run.status).toBe('cancelled');
    expect(await topics(s(), run.run_uuid)).toEqual([]);
  });
});

describe.each(ENGINES)('file imports on $name', (engine) => {
  const s = useStore(engine);

  it('stores assets batch by batch with their events; a re-import changes nothing', async () => {
    const batches: number[] = [];
    const stats = await importAssetsJsonl(s(), 'example.com', fx('httpx-run1.jsonl'), { batchSize: 2, onBatch: (st) => batches.push(st.new) });
    expect(stats).toMatchObject({ new: 5, updated: 0, unchanged: 0, errors: 0, total: 5 });
    expect(batches).toEqual([2, 4, 5]);
    expect((await s().assets.list({ workspace: 'example.com' }, all)).total).toBe(5);
    const events = (await s().events.list({ workspace: 'example.com' }, all)).data.map((e) => e.topic);
    expect(events.filter((t) => t === 'asset.discovered')).toHaveLength(5);
    expect(events.filter((t) => t === 'asset.import')).toHaveLength(1);

    const again = await importAssetsJsonl(s(), 'example.com', fx('httpx-run1.jsonl'), { batchSize: 2 });
    expect(again).toMatchObject({ new: 0, updated: 0, unchanged: 5 });
    expect((await s().assets.list({ workspace: 'example.com' }, all)).total).toBe(5);
  });

  it('stores findings deduplicated by fingerprint', async () => {
    const first = await importVulnsJsonl(s(), 'example.com', fx('nuclei.jsonl'), { batchSize: 4 });
    expect(first.new).toBeGreaterThan(0);
    expect(first.errors).toBe(0);
    const again = await importVulnsJsonl(s(), 'example.com', fx('nuclei.jsonl'));
    expect(again).toMatchObject({ new: 0, unchanged: first.new + first.updated });
    expect((await s().vulns.list({ workspace: 'example.com' }, all)).total).toBe(first.new);
  });
});
