/**
 * Assets and vulnerabilities on both engines: the merge rules case by case, then a differential
 * check — the same seeded sequence of imports on SQLite and PostgreSQL must give the same upsert
 * results, rows, history, counters-based totals and diff windows.
 */
import { describe, expect, it } from 'vitest';
import type { AssetInput } from '../../../../src/store/assets.js';
import type { AsyncStore } from '../../../../src/store/async.js';
import type { VulnInput } from '../../../../src/store/vulns.js';
import { ENGINES, useStore } from './engines.js';

const T1 = '2024-01-01T00:00:00.000Z';
const T2 = '2024-01-02T00:00:00.000Z';
const T3 = '2024-01-03T00:00:00.000Z';

describe.each(ENGINES)('assets on $name', (engine) => {
  const s = useStore(engine);

  it('tool output with NUL characters and absurd numbers is stored (the same on both engines), never refused', async () => {
    const r = await s().assets.upsertMany('nul-ws', [
      { asset_value: 'nul\u0000.example.com', url: 'https://nul.example.com/\u0000', title: 'a\u0000b', content_length: 1e308, status_code: -1e30, words: Number.MAX_SAFE_INTEGER + 10 },
    ], T1);
    expect(r.new).toBe(1);
    expect(await s().assets.get(r.newIds[0]!)).toMatchObject({
      asset_value: 'nul.example.com', url: 'https://nul.example.com/', title: 'ab',
      content_length: Number.MAX_SAFE_INTEGER, status_code: Number.MIN_SAFE_INTEGER, words: Number.MAX_SAFE_INTEGER,
    });
    const v = await s().vulns.upsertMany('nul-ws', [{ template_id: 't\u0000x', vuln_info: 'i\u0000', asset_value: 'nul.example.com', severity: 'high' }], T1);
    expect(v.new).toBe(1);
    expect(await s().vulns.get(v.newIds[0]!)).toMatchObject({ template_id: 'tx', vuln_info: 'i' });
    // Any other text (an event's data from a tool's output) is stored: PostgreSQL drops the NULs.
    await s().events.insert({ topic: 't', name: 'n', source: 's', source_type: 'run', data_type: 'scan', data: { out: 'x\u0000y' }, workspace: 'nul-ws', run_id: 'r-nul', workflow_name: 'w', processed: true, error: 'e\u0000' });
    const ev = (await s().events.list({ run_id: 'r-nul' }, { offset: 0, limit: 10 })).data;
    expect(ev).toHaveLength(1);
    expect(ev[0]!.error.replaceAll('\u0000', '')).toBe('e');
    if (engine.name === 'postgresql') expect(ev[0]!.error).toBe('e');
  });

  it('merges imports: non-empty values win, booleans OR, ports accumulate, history and updated_at only on real changes', async () => {
    const r1 = await s().assets.upsertMany('ws', [
      { asset_value: 'a.example.com', url: 'https://a.example.com', status_code: 200, tech: ['nginx'], open_ports: ['443/tcp'], is_cdn: true, time: '1ms' },
      { asset_value: 'b.example.com', title: 'B' },
      { asset_value: 'a.example.com', url: 'https://a.example.com', title: 'Same batch' },
    ], T1);
    expect(r1).toMatchObject({ new: 2, updated: 0, unchanged: 1 });
    expect(r1.ids).toEqual([r1.newIds[0], r1.newIds[1], r1.newIds[0]]);
    const a = (await s().assets.get(r1.newIds[0]!))!;
    expect(a).toMatchObject({ title: 'Same batch', status_code: 200, tech: ['nginx'], is_cdn: true, is_waf: false, created_at: T1, updated_at: T1, last_seen_at: T1 });
    const r2 = await s().assets.upsertMany('ws', [
      { asset_value: 'a.example.com', url: 'https://a.example.com', status_code: 0, title: '', open_ports: ['80/tcp'], is_cdn: false, time: '2ms' },
      { asset_value: 'b.example.com', title: 'B' },
      { asset_value: 'c.example.com' },
    ], T2);
    expect(r2).toMatchObject({ new: 1, updated: 1, unchanged: 1, updatedIds: [a.id] });
    expect(await s().assets.get(a.id)).toMatchObject({ status_code: 200, title: 'Same batch', open_ports: ['80/tcp', '443/tcp'], is_cdn: true, time: '2ms', updated_at: T2, last_seen_at: T2 });
    expect(await s().assets.get(r1.newIds[1]!)).toMatchObject({ updated_at: T1, last_seen_at: T2 });
    expect((await s().assets.history('ws', T1, T3)).map((h) => [h.row_id, h.field, h.old_value, h.new_value, h.changed_at])).toEqual([
      [a.id, 'title', '', 'Same batch', T1],
      [a.id, 'open_ports', ['443/tcp'], ['80/tcp', '443/tcp'], T2],
    ]);
    // matchByValue: no row with this url → merges into the oldest row of the value, keeping its url.
    const r3 = await s().assets.upsertMany('ws', [{ asset_value: 'a.example.com', url: 'https://other', title: 'T' }], T3, { matchByValue: true });
    expect(r3.updatedIds).toEqual([a.id]);
    expect((await s().assets.get(a.id))?.url).toBe('https://a.example.com');
    await expect(s().assets.upsertMany('ws', [{ asset_value: ' ' }])).rejects.toThrow(/rows\[0\]\.asset_value: required/);
    await expect(s().assets.upsertMany('', [{ asset_value: 'x' }])).rejects.toThrow();
  });

  it('inserts plainly with conflicts, lists with counter totals and search, diffs and deletes', async () => {
    const x = await s().assets.insert('ws', { asset_value: 'x.example.com', status_code: 404, asset_type: 'subdomain' }, T1);
    await expect(s().assets.insert('ws', { asset_value: 'x.example.com' })).rejects.toThrow(/already exists/);
    await s().assets.upsertMany('ws', [{ asset_value: 'y.example.com', status_code: 200, asset_type: 'url', title: 'Admin_Panel' }], T2);
    await s().assets.upsertMany('other', [{ asset_value: 'z.example.com', status_code: 200, asset_type: 'url' }], T2);
    const page = await s().assets.list({}, { offset: 0, limit: 2 });
    expect(page.total).toBe(3);
    expect(page.data.map((r) => r.asset_value)).toEqual(['z.example.com', 'y.example.com']);
    expect((await s().assets.list({ status_code: 200 }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().assets.list({ workspace: 'ws', status_code: 200 }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().assets.list({ asset_type: 'url' }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().assets.list({ asset_type: 'url', status_code: 200, workspace: 'other' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().assets.list({ search: 'admin_' }, { offset: 0, limit: 10 })).data.map((r) => r.asset_value)).toEqual(['y.example.com']);
    // Imports create the workspace rows (trigger-kept counters), in the default org.
    expect((await s().assets.list({ org_uuid: '00000000-0000-0000-0000-000000000001', status_code: 200 }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().assets.list({ org_uuid: '00000000-0000-0000-0000-000000000001', workspace: 'ws' }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().assets.list({ org_uuid: 'another-org' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect(await s().assets.diffCounts('ws', T2, T3)).toEqual({ added: 1, removed: 1, changed: 0 });
    expect((await s().assets.addedBetween('ws', T2, T3)).map((r) => r.asset_value)).toEqual(['y.example.com']);
    expect((await s().assets.removedBefore('ws', T2)).map((r) => r.id)).toEqual([x.id]);
    expect(await s().assets.oldestCreatedAt('ws')).toBe(T1);
    expect(await s().assets.oldestCreatedAt('none')).toBeUndefined();
    expect((await s().assets.touchedSince('ws', T2, 10)).map((r) => r.asset_value)).toEqual(['y.example.com']);
    // Pages by id: the rows after a given id (every row of the workspace since T1, one per page).
    const first = await s().assets.touchedSince('ws', T1, 1);
    expect(first).toHaveLength(1);
    const second = await s().assets.touchedSince('ws', T1, 1, first[0]!.id);
    expect(second.map((r) => r.id)).not.toContain(first[0]!.id);
    expect(await s().assets.touchedSince('ws', T1, 1, Math.max(first[0]!.id, second[0]?.id ?? 0))).toEqual([]);
    expect(await s().assets.delete(x.id)).toBe(true);
    expect(await s().assets.delete(x.id)).toBe(false);
    expect((await s().workspaces.get('ws'))?.total_assets).toBe(1);
  });
});

describe.each(ENGINES)('vulnerabilities on $name', (engine) => {
  const s = useStore(engine);

  it('dedupes imports by fingerprint, merges, keeps severity counters and summaries', async () => {
    const r1 = await s().vulns.upsertMany('ws', [
      { template_id: 'xss', asset_value: 'a', severity: 'HIGH', tags: ['t'] },
      { template_id: 'sqli', asset_value: 'a' },
      { template_id: 'xss', asset_value: 'a', vuln_title: 'XSS' },
    ], T1);
    expect(r1).toMatchObject({ new: 2, updated: 0, unchanged: 1 });
    const xss = (await s().vulns.get(r1.ids[0]!))!;
    expect(xss).toMatchObject({ severity: 'high', confidence: 'Certain', vuln_title: 'XSS', tags: ['t'] });
    expect((await s().vulns.get(r1.ids[1]!))?.severity).toBe('info');
    const r2 = await s().vulns.upsertMany('ws', [{ template_id: 'xss', asset_value: 'a', severity: 'critical' }, { template_id: 'sqli', asset_value: 'a', raw_vuln_json: '{}' }], T2);
    expect(r2).toMatchObject({ new: 0, updated: 1, unchanged: 1, updatedIds: [xss.id] });
    expect((await s().vulns.history('ws', T1, T3)).map((h) => [h.field, h.old_value, h.new_value])).toEqual([['vuln_title', '', 'XSS'], ['severity', 'high', 'critical']]);
    await s().vulns.create({ workspace: 'other', vuln_info: 'manual', severity: 'moderate' });
    expect(await s().vulns.summary()).toEqual({ critical: 1, high: 0, medium: 1, low: 0, info: 1, total: 3 });
    expect(await s().vulns.summary('ws')).toEqual({ critical: 1, high: 0, medium: 0, low: 0, info: 1, total: 2 });
    expect((await s().vulns.list({ severity: ['critical', 'info'] }, { offset: 0, limit: 1 })).total).toBe(2);
    expect((await s().vulns.list({ severity: ['bogus'] }, { offset: 0, limit: 10 })).total).toBe(0);
    expect((await s().vulns.list({ workspace: 'ws', severity: ['info'] }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().vulns.list({ asset_value: 'A' }, { offset: 0, limit: 10 })).total).toBe(2);
    expect((await s().vulns.list({ confidence: 'Certain' }, { offset: 0, limit: 10 })).total).toBe(3);
    expect(await s().vulns.summary(undefined, '00000000-0000-0000-0000-000000000001')).toEqual(await s().vulns.summary());
    expect(await s().vulns.summary('ws', 'another-org')).toMatchObject({ critical: 0, total: 0 });
    expect(await s().vulns.diffCounts('ws', T2, T3)).toEqual({ added: 0, removed: 0, changed: 1 });
    expect((await s().vulns.changedBetween('ws', T2, T3)).map((v) => v.id)).toEqual([xss.id]);
    await expect(s().vulns.upsertMany('ws', [{ asset_value: 'a' }])).rejects.toThrow(/vuln_info: required/);
    expect(await s().vulns.delete(xss.id)).toBe(true);
    expect((await s().vulns.summary('ws')).total).toBe(1);
  });
});

/** A seeded pseudo-random sequence of import batches with repeats, blanks and changes. */
function batches(seed: number): { assets: AssetInput[]; vulns: VulnInput[]; now: string }[] {
  let x = seed;
  const rnd = (n: number) => ((x = (x * 1103515245 + 12345) % 2147483648), x % n);
  return Array.from({ length: 6 }, (_, b) => ({
    now: `2024-02-0${b + 1}T00:00:00.000Z`,
    assets: Array.from({ length: 40 }, () => ({
      asset_value: `h${rnd(25)}.example.com`,
      url: rnd(3) === 0 ? `https://h${rnd(3)}` : '',
      status_code: [0, 200, 301, 404][rnd(4)],
      title: ['', 'A', 'B'][rnd(3)],
      tech: rnd(2) ? [['nginx'], ['php', 'nginx']][rnd(2)] : [],
      open_ports: rnd(3) === 0 ? [`${rnd(5) * 100 + 22}/tcp`] : [],
      is_waf: rnd(5) === 0,
      asset_type: ['subdomain', 'url', 'ip'][rnd(3)],
      time: `${rnd(100)}ms`,
    })),
    vulns: Array.from({ length: 30 }, () => ({
      template_id: `t${rnd(8)}`,
      asset_value: `h${rnd(5)}`,
      severity: ['', 'low', 'high', 'critical', 'unknown'][rnd(5)],
      vuln_title: ['', 'X', 'Y'][rnd(3)],
      tags: rnd(2) ? ['a'] : [],
    })),
  }));
}

async function trace(s: AsyncStore, seed: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const b of batches(seed)) {
    out.push(await s.assets.upsertMany('ws', b.assets, b.now, { matchByValue: seed % 2 === 0 }));
    out.push(await s.vulns.upsertMany('ws', b.vulns, b.now));
  }
  out.push(await s.assets.list({}, { offset: 0, limit: 1000 }));
  out.push(await s.vulns.list({}, { offset: 0, limit: 1000 }));
  for (const st of [200, 404]) out.push(await s.assets.list({ status_code: st }, { offset: 0, limit: 3 }));
  out.push(await s.vulns.summary('ws'));
  out.push(await s.assets.history('ws', '2024-01-01', '2025-01-01'));
  out.push(await s.vulns.history('ws', '2024-01-01', '2025-01-01'));
  out.push(await s.assets.diffCounts('ws', '2024-02-04T00:00:00.000Z', '2024-02-06T00:00:00.000Z'));
  out.push(await s.assets.removedBefore('ws', '2024-02-05T00:00:00.000Z'));
  out.push(await s.workspaces.get('ws').then((w) => w && { ...w, created_at: '', updated_at: '' }));
  return out;
}

describe.runIf(ENGINES.length === 2)('SQLite and PostgreSQL agree', () => {
  it.each([1, 2, 3, 4])('on the same seeded import sequence (seed %i)', async (seed) => {
    const [a, b] = await Promise.all(ENGINES.map((e) => e.open()));
    try {
      await a!.store.workspaces.upsertRunInfo({ name: 'ws', local_path: '/ws' });
      await b!.store.workspaces.upsertRunInfo({ name: 'ws', local_path: '/ws' });
      const [ta, tb] = [await trace(a!.store, seed), await trace(b!.store, seed)];
      expect(tb).toEqual(ta);
      expect((ta[ta.length - 1] as { total_assets: number }).total_assets).toBeGreaterThan(10);
    } finally {
      await a?.dispose();
      await b?.dispose();
    }
  });
});
