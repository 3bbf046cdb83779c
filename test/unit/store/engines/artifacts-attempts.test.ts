/** The artifacts and run attempts repositories on both engines. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';
import type { ArtifactInput } from '../../../../src/store/index.js';

const art = { run_id: 1, workspace: 'ws', name: 'report', artifact_path: '/w/report.md', artifact_type: 'report', content_type: 'text/markdown', size_bytes: 10, line_count: 2, optional: false, description: 'first' };

describe.each(ENGINES)('artifacts on $name', (engine) => {
  const s = useStore(engine);

  it('upserts on workspace, name, path and run, keeping a description when the new one is empty', async () => {
    const a = await s().artifacts.upsert(art);
    expect(a).toMatchObject({ ...art, optional: false });
    const b = await s().artifacts.upsert({ ...art, size_bytes: 99, optional: true, description: '', content_type: '' });
    expect(b).toMatchObject({ id: a.id, size_bytes: 99, optional: true, description: 'first', content_type: 'unknown', created_at: a.created_at });
    expect(await s().artifacts.get(a.id)).toEqual(b);
    const other = await s().artifacts.upsert({ ...art, run_id: 2 });
    expect(other.id).not.toBe(a.id);
    expect((await s().artifacts.listByRun(1)).map((x) => x.id)).toEqual([a.id]);
  });

  it('upserts many at once, in the order given, as one by one would (a repeated key included)', async () => {
    const a = (name: string, extra: Partial<ArtifactInput> = {}): ArtifactInput => ({ run_id: 7, workspace: 'ws', name, artifact_path: `/p/${name}`, artifact_type: 'state_file', content_type: 'log', size_bytes: 1, line_count: 1, optional: false, description: '', ...extra });
    expect(await s().artifacts.upsertMany([])).toEqual([]);
    const first = await s().artifacts.upsertMany([a('x', { description: 'kept' }), a('y'), a('z', { optional: true })]);
    expect(first.map((r) => [r.name, r.description, r.optional])).toEqual([['x', 'kept', false], ['y', '', false], ['z', '', true]]);
    const again = await s().artifacts.upsertMany([a('z', { size_bytes: 9 }), a('x', { size_bytes: 5 }), a('w')]);
    expect(again.map((r) => [r.name, r.id, r.size_bytes, r.description])).toEqual([['z', first[2]!.id, 9, ''], ['x', first[0]!.id, 5, 'kept'], ['w', again[2]!.id, 1, '']]);
    const twice = await s().artifacts.upsertMany([a('v', { description: 'd' }), a('v', { size_bytes: 3 })]);
    expect(twice[1]).toMatchObject({ id: twice[0]!.id, size_bytes: 3, description: 'd' });
    expect((await s().artifacts.listByRun(7)).length).toBe(5);
  });

  it('lists with a case-insensitive search with literal wildcards, and totals', async () => {
    await s().artifacts.upsert(art);
    await s().artifacts.upsert({ ...art, name: 'Sub_Domains', artifact_path: '/w/subs.txt', workspace: 'other', run_id: 987654 });
    await s().artifacts.upsert({ ...art, name: 'subxdomains', artifact_path: '/w/x.txt' });
    expect((await s().artifacts.list({}, { offset: 0, limit: 10 })).total).toBe(3);
    expect((await s().artifacts.list({ workspace: 'ws' }, { offset: 0, limit: 1 })).total).toBe(2);
    expect((await s().artifacts.list({ search: 'SUB_' }, { offset: 0, limit: 10 })).data.map((x) => x.name)).toEqual(['Sub_Domains']);
    expect((await s().artifacts.list({ search: '987654' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().artifacts.list({ org_uuid: 'none' }, { offset: 0, limit: 10 })).total).toBe(0);
  });
});

describe.each(ENGINES)('attempts on $name', (engine) => {
  const s = useStore(engine);

  it('records starts once, ends open attempts, totals and requeues distributed runs', async () => {
    const run = await s().runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', run_mode: 'distributed', status: 'running' });
    const u = run.run_uuid;
    expect(await s().attempts.start({ run_uuid: u, attempt: 1, worker_id: 'w1', cause: 'first', started_at: '2024-01-01T00:00:00.000Z' })).toBe(true);
    expect(await s().attempts.start({ run_uuid: u, attempt: 1, worker_id: 'w9', cause: 'retry' })).toBe(false);
    expect(await s().attempts.start({ run_uuid: u, attempt: 2, worker_id: 'w2', cause: 'stalled' })).toBe(true);
    expect(await s().attempts.start({ run_uuid: u, attempt: 3, worker_id: 'w2', cause: 'retry' })).toBe(true);
    expect(await s().attempts.endOlder(u, 3, 'stalled', 'superseded')).toBe(2);
    expect(await s().attempts.end(u, 1, 'completed')).toBe(false);
    expect(await s().attempts.end(u, 3, 'completed', { at: '2024-01-02T00:00:00.000Z' })).toBe(true);
    expect(await s().attempts.get(u, 1)).toEqual({ run_uuid: u, attempt: 1, worker_id: 'w1', started_at: '2024-01-01T00:00:00.000Z', ended_at: expect.any(String), outcome: 'stalled', cause: 'first', error: 'superseded' });
    expect((await s().attempts.listByRun(u)).map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(await s().attempts.latest(u)).toBe(3);
    expect(await s().attempts.latest('none')).toBe(0);
    expect(await s().attempts.totalsByWorker()).toEqual({ w1: { stalled: 1 }, w2: { stalled: 1, completed: 1 } });
    expect(await s().attempts.countByCause()).toEqual({ first: 1, stalled: 1, retry: 1 });
    expect(await s().attempts.requeueRun(u)).toBe(true);
    expect(await s().attempts.requeueRun(u)).toBe(false);
    expect((await s().runs.get(run.id))?.status).toBe('queued');
  });
});
