/**
 * List totals come from trigger-kept counters (workspace, severity, status code, asset type)
 * instead of a COUNT per request; after any sequence of inserts, merges, moves and deletes they
 * must still equal COUNT(*) for every filter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { memStore } from './helpers.js';

const WS = ['a.com', 'b.io'];
const CODES = [0, 200, 404];
const TYPES = ['', 'url', 'subdomain'];
const SEVS = ['critical', 'high', 'low', 'info'];

const op = fc.oneof(
  fc.record({
    kind: fc.constant('assets' as const),
    ws: fc.constantFrom(...WS),
    rows: fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.constantFrom(...CODES), fc.constantFrom(...TYPES)), { maxLength: 5 }),
  }),
  fc.record({ kind: fc.constant('vulns' as const), ws: fc.constantFrom(...WS), rows: fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.constantFrom(...SEVS)), { maxLength: 5 }) }),
  fc.record({ kind: fc.constant('moveAsset' as const), pick: fc.nat(), ws: fc.constantFrom(...WS), code: fc.constantFrom(...CODES), type: fc.constantFrom(...TYPES) }),
  fc.record({ kind: fc.constant('deleteAsset' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('deleteData' as const), ws: fc.constantFrom(...WS) }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

function apply(store: Store, o: Op): void {
  const ids = () => (store.db.prepare('SELECT id FROM assets ORDER BY id').all() as { id: number }[]).map((r) => r.id);
  switch (o.kind) {
    case 'assets':
      store.assets.upsertMany(o.ws, o.rows.map(([v, status_code, asset_type]) => ({ asset_value: `h${v}.${o.ws}`, status_code, asset_type })));
      break;
    case 'vulns':
      store.vulns.upsertMany(o.ws, o.rows.map(([v, severity]) => ({ vuln_info: `v${v}`, asset_value: o.ws, severity })));
      break;
    case 'moveAsset': {
      const all = ids();
      if (all.length > 0) {
        // OR IGNORE: a move onto a row the target workspace already has (same value and url) is skipped, as the unique key demands.
        store.db.prepare('UPDATE OR IGNORE assets SET workspace = ?, status_code = ?, asset_type = ? WHERE id = ?').run(o.ws, o.code, o.type, all[o.pick % all.length]);
      }
      break;
    }
    case 'deleteAsset': {
      const all = ids();
      if (all.length > 0) store.assets.delete(all[o.pick % all.length]!);
      break;
    }
    case 'deleteData':
      store.workspaces.deleteData(o.ws);
      break;
  }
}

function checkTotals(store: Store): void {
  const count = (table: string, where: string, ...p: unknown[]) =>
    (store.db.prepare(`SELECT COUNT(*) AS n FROM ${table} ${where ? `WHERE ${where}` : ''}`).get(...p) as { n: number }).n;
  const page = { offset: 0, limit: 1 };
  for (const workspace of [undefined, ...WS, 'none.org']) {
    const w = workspace === undefined ? '' : 'workspace = ?';
    const wp = workspace === undefined ? [] : [workspace];
    const and = (c: string) => [w, c].filter(Boolean).join(' AND ');
    expect(store.assets.list({ workspace }, page).total).toBe(count('assets', w, ...wp));
    for (const status_code of CODES) {
      expect(store.assets.list({ workspace, status_code }, page).total).toBe(count('assets', and('status_code = ?'), ...wp, status_code));
      for (const asset_type of TYPES) {
        expect(store.assets.list({ workspace, status_code, asset_type }, page).total).toBe(
          count('assets', and('status_code = ? AND asset_type = ?'), ...wp, status_code, asset_type),
        );
      }
    }
    for (const asset_type of TYPES) {
      expect(store.assets.list({ workspace, asset_type }, page).total).toBe(count('assets', and('asset_type = ?'), ...wp, asset_type));
    }
    expect(store.vulns.list({ workspace }, page).total).toBe(count('vulnerabilities', w, ...wp));
    for (const severity of [['high'], ['critical', 'info'], ['low', 'low'], ['medium']]) {
      const uniq = [...new Set(severity)];
      expect(store.vulns.list({ workspace, severity }, page).total).toBe(
        count('vulnerabilities', and(`severity IN (${uniq.map(() => '?').join(', ')})`), ...wp, ...uniq),
      );
    }
  }
}

describe('list totals from counters', () => {
  it('equal COUNT(*) for every workspace, status, type and severity filter after random changes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 25 }), (ops) => {
        const store = memStore();
        for (const o of ops) {
          apply(store, o);
          checkTotals(store);
        }
        store.close();
      }),
      { numRuns: 40 },
    );
  });

  it('still counts filters the counters cannot answer (search, confidence) with a real COUNT', () => {
    const store = memStore();
    store.assets.upsertMany('a.com', [{ asset_value: 'x.a.com', title: 'Login' }, { asset_value: 'y.a.com', title: 'Home' }]);
    store.vulns.upsertMany('a.com', [
      { vuln_info: 'v1', asset_value: 'x.a.com', severity: 'high', confidence: 'Firm' },
      { vuln_info: 'v2', asset_value: 'y.a.com', severity: 'high' },
    ]);
    expect(store.assets.list({ workspace: 'a.com', search: 'Login' }, { offset: 0, limit: 10 }).total).toBe(1);
    expect(store.vulns.list({ workspace: 'a.com', severity: ['high'], confidence: 'Firm' }, { offset: 0, limit: 10 }).total).toBe(1);
    expect(store.vulns.list({ workspace: 'a.com', severity: ['high'], asset_value: 'y.a' }, { offset: 0, limit: 10 }).total).toBe(1);
    expect(store.vulns.list({ workspace: 'a.com', severity: ['high'] }, { offset: 0, limit: 10 }).total).toBe(2);
  });
});
