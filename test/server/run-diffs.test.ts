/**
 * Diff snapshots written by real runs: a run executed by the queue that imports assets and
 * findings stores an asset_diffs and a vuln_diffs row over its own window, linked by run_id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../fixtures/data/', import.meta.url)), name);
const { dir, cleanup } = tempDir('osm-run-diffs-');
let t: TestServer;

beforeAll(async () => {
  const wf = path.join(dir, 'wf');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  fs.writeFileSync(
    path.join(wf, 'modules', 'findings.yaml'),
    [
      'kind: module',
      'name: findings',
      'steps:',
      '  - name: assets',
      '    type: function',
      `    function: db_import_asset_from_file("{{Workspace}}", "${fx('httpx-run1.jsonl')}")`,
      '  - name: vulns',
      '    type: function',
      `    function: db_import_vuln_from_file("{{Workspace}}", "${fx('nuclei.jsonl')}")`,
      '',
    ].join('\n'),
  );
  t = await makeTestServer({ withQueue: true, workflowFolder: wf });
});
afterAll(async () => {
  await t?.close();
  cleanup();
});

const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });

/** Polls `fn` until it returns a truthy value (bounded, so a hang fails instead of blocking). */
async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs the module on example.com through the queue; resolves with the run once both snapshots are stored. */
async function runFindings(expectedSnapshots: number) {
  const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'findings', target: 'example.com' } });
  expect(res.statusCode, res.body).toBe(202);
  const uuid = res.json().run_uuid as string;
  const run = await until(async () => {
    const r = await t.app.repos.runs.getByUuid(uuid);
    return r && ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  }, 'the run to finish');
  expect(run.status, run.error_message).toBe('completed');
  await until(async () => (await get('/osm/api/vulnerabilities/diffs')).json().pagination.total === expectedSnapshots, 'the vulnerability snapshot');
  return run;
}

describe('diff snapshots of a completed run', () => {
  it('stores a vuln_diffs row with the run\'s findings next to the asset_diffs row, over the same window', async () => {
    const run = await runFindings(1);
    const vulns = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com')).json();
    const assets = (await get('/osm/api/assets/diffs?workspace=example.com')).json();
    expect(vulns.pagination).toEqual({ total: 1, offset: 0, limit: 20 });
    expect(assets.pagination.total).toBe(1);
    const v = vulns.data[0];
    const a = assets.data[0];
    expect(v).toMatchObject({ workspace_name: 'example.com', run_id: run.id, from_time: run.started_at, to_time: run.completed_at, total_added: 6, total_removed: 0, total_changed: 0 });
    expect(a).toMatchObject({ workspace_name: 'example.com', run_id: run.id, from_time: v.from_time, to_time: v.to_time, total_added: 5 });
    const data = JSON.parse(v.diff_data);
    expect(data.added).toHaveLength(6);
    expect(data.added.map((x: { id: number }) => x.id).sort()).toEqual((await t.app.repos.vulns.list({ workspace: 'example.com' }, { offset: 0, limit: 100 })).data.map((x) => x.id).sort());
    expect(data.added[0]).toEqual({ id: expect.any(Number), vuln_info: expect.any(String), asset_value: expect.any(String), severity: expect.any(String), template_id: expect.any(String), created_at: expect.any(String) });
    expect([data.removed, data.changed]).toEqual([[], []]);
    expect((await get('/osm/api/vulnerabilities/diffs?workspace=other.org')).json().pagination.total).toBe(0);
  });

  it('stores an empty vulnerability diff for a run that finds the same findings again', async () => {
    const run = await runFindings(2);
    const page = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com&limit=1')).json();
    expect(page.pagination).toEqual({ total: 2, offset: 0, limit: 1 });
    expect(page.data[0]).toMatchObject({ run_id: run.id, total_added: 0, total_removed: 0, total_changed: 0 });
    expect(JSON.parse(page.data[0].diff_data)).toEqual({ added: [], removed: [], changed: [] });
    const older = (await get('/osm/api/vulnerabilities/diffs?workspace=example.com&limit=1&offset=1')).json();
    expect(older.data[0]).toMatchObject({ total_added: 6 });
    expect(older.data[0].run_id).not.toBe(run.id);
  });
});
