/**
 * Workspace snapshot export (dumpPage) and import (restoreDump) on both engines, and across them:
 * a workspace dumped from SQLite restores on PostgreSQL with the same rows.
 */
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../../../src/store/async.js';
import { DUMP_TABLES, type DumpTable } from '../../../../src/store/workspace-dump.js';
import type { Row } from '../../../../src/store/sql.js';
import { ENGINES, useStore } from './engines.js';

const T1 = '2024-01-01T00:00:00.000Z';

/** Fills workspace `ws` (folder /data/ws) with a bit of everything. */
async function fill(s: AsyncStore): Promise<void> {
  await s.workspaces.upsertRunInfo({ name: 'ws', local_path: '/data/ws', state_execution_log: '/data/ws/log.txt' });
  const run = await s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't', workspace: 'ws', status: 'running', options: { secret: 1 } });
  const done = await s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't2', workspace: 'ws', status: 'running' });
  await s.runs.transition(done.id, 'completed');
  await s.steps.create({ run_id: run.id, run_uuid: run.run_uuid, step_name: 'a', step_type: 'bash', workspace: 'ws', status: 'running', log_file: '/data/ws/a.log' });
  await s.steps.create({ run_id: done.id, run_uuid: done.run_uuid, step_name: 'b', step_type: 'bash', workspace: 'ws', log_file: '/etc/passwd' });
  await s.artifacts.upsert({ run_id: run.id, workspace: 'ws', name: 'r', artifact_path: '/data/ws/r.md', artifact_type: 'report', content_type: 'text', size_bytes: 1, line_count: 1, optional: false, description: '' });
  await s.artifacts.upsert({ run_id: done.id, workspace: 'ws', name: 'x', artifact_path: '/elsewhere/x', artifact_type: 'output', content_type: 'text', size_bytes: 1, line_count: 1, optional: true, description: '' });
  await s.assets.upsertMany('ws', [{ asset_value: 'a.example.com', status_code: 200 }, { asset_value: 'b.example.com' }], T1);
  await s.assets.upsertMany('ws', [{ asset_value: 'a.example.com', status_code: 301 }], '2024-01-02T00:00:00.000Z');
  await s.vulns.upsertMany('ws', [{ template_id: 'xss', asset_value: 'a', severity: 'high' }], T1);
  await s.assetDiffs.insert({ workspace_name: 'ws', from_time: T1, to_time: T1, total_added: 1, total_removed: 0, total_changed: 0, diff_data: '{}', run_id: done.id });
  await s.events.insert({ topic: 'run.done', workspace: 'ws', run_id: done.run_uuid });
  await s.runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 'other', workspace: 'other' });
}

/** Every table of the workspace's dump, read page by page (small pages). */
async function dump(s: AsyncStore, name: string): Promise<Record<DumpTable, Row[]>> {
  const out = {} as Record<DumpTable, Row[]>;
  for (const table of DUMP_TABLES) {
    out[table] = [];
    for (let after = 0; ; ) {
      const page = await s.workspaces.dumpPage(name, table, after, 2);
      if (page.rows.length === 0) break;
      out[table].push(...page.rows);
      after = page.last;
    }
  }
  return out;
}

const source = (d: Record<DumpTable, Row[]>) => (t: DumpTable) => d[t];

/** The restored workspace in engine-neutral form (no ids, no times set at restore). */
async function shape(s: AsyncStore, name: string) {
  const runs = (await s.runs.list({ workspace: name }, { offset: 0, limit: 50 })).data.sort((a, b) => a.target.localeCompare(b.target));
  const steps = (await Promise.all(runs.map((r) => s.steps.listByRun(r.id)))).flat();
  const artifacts = (await Promise.all(runs.map((r) => s.artifacts.listByRun(r.id)))).flat();
  return {
    runs: runs.map((r) => [r.target, r.status, r.workspace, r.options, r.current_pid]),
    steps: steps.map((x) => [x.step_name, x.status, x.log_file, x.workspace]),
    artifacts: artifacts.map((a) => [a.name, a.artifact_path, a.optional]).sort(),
    assets: (await s.assets.list({ workspace: name }, { offset: 0, limit: 50 })).data.map((a) => [a.asset_value, a.status_code, a.created_at, a.updated_at]),
    history: (await s.assets.history(name, '2000', '2100')).map((h) => [h.field, h.old_value, h.new_value]),
    vulns: (await s.vulns.list({ workspace: name }, { offset: 0, limit: 50 })).data.map((v) => [v.template_id, v.severity, v.fingerprint === null]),
    diffs: (await s.assetDiffs.list({ workspace: name }, { offset: 0, limit: 50 })).data.map((d) => [d.total_added, d.run_id === runs.find((r) => r.target === 't2')?.id]),
    events: (await s.events.list({ workspace: name }, { offset: 0, limit: 50 })).data.map((e) => [e.topic, e.processed]),
    workspace: await s.workspaces.get(name).then((w) => w && [w.data_source, w.local_path, w.state_execution_log, w.total_assets, w.total_vulns]),
  };
}

const EXPECTED = {
  runs: [['t', 'cancelled', 'copy', {}, 0], ['t2', 'completed', 'copy', {}, 0]],
  steps: [['a', 'failed', '/data/copy/a.log', 'copy'], ['b', 'failed', '', 'copy']],
  artifacts: [['r', '/data/copy/r.md', false], ['x', '', true]],
  history: [['status_code', 200, 301]],
  vulns: [['xss', 'high', false]],
  diffs: [[1, true]],
  events: [['run.done', true]],
  workspace: ['imported', '/data/copy', '/data/copy/log.txt', 2, 1],
};

describe.each(ENGINES)('workspace snapshots on $name', (engine) => {
  const s = useStore(engine);

  it('dumps a workspace page by page and restores it under a new name: ids re-linked, runs inert, paths moved or cleared', async () => {
    await fill(s());
    const d = await dump(s(), 'ws');
    expect(Object.fromEntries(DUMP_TABLES.map((t) => [t, d[t].length]))).toEqual({
      workspace: 1, runs: 2, step_results: 2, artifacts: 2, assets: 2, vulnerabilities: 1, asset_diffs: 1, vuln_diffs: 0, event_logs: 1, asset_history: 1, vuln_history: 0,
    });
    // Restored runs keep their run_uuid: the source workspace goes first (a snapshot moves a workspace).
    expect(await s().workspaces.delete('ws')).toBe(true);
    const counts = await s().workspaces.restoreDump('copy', source(d), { localPath: '/data/copy', replace: false });
    expect(counts).toMatchObject({ workspace: 1, runs: 2, step_results: 2, artifacts: 2, assets: 2, vulnerabilities: 1, asset_history: 1 });
    expect(await shape(s(), 'copy')).toMatchObject(EXPECTED);
    // Restoring again with replace gives the same rows, not twice as many.
    expect((await s().runs.list({ workspace: 'other' }, { offset: 0, limit: 10 })).total).toBe(1);
    await s().workspaces.restoreDump('copy', source(d), { localPath: '/data/copy', replace: true });
    expect(await shape(s(), 'copy')).toMatchObject(EXPECTED);
    await expect(s().workspaces.restoreDump('bad', (t) => (t === 'workspace' ? [{}, {}] : []), { localPath: '/data/bad', replace: false })).rejects.toThrow(/more than one row/);
    expect(await s().workspaces.get('bad')).toBeUndefined();
  });
});

describe.runIf(ENGINES.length === 2)('snapshots across engines', () => {
  it('a workspace dumped from SQLite restores on PostgreSQL with the same rows', async () => {
    const [lite, pg] = await Promise.all(ENGINES.map((e) => e.open()));
    try {
      await fill(lite!.store);
      const d = await dump(lite!.store, 'ws');
      await pg!.store.workspaces.restoreDump('copy', source(d), { localPath: '/data/copy', replace: false });
      await lite!.store.workspaces.delete('ws');
      await lite!.store.workspaces.restoreDump('copy', source(d), { localPath: '/data/copy', replace: false });
      expect(await shape(pg!.store, 'copy')).toEqual(await shape(lite!.store, 'copy'));
    } finally {
      await lite?.dispose();
      await pg?.dispose();
    }
  });
});
