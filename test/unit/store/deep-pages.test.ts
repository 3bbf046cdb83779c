import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/index.js';
import { DEFERRED_JOIN_OFFSET } from '../../../src/store/sql.js';

describe('deep pages', () => {
  it('return the same rows with the deferred join as the plain OFFSET query would', () => {
    const store = openStore(':memory:');
    const rows = Array.from({ length: 700 }, (_, i) => ({ vuln_info: `t-${i % 7}`, asset_value: `h${i}.example.com`, severity: ['low', 'high', 'info'][i % 3] }));
    store.vulns.upsertMany('ws', rows, '2026-01-01T00:00:00.000Z');
    const all = store.vulns.list({ workspace: 'ws' }, { offset: 0, limit: 10_000 }).data.map((v) => v.id);
    for (const offset of [DEFERRED_JOIN_OFFSET - 1, DEFERRED_JOIN_OFFSET, 450, 690, 700, 5000]) {
      const page = store.vulns.list({ workspace: 'ws' }, { offset, limit: 20 });
      expect(page.data.map((v) => v.id)).toEqual(all.slice(offset, offset + 20));
      expect(page.total).toBe(700);
    }
    const high = store.vulns.list({ workspace: 'ws', severity: ['high'] }, { offset: 0, limit: 10_000 }).data.map((v) => v.id);
    expect(store.vulns.list({ workspace: 'ws', severity: ['high'] }, { offset: 210, limit: 5 }).data.map((v) => v.id)).toEqual(high.slice(210, 215));
    store.close();
  });
});
