/** Deep pages (the deferred join from DEFERRED_JOIN_OFFSET on) return the plain OFFSET query's rows, on both engines. */
import { describe, expect, it } from 'vitest';
import { DEFERRED_JOIN_OFFSET } from '../../../../src/store/sql.js';
import { ENGINES, useStore } from './engines.js';

describe.each(ENGINES)('deep pages on $name', (engine) => {
  const s = useStore(engine);

  it('vulnerabilities and assets: the same ids in the same order at every offset, filters kept', async () => {
    const vulns = Array.from({ length: 700 }, (_, i) => ({ vuln_info: `t-${i % 7}`, asset_value: `h${i}.example.com`, severity: ['low', 'high', 'info'][i % 3] }));
    // Two timestamps: many rows share created_at, so the id tiebreak of the order is exercised.
    await s().vulns.upsertMany('ws', vulns.slice(0, 350), '2026-01-01T00:00:00.000Z');
    await s().vulns.upsertMany('ws', vulns.slice(350), '2026-01-02T00:00:00.000Z');
    const all = (await s().vulns.list({ workspace: 'ws' }, { offset: 0, limit: 10_000 })).data.map((v) => v.id);
    expect(all).toHaveLength(700);
    for (const offset of [DEFERRED_JOIN_OFFSET - 1, DEFERRED_JOIN_OFFSET, 349, 450, 690, 700, 5000]) {
      const page = await s().vulns.list({ workspace: 'ws' }, { offset, limit: 20 });
      expect(page.data.map((v) => v.id)).toEqual(all.slice(offset, offset + 20));
      expect(page.total).toBe(700);
    }
    const high = (await s().vulns.list({ workspace: 'ws', severity: ['high'] }, { offset: 0, limit: 10_000 })).data.map((v) => v.id);
    expect((await s().vulns.list({ workspace: 'ws', severity: ['high'] }, { offset: 210, limit: 5 })).data.map((v) => v.id)).toEqual(high.slice(210, 215));

    const assets = Array.from({ length: 450 }, (_, i) => ({ asset_value: `a${i}.example.com`, url: `https://a${i}.example.com`, status_code: i % 2 ? 200 : 404 }));
    await s().assets.upsertMany('ws', assets, '2026-01-03T00:00:00.000Z');
    const ok = (await s().assets.list({ workspace: 'ws', status_code: 200 }, { offset: 0, limit: 10_000 })).data.map((a) => a.id);
    expect(ok).toHaveLength(225);
    const deep = await s().assets.list({ workspace: 'ws', status_code: 200 }, { offset: DEFERRED_JOIN_OFFSET + 5, limit: 30 });
    expect(deep.data.map((a) => a.id)).toEqual(ok.slice(DEFERRED_JOIN_OFFSET + 5, DEFERRED_JOIN_OFFSET + 35));
    expect(deep.data.every((a) => a.status_code === 200)).toBe(true);
  });
});
