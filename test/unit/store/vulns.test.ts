import { describe, expect, it } from 'vitest';
import { normalizeSeverity, vulnFingerprint } from '../../../src/store/index.js';
import { memStore, page } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';

const nuclei = [
  { template_id: 'CVE-2021-44228', vuln_info: 'CVE-2021-44228', vuln_title: 'Log4Shell', severity: 'CRITICAL', asset_value: 'a.com', tags: ['cve', 'rce'] },
  { template_id: 'tech-detect', matcher_name: 'nginx', severity: 'info', asset_value: 'a.com' },
  { template_id: 'tech-detect', matcher_name: 'php', severity: 'info', asset_value: 'a.com' },
  { vuln_info: 'weak-cipher', severity: 'Medium', asset_value: 'b.com', confidence: 'Firm' },
];

describe('vulns.create', () => {
  it('inserts plainly with defaults and lower-cased severity', () => {
    const store = memStore();
    const v = store.vulns.create({ workspace: 'ws', vuln_info: 'x', severity: 'HIGH', tags: ['a'] });
    expect(v).toMatchObject({ workspace: 'ws', severity: 'high', confidence: 'Certain', tags: ['a'], fingerprint: null });
    expect(store.vulns.create({ workspace: 'ws', vuln_info: 'x' })).toMatchObject({ severity: 'info' });
    expect(store.vulns.list({}, page()).total).toBe(2); // no dedupe for plain inserts
    expect(() => store.vulns.create({ workspace: '' })).toThrow('Workspace is required');
    expect(store.vulns.get(v.id)?.vuln_info).toBe('x');
    expect(store.vulns.delete(v.id)).toBe(true);
    expect(store.vulns.delete(v.id)).toBe(false);
  });

  it('maps unknown severities to info so severities always add up', () => {
    expect(normalizeSeverity('Unknown')).toBe('info');
    expect(normalizeSeverity(' Critical ')).toBe('critical');
    expect(normalizeSeverity('moderate')).toBe('medium');
    expect(normalizeSeverity(undefined)).toBe('info');
  });
});

describe('vulns.upsertMany', () => {
  it('dedupes by fingerprint: re-importing the same rows adds nothing', () => {
    const store = memStore();
    const first = store.vulns.upsertMany('ws', nuclei, T0);
    expect(first).toMatchObject({ new: 4, updated: 0, unchanged: 0 });
    const again = store.vulns.upsertMany('ws', nuclei, T1);
    expect(again).toMatchObject({ new: 0, updated: 0, unchanged: 4 });
    expect(again.ids).toEqual(first.ids);
    expect(store.vulns.list({}, page()).total).toBe(4);
    const log4 = store.vulns.get(first.ids[0]!)!;
    expect(log4).toMatchObject({ severity: 'critical', created_at: T0, updated_at: T0, last_seen_at: T1 });
    expect(log4.fingerprint).toBe(vulnFingerprint('ws', nuclei[0]!));
    // The same finding in another workspace is a different finding.
    expect(store.vulns.upsertMany('ws2', nuclei.slice(0, 1), T1).new).toBe(1);
  });

  it('merges changed findings, keeping values the new row leaves empty', () => {
    const store = memStore();
    const [id] = store.vulns.upsertMany('ws', [nuclei[0]!], T0).ids;
    const res = store.vulns.upsertMany('ws', [{ template_id: 'CVE-2021-44228', asset_value: 'a.com', severity: 'high', vuln_desc: 'desc' }], T2);
    expect(res).toMatchObject({ updated: 1, updatedIds: [id] });
    expect(store.vulns.get(id!)).toMatchObject({ severity: 'high', vuln_title: 'Log4Shell', vuln_desc: 'desc', tags: ['cve', 'rce'], confidence: 'Certain', updated_at: T2 });
    expect(store.vulns.summary('ws')).toMatchObject({ critical: 0, high: 1, total: 1 });
    // Without a severity the stored one stays.
    store.vulns.upsertMany('ws', [{ template_id: 'CVE-2021-44228', asset_value: 'a.com' }], T2);
    expect(store.vulns.get(id!)?.severity).toBe('high');
  });

  it('requires an identifier per row and reports every bad row', () => {
    const store = memStore();
    expect(() => store.vulns.upsertMany('ws', [{ asset_value: 'a' }, nuclei[0]!, { severity: 'high' }])).toThrow(
      'rows[0].vuln_info: required (or template_id); rows[2].vuln_info: required (or template_id)',
    );
    expect(store.vulns.list({}, page()).total).toBe(0);
  });
});

describe('vulns.list, summary and diffs', () => {
  it('filters by workspace, any-of severities, confidence and asset substring', () => {
    const store = memStore();
    store.vulns.upsertMany('ws', nuclei, T0);
    store.vulns.create({ workspace: 'other', vuln_info: 'x', severity: 'low', asset_value: 'c.com' });
    expect(store.vulns.list({}, page()).total).toBe(5);
    expect(store.vulns.list({ workspace: 'ws' }, page()).total).toBe(4);
    expect(store.vulns.list({ severity: ['critical', 'MEDIUM'] }, page()).total).toBe(2);
    expect(store.vulns.list({ severity: ['info'], workspace: 'ws' }, page()).total).toBe(2);
    expect(store.vulns.list({ confidence: 'Firm' }, page()).total).toBe(1);
    expect(store.vulns.list({ asset_value: 'a.c' }, page()).total).toBe(3);
    expect(store.vulns.list({}, page(0, 2))).toMatchObject({ total: 5 });
    expect(store.vulns.list({}, page(0, 2)).data[0]?.workspace).toBe('other');
    expect(store.vulns.list({}, page(4, 2)).data).toHaveLength(1);
  });

  it('summarises from the counters, per workspace or overall', () => {
    const store = memStore();
    store.vulns.upsertMany('ws', nuclei, T0);
    store.vulns.create({ workspace: 'other', vuln_info: 'x', severity: 'low' });
    expect(store.vulns.summary('ws')).toEqual({ critical: 1, high: 0, medium: 1, low: 0, info: 2, total: 4 });
    expect(store.vulns.summary()).toEqual({ critical: 1, high: 0, medium: 1, low: 1, info: 2, total: 5 });
    expect(store.vulns.summary('nobody')).toEqual({ critical: 0, high: 0, medium: 0, low: 0, info: 0, total: 0 });
  });

  it('answers the diff windows', () => {
    const store = memStore();
    store.vulns.upsertMany('ws', nuclei, T0);
    store.vulns.upsertMany('ws', [{ ...nuclei[0]!, severity: 'high' }, { vuln_info: 'new-one', asset_value: 'a.com' }, nuclei[3]!], T2);
    const info = (rows: { vuln_info: string; template_id: string }[]) => rows.map((r) => r.template_id || r.vuln_info).sort();
    expect(info(store.vulns.addedBetween('ws', T1, T2))).toEqual(['new-one']);
    expect(info(store.vulns.changedBetween('ws', T1, T2))).toEqual(['CVE-2021-44228']);
    expect(info(store.vulns.changedSince('ws', T1, T2))).toEqual(['CVE-2021-44228']);
    expect(info(store.vulns.removedBefore('ws', T1))).toEqual(['tech-detect', 'tech-detect']);
  });
});
