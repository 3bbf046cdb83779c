/**
 * The trigger-kept counters must equal COUNT(*) after any sequence of inserts, merges (including
 * severity changes), deletes and workspace deletions.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { memStore } from './helpers.js';

const WORKSPACES = ['a.com', 'b.io', 'c.net'];
const SEVS = ['critical', 'high', 'medium', 'low', 'info', 'UNKNOWN', ''];

const op = fc.oneof(
  fc.record({ kind: fc.constant('assets' as const), ws: fc.constantFrom(...WORKSPACES), values: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 6 }) }),
  fc.record({ kind: fc.constant('vulns' as const), ws: fc.constantFrom(...WORKSPACES), rows: fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.constantFrom(...SEVS)), { maxLength: 6 }) }),
  fc.record({ kind: fc.constant('createVuln' as const), ws: fc.constantFrom(...WORKSPACES), sev: fc.constantFrom(...SEVS) }),
  fc.record({ kind: fc.constant('deleteAsset' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('deleteVuln' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('deleteData' as const), ws: fc.constantFrom(...WORKSPACES) }),
  fc.record({ kind: fc.constant('deleteWorkspace' as const), ws: fc.constantFrom(...WORKSPACES) }),
  fc.record({ kind: fc.constant('runInfo' as const), ws: fc.constantFrom(...WORKSPACES) }),
);

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

function apply(store: Store, o: Op): void {
  const ids = (table: string) => (store.db.prepare(`SELECT id FROM ${table} ORDER BY id`).all() as { id: number }[]).map((r) => r.id);
  switch (o.kind) {
    case 'assets':
      store.assets.upsertMany(o.ws, o.values.map((v) => ({ asset_value: `h${v}.${o.ws}`, status_code: v * 100 })));
      break;
    case 'vulns':
      store.vulns.upsertMany(o.ws, o.rows.map(([v, severity]) => ({ vuln_info: `v${v}`, asset_value: o.ws, severity })));
      break;
    case 'createVuln':
      store.vulns.create({ workspace: o.ws, vuln_info: 'manual', severity: o.sev });
      break;
    case 'deleteAsset': {
      const all = ids('assets');
      if (all.length > 0) expect(store.assets.delete(all[o.pick % all.length]!)).toBe(true);
      break;
    }
    case 'deleteVuln': {
      const all = ids('vulnerabilities');
      if (all.length > 0) expect(store.vulns.delete(all[o.pick % all.length]!)).toBe(true);
      break;
    }
    case 'deleteData':
      store.workspaces.deleteData(o.ws);
      break;
    case 'deleteWorkspace':
      store.workspaces.delete(o.ws);
      break;
    case 'runInfo':
      store.workspaces.upsertRunInfo({ name: o.ws, local_path: `/w/${o.ws}`, data_source: 'imported' });
      break;
  }
}

function checkInvariants(store: Store): void {
  const count = (sql: string, ...p: unknown[]) => (store.db.prepare(sql).get(...p) as { n: number }).n;
  const summary = store.vulns.summary();
  expect(store.stats.snapshot().assets.total).toBe(count('SELECT COUNT(*) AS n FROM assets'));
  expect(summary.total).toBe(count('SELECT COUNT(*) AS n FROM vulnerabilities'));
  for (const sev of ['critical', 'high', 'medium', 'low', 'info'] as const) {
    expect(summary[sev]).toBe(count('SELECT COUNT(*) AS n FROM vulnerabilities WHERE severity = ?', sev));
  }
  expect(summary.total).toBe(summary.critical + summary.high + summary.medium + summary.low + summary.info);
  for (const ws of WORKSPACES) {
    const row = store.workspaces.get(ws);
    const assets = count('SELECT COUNT(*) AS n FROM assets WHERE workspace = ?', ws);
    const vulns = count('SELECT COUNT(*) AS n FROM vulnerabilities WHERE workspace = ?', ws);
    // Data implies a row (the insert trigger creates it); a missing row means no data.
    if (!row) {
      expect(assets + vulns).toBe(0);
      continue;
    }
    expect(row.total_assets).toBe(assets);
    expect(row.total_vulns).toBe(vulns);
    const s = store.vulns.summary(ws);
    for (const sev of ['critical', 'high', 'medium', 'low', 'info'] as const) {
      expect(s[sev]).toBe(count('SELECT COUNT(*) AS n FROM vulnerabilities WHERE workspace = ? AND severity = ?', ws, sev));
    }
  }
}

describe('counters', () => {
  it('stay equal to COUNT(*) after random inserts, merges and deletes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const store = memStore();
        for (const o of ops) {
          apply(store, o);
          checkInvariants(store);
        }
        store.close();
      }),
      { numRuns: 60 },
    );
  });

  it('create the workspace row for data of an unknown workspace with data_source local', () => {
    const store = memStore();
    store.vulns.create({ workspace: 'fresh.io', vuln_info: 'x', severity: 'low' });
    expect(store.workspaces.get('fresh.io')).toMatchObject({ data_source: 'local', total_vulns: 1, vuln_low: 1, total_assets: 0 });
  });

  it('follow a row moved between workspaces or severities by a raw update', () => {
    const store = memStore();
    const [assetId] = store.assets.upsertMany('a.com', [{ asset_value: 'x' }]).ids;
    const vuln = store.vulns.create({ workspace: 'a.com', vuln_info: 'x', severity: 'high' });
    store.db.prepare('UPDATE assets SET workspace = ? WHERE id = ?').run('b.io', assetId);
    store.db.prepare('UPDATE vulnerabilities SET workspace = ?, severity = ? WHERE id = ?').run('b.io', 'low', vuln.id);
    expect(store.workspaces.get('a.com')).toMatchObject({ total_assets: 0, total_vulns: 0, vuln_high: 0 });
    expect(store.workspaces.get('b.io')).toMatchObject({ total_assets: 1, total_vulns: 1, vuln_low: 1 });
    expect(store.vulns.summary()).toMatchObject({ high: 0, low: 1, total: 1 });
  });

  it('are refused an impossible severity at the database level', () => {
    const store = memStore();
    const now = new Date().toISOString();
    expect(() =>
      store.db.prepare(`INSERT INTO vulnerabilities (workspace, severity, created_at, updated_at, last_seen_at) VALUES ('w', 'bogus', ?, ?, ?)`).run(now, now, now),
    ).toThrow(/CHECK/);
  });
});
