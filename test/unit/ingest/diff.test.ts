import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { asyncSqlite, openStore, type Store } from '../../../src/store/index.js';
import { computeAssetDiff, computeVulnDiff, importAssetsJsonl, importVulnsJsonl } from '../../../src/ingest/index.js';
import { DIFF_ITEM_LIMIT } from '../../../src/ingest/diff.js';
import { recordRunDiff } from '../../../src/services/diffs.js';

const fx = (name: string) => path.join(fileURLToPath(new URL('../../fixtures/data/', import.meta.url)), name);
const stores: Store[] = [];
afterEach(() => {
  vi.useRealTimers();
  while (stores.length) stores.pop()!.close();
});

const RUN1 = '2026-02-01T10:00:00.000Z';
const BETWEEN = '2026-02-01T12:00:00.000Z';
const RUN2 = '2026-02-02T10:00:00.000Z';
const AFTER = '2026-02-03T00:00:00.000Z';

/** Two scans of the same workspace a day apart (the clock is set, only Date is faked). */
async function twoRuns(): Promise<Store> {
  const s = openStore(':memory:');
  stores.push(s);
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(RUN1));
  await importAssetsJsonl(s, 'example.com', fx('httpx-run1.jsonl'));
  await importVulnsJsonl(s, 'example.com', fx('nuclei.jsonl'));
  vi.setSystemTime(new Date(RUN2));
  await importAssetsJsonl(s, 'example.com', fx('httpx-run2.jsonl'));
  vi.useRealTimers();
  return s;
}

describe('computeAssetDiff', () => {
  it('reports added, removed and field-level changes between two runs', async () => {
    const s = await twoRuns();
    const d = computeAssetDiff(s, 'example.com', BETWEEN, AFTER);
    expect(d.workspace_name).toBe('example.com');
    expect(d.added).toEqual([{ id: expect.any(Number), asset_value: 'new.example.com', asset_type: 'http', url: 'https://new.example.com', status_code: 200, created_at: RUN2 }]);
    expect(d.removed).toEqual([{ id: expect.any(Number), asset_value: 'old.example.com', asset_type: 'http', url: 'https://old.example.com', last_seen_at: RUN1 }]);
    expect(d.changed).toHaveLength(1); // www only changed its (volatile) response time
    const api = d.changed[0]!;
    expect(api).toMatchObject({ asset_value: 'api.example.com', url: 'https://api.example.com' });
    const byField = Object.fromEntries(api.changes.map((c) => [c.field, [c.old_value, c.new_value]]));
    expect(byField).toEqual({
      status_code: [401, 200],
      title: ['Unauthorized', 'API v2'],
      content_length: [42, 88],
      words: [3, 9],
      tech: [['Express'], ['Express', 'Node.js']],
    });
    expect(d.summary).toEqual({ total_added: 1, total_removed: 1, total_changed: 1 });
  });

  it('treats the first run as all added and a window before it as empty', async () => {
    const s = await twoRuns();
    const first = computeAssetDiff(s, 'example.com', RUN1, BETWEEN);
    expect(first.summary).toEqual({ total_added: 5, total_removed: 0, total_changed: 0 });
    expect(computeAssetDiff(s, 'example.com', '2025-01-01T00:00:00.000Z', '2025-12-31T00:00:00.000Z').summary).toEqual({
      total_added: 0, total_removed: 0, total_changed: 0,
    });
    expect(computeAssetDiff(s, 'other', BETWEEN, AFTER).summary.total_added).toBe(0);
  });

  it('drops a field that changed and changed back inside the window', async () => {
    const s = await twoRuns();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-02-02T11:00:00.000Z'));
    await importAssetsJsonl(s, 'example.com', fx('httpx-run1.jsonl')); // api back to 401 / Unauthorized
    vi.useRealTimers();
    const d = computeAssetDiff(s, 'example.com', BETWEEN, AFTER);
    // old.example.com came back, so it is no longer removed; api changed and changed back on every
    // field, so it is not listed although its updated_at lies in the window (the reference lists it).
    expect(d.removed).toEqual([]);
    expect(d.changed).toEqual([]);
    expect(s.assets.changedBetween('example.com', BETWEEN, AFTER).map((a) => a.asset_value)).toEqual(['api.example.com']);
  });
});

describe('computeVulnDiff', () => {
  it('lists new findings with the spec fields and field-level changes of old ones', async () => {
    const s = await twoRuns();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(RUN2));
    s.vulns.upsertMany('example.com', [
      { template_id: 'CVE-2021-41773', vuln_info: 'CVE-2021-41773', asset_value: 'old.example.com', severity: 'high' },
      { template_id: 'new-finding', vuln_info: 'new-finding', asset_value: 'new.example.com', severity: 'medium' },
    ]);
    vi.useRealTimers();
    const d = computeVulnDiff(s, 'example.com', BETWEEN, AFTER);
    expect(d.added).toEqual([{ id: expect.any(Number), vuln_info: 'new-finding', asset_value: 'new.example.com', severity: 'medium', template_id: 'new-finding', created_at: RUN2 }]);
    expect(d.changed).toEqual([{ vuln_id: expect.any(Number), vuln_info: 'CVE-2021-41773', asset_value: 'old.example.com', changes: [{ field: 'severity', old_value: 'critical', new_value: 'high' }] }]);
    expect(d.removed.map((r) => r.vuln_info).sort()).toEqual(['exposed-admin', 'swagger-api', 'tech-detect', 'tech-detect', 'weak-cipher-suites']);
  });

  it('a run in a workspace without rows stores the empty diffs the full computation gives, with or without its row passed in', async () => {
    const s = openStore(':memory:');
    stores.push(s);
    s.workspaces.upsertRunInfo({ name: 'quiet.io', local_path: '/quiet' });
    const run = s.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'quiet.io', workspace: 'quiet.io', status: 'running' });
    s.db.prepare('UPDATE runs SET started_at = ?, completed_at = ? WHERE id = ?').run(RUN1, AFTER, run.id);
    const row = s.runs.get(run.id)!;
    for (const known of [undefined, row]) {
      const { assets, vulns } = (await recordRunDiff({ repos: asyncSqlite(s) }, run.id, known))!;
      const fullA = computeAssetDiff(s, 'quiet.io', RUN1, AFTER);
      const fullV = computeVulnDiff(s, 'quiet.io', RUN1, AFTER);
      for (const [stored, full] of [[assets, fullA], [vulns, fullV]] as const) {
        expect(stored).toMatchObject({ workspace_name: 'quiet.io', from_time: RUN1, to_time: AFTER, total_added: 0, total_removed: 0, total_changed: 0, run_id: run.id });
        expect(JSON.parse(stored.diff_data)).toEqual({ added: full.added, removed: full.removed, changed: full.changed });
      }
    }
    // Once the workspace holds a row, the diff is computed again (the row was added in the window).
    s.assets.upsertMany('quiet.io', [{ asset_value: 'a.quiet.io' }], BETWEEN);
    const { assets } = (await recordRunDiff({ repos: asyncSqlite(s) }, run.id, row))!;
    expect(assets.total_added).toBe(1);
  });

  it('a run\'s stored vulnerability snapshot is bounded like the asset one: lists cut at the limit, exact totals, truncated kept', async () => {
    const s = openStore(':memory:');
    stores.push(s);
    const run = s.runs.create({ workflow_name: 'w', workflow_kind: 'module', target: 'big.io', workspace: 'big.io', status: 'running' });
    s.db.prepare('UPDATE runs SET started_at = ? WHERE id = ?').run(RUN1, run.id);
    const rows = Array.from({ length: DIFF_ITEM_LIMIT + 1 }, (_, i) => ({ template_id: `t${i}`, asset_value: 'big.io', severity: 'low' }));
    s.vulns.upsertMany('big.io', rows, RUN2);
    s.db.prepare('UPDATE runs SET completed_at = ? WHERE id = ?').run(AFTER, run.id);
    const { assets, vulns } = (await recordRunDiff({ repos: asyncSqlite(s) }, run.id))!;
    expect(vulns).toMatchObject({ from_time: RUN1, to_time: AFTER, total_added: DIFF_ITEM_LIMIT + 1, total_removed: 0, total_changed: 0, run_id: run.id });
    const data = JSON.parse(vulns.diff_data);
    expect(data.added).toHaveLength(DIFF_ITEM_LIMIT);
    expect(data.truncated).toBe(true);
    expect(assets).toMatchObject({ total_added: 0, run_id: run.id });
    expect(JSON.parse(assets.diff_data)).toEqual({ added: [], removed: [], changed: [] });
  });
});
