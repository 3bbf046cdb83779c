/**
 * Attempt fencing for workers writing straight into a shared database (migration 019): claimRun
 * on both engines, and on PostgreSQL the database itself refusing every write of a fenced
 * connection once a newer attempt has claimed the run.
 */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';
import { openPgStore } from '../../../../src/store/pg/store.js';
import { fencedUrl, isFenceError } from '../../../../src/store/pg/fence.js';
import type { AsyncStore } from '../../../../src/store/async.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function distributedRun(s: AsyncStore) {
  return s.runs.create({ workflow_name: 'wf', workflow_kind: 'module', target: 'example.com', run_mode: 'distributed', status: 'queued', workspace: 'example.com' });
}

describe.each(ENGINES)('attempt fence on $name', (engine) => {
  const s = useStore(engine);

  it('has a stable random store identity', async () => {
    const id = await s().maintenance.storeId();
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(await s().maintenance.storeId()).toBe(id);
  });

  it('claimRun raises the fence, clears an earlier attempt and refuses older attempts and finished runs', async () => {
    const run = await distributedRun(s());
    expect(await s().attempts.claimRun('00000000-0000-4000-8000-000000000000', 1)).toBe('missing');
    expect(await s().attempts.claimRun(run.run_uuid, 1)).toBe('claimed');
    await s().steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 'a', step_type: 'bash', status: 'running' });
    await s().artifacts.upsert({ run_id: run.id, workspace: 'example.com', name: 'r', artifact_path: '/w/r.txt', artifact_type: 'report', content_type: 'text/plain', size_bytes: 1, line_count: 1, optional: false, description: '' });
    await s().runs.update(run.id, { completed_steps: 3, current_pid: 4242 });
    expect(await s().attempts.claimRun(run.run_uuid, 2)).toBe('claimed');
    expect(await s().steps.listByRun(run.id)).toEqual([]);
    expect(await s().artifacts.listByRun(run.id)).toEqual([]);
    expect(await s().runs.get(run.id)).toMatchObject({ completed_steps: 0, current_pid: 0 });
    expect(await s().attempts.claimRun(run.run_uuid, 1)).toBe('superseded');
    const done = await distributedRun(s());
    await s().runs.transition(done.id, 'running');
    await s().runs.transition(done.id, 'cancelled');
    expect(await s().attempts.claimRun(done.run_uuid, 1)).toBe('finished');
  });
});

const pg = ENGINES.find((e) => e.name === 'postgresql');
describe.runIf(pg)('the PostgreSQL fence refuses a superseded attempt', () => {
  const s = useStore(pg!);

  it('a fenced connection writes while its attempt holds the run, and nothing once a newer attempt claimed it', async () => {
    const url = s.opened().url!;
    const run = await distributedRun(s());
    expect(await s().attempts.claimRun(run.run_uuid, 1)).toBe('claimed');
    const first = await openPgStore(fencedUrl(url, run.run_uuid, 1), { migrate: false, max: 2 });
    const second = await openPgStore(fencedUrl(url, run.run_uuid, 2), { migrate: false, max: 2 });
    try {
      // Attempt 2 has not claimed the run yet: its writes are refused.
      await expect(second.events.insert({ topic: 't', name: 't', source: 's', source_type: 'run', data_type: 'scan', data: {}, workspace: 'example.com', run_id: run.run_uuid, workflow_name: 'wf', processed: true })).rejects.toSatisfy(isFenceError);
      const step = await first.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 'a', step_type: 'bash', status: 'running' });
      await first.assets.upsertMany('example.com', [{ asset_value: 'a.example.com', asset_type: 'subdomain' }]);
      await first.runs.update(run.id, { completed_steps: 1 });

      // A transaction of attempt 1 past its check holds the run: the claim of attempt 2 waits for it.
      let claimed = false;
      const tx = first.tx(async () => {
        await first.steps.transition(step.id, 'completed');
        await sleep(300);
        expect(claimed).toBe(false);
      });
      await sleep(50);
      const claim = s()
        .attempts.claimRun(run.run_uuid, 2)
        .then((o) => {
          claimed = true;
          return o;
        });
      await tx;
      expect(await claim).toBe('claimed');

      // Every write path of attempt 1 is now refused by the database; reads still work.
      const refused: (() => Promise<unknown>)[] = [
        () => first.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 'late', step_type: 'bash' }),
        () => first.runs.transition(run.id, 'completed'),
        () => first.assets.upsertMany('example.com', [{ asset_value: 'late.example.com', asset_type: 'subdomain' }]),
        () => first.vulns.upsertMany('example.com', [{ vuln_info: 'x', vuln_title: 'x', severity: 'high', asset_value: 'late.example.com', asset_type: 'url' }]),
        () => first.events.insert({ topic: 't', name: 't', source: 's', source_type: 'run', data_type: 'scan', data: {}, workspace: 'example.com', run_id: run.run_uuid, workflow_name: 'wf', processed: true }),
        () => first.artifacts.upsert({ run_id: run.id, workspace: 'example.com', name: 'r', artifact_path: '/w/late.txt', artifact_type: 'report', content_type: 'text/plain', size_bytes: 1, line_count: 1, optional: false, description: '' }),
      ];
      for (const write of refused) await expect(write()).rejects.toSatisfy(isFenceError);
      expect((await first.runs.get(run.id))?.status).toBe('queued');
      expect((await s().assets.list({ workspace: 'example.com' }, { offset: 0, limit: 10 })).data.map((a) => a.asset_value)).toEqual(['a.example.com']);
      expect(await s().steps.listByRun(run.id)).toEqual([]);

      // Attempt 2 now writes; connections without a fence (the master) are never refused.
      await second.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 'b', step_type: 'bash' });
      await s().runs.update(run.id, { completed_steps: 0 });
      expect((await s().steps.listByRun(run.id)).map((x) => x.step_name)).toEqual(['b']);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('keeps options already in the URL and replaces an earlier fence', () => {
    const u = fencedUrl(fencedUrl('postgres://u:p@127.0.0.1:5432/db?options=-c%20search_path%3Dosm&sslmode=disable', '11111111-1111-4111-8111-111111111111', 1), '11111111-1111-4111-8111-111111111111', 2);
    const opts = new URL(u).searchParams.get('options');
    expect(opts).toBe('-c search_path=osm -c osm.fence_run=11111111-1111-4111-8111-111111111111 -c osm.fence_attempt=2');
    expect(new URL(u).searchParams.get('sslmode')).toBe('disable');
    expect(() => fencedUrl('postgres://h/db', "x'; drop table runs; --", 1)).toThrow();
  });
});
