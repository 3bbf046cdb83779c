/**
 * Every filtered list query and every default sort must be served by an index: the plan may not
 * contain a bare `SCAN <table>` (a full table scan) nor sort the page in a temp b-tree, and an
 * exact filter must seek (`SEARCH … USING INDEX`) rather than walk a whole index.
 * Statements are captured as the repositories run them, so the plans are of the real SQL.
 */
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/index.js';
import { memStore, page } from './helpers.js';

interface Captured {
  sql: string;
  args: unknown[];
}

/** Records the SQL and arguments of every statement `fn` runs. */
function capture(store: Store, fn: () => void): Captured[] {
  const seen: Captured[] = [];
  const db = store.db as Database.Database & { prepare: Database.Database['prepare'] };
  const original = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const stmt = original(sql);
    return new Proxy(stmt, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'all' || prop === 'get' || prop === 'run') {
          return (...args: unknown[]) => {
            seen.push({ sql, args });
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }) as Database.Database['prepare'];
  try {
    fn();
  } finally {
    db.prepare = original;
  }
  return seen;
}

function plan(store: Store, q: Captured): string[] {
  return (store.db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.args) as { detail: string }[]).map((r) => r.detail);
}

/** Asserts the queries `fn` runs against `table` are index-served; returns their plans for extra checks. */
function expectIndexed(store: Store, table: string, fn: () => void, opts: { sortedByIndex?: boolean; seek?: boolean } = {}): string[][] {
  const queries = capture(store, fn).filter((q) => new RegExp(`\\b${table}\\b`).test(q.sql) && !/^\s*INSERT/i.test(q.sql));
  expect(queries.length).toBeGreaterThan(0);
  const plans = queries.map((q) => plan(store, q));
  for (const [i, p] of plans.entries()) {
    const bare = p.filter((d) => new RegExp(`^SCAN ${table}$`).test(d));
    expect(bare, `${queries[i]!.sql}\n${p.join('\n')}`).toEqual([]);
    if (opts.seek) {
      const walks = p.filter((d) => new RegExp(`^SCAN ${table}\\b`).test(d));
      expect(walks, `${queries[i]!.sql}\n${p.join('\n')}`).toEqual([]);
    }
    if (opts.sortedByIndex !== false && /ORDER BY/.test(queries[i]!.sql)) {
      expect(p.filter((d) => /TEMP B-TREE FOR ORDER BY/.test(d)), `${queries[i]!.sql}\n${p.join('\n')}`).toEqual([]);
    }
  }
  return plans;
}

const P = page(0, 20);

describe('query plans', () => {
  it('runs', () => {
    const s = memStore();
    expectIndexed(s, 'runs', () => s.runs.list({}, P));
    for (const f of [{ status: 'running' as const }, { workflow_name: 'w' }, { workspace: 'ws' }, { run_group_id: 'g' }, { status: 'queued' as const, workspace: 'ws' }]) {
      expectIndexed(s, 'runs', () => s.runs.list(f, P), { seek: true });
    }
    // A substring cannot seek; it scans the narrow target index (count) or walks the sort index (page).
    expectIndexed(s, 'runs', () => s.runs.list({ target: 'x' }, P));
    expectIndexed(s, 'runs', () => s.runs.byGroup('g'), { seek: true });
    expectIndexed(s, 'runs', () => s.runs.claimNext(1), { seek: true });
    expectIndexed(s, 'runs', () => s.runs.listActive(), { seek: true });
    expectIndexed(s, 'runs', () => s.runs.countByStatus());
  });

  it('step results', () => {
    const s = memStore();
    for (const f of [{ workspace: 'ws' }, { status: 'running' as const }, { step_type: 'bash' }, { run_id: 1 }]) {
      expectIndexed(s, 'step_results', () => s.steps.list(f, P), { seek: true });
    }
    expectIndexed(s, 'step_results', () => s.steps.listByRun(1), { seek: true });
    expectIndexed(s, 'step_results', () => s.steps.failUnfinished(1, 'x'), { seek: true });
  });

  it('artifacts', () => {
    const s = memStore();
    expectIndexed(s, 'artifacts', () => s.artifacts.list({}, P));
    expectIndexed(s, 'artifacts', () => s.artifacts.list({ workspace: 'ws' }, P), { seek: true });
    expectIndexed(s, 'artifacts', () => s.artifacts.listByRun(1), { seek: true });
  });

  it('assets', () => {
    const s = memStore();
    expectIndexed(s, 'assets', () => s.assets.list({}, P));
    for (const f of [{ workspace: 'ws' }, { asset_type: 'url' }, { status_code: 200 }, { workspace: 'ws', asset_type: 'url' }, { workspace: 'ws', status_code: 200 }]) {
      expectIndexed(s, 'assets', () => s.assets.list(f, P), { seek: true });
    }
    expectIndexed(s, 'assets', () => s.assets.upsertMany('ws', [{ asset_value: 'a' }, { asset_value: 'a' }]), { seek: true });
    for (const fn of [() => s.assets.addedBetween('ws', 'a', 'b'), () => s.assets.changedSince('ws', 'a', 'b'), () => s.assets.removedBefore('ws', 'a')]) {
      const plans = expectIndexed(s, 'assets', fn, { sortedByIndex: false, seek: true });
      expect(plans.flat().some((d) => /^SEARCH assets USING INDEX idx_assets_ws_(created|updated|seen)/.test(d))).toBe(true);
    }
  });

  it('vulnerabilities', () => {
    const s = memStore();
    expectIndexed(s, 'vulnerabilities', () => s.vulns.list({}, P));
    for (const f of [{ workspace: 'ws' }, { severity: ['high'] }, { confidence: 'Firm' }, { workspace: 'ws', severity: ['high'] }]) {
      expectIndexed(s, 'vulnerabilities', () => s.vulns.list(f, P), { seek: true });
    }
    // Several severities merge several index ranges, which needs a sort of the (small) result.
    expectIndexed(s, 'vulnerabilities', () => s.vulns.list({ severity: ['high', 'critical'] }, P), { sortedByIndex: false, seek: true });
    expectIndexed(s, 'vulnerabilities', () => s.vulns.list({ asset_value: 'a.com' }, P));
    expectIndexed(s, 'vulnerabilities', () => s.vulns.upsertMany('ws', [{ vuln_info: 'x' }, { vuln_info: 'x' }]), { seek: true });
    for (const fn of [() => s.vulns.addedBetween('ws', 'a', 'b'), () => s.vulns.changedBetween('ws', 'a', 'b'), () => s.vulns.removedBefore('ws', 'a')]) {
      expectIndexed(s, 'vulnerabilities', fn, { sortedByIndex: false, seek: true });
    }
  });

  it('event logs', () => {
    const s = memStore();
    for (const f of [{ topic: 't' }, { name: 'n' }, { source: 's' }, { workspace: 'w' }, { run_id: 'r' }, { workflow_name: 'wf' }, { processed: false }, { topic: 't', processed: true }]) {
      expectIndexed(s, 'event_logs', () => s.events.list(f, P), { seek: true });
    }
    expectIndexed(s, 'event_logs', () => s.events.listUnprocessed(10), { seek: true });
  });

  it('the diff window counts of assets and findings are answered from an index alone', () => {
    const s = memStore();
    const from = '2026-01-01T00:00:00.000Z';
    const to = '2026-01-02T00:00:00.000Z';
    for (const [table, counts] of [['assets', () => s.assets.diffCounts('ws', from, to)], ['vulnerabilities', () => s.vulns.diffCounts('ws', from, to)]] as const) {
      const plans = expectIndexed(s, table, counts, { seek: true });
      expect(plans).toHaveLength(3);
      // No table row is read: the created_at filter after the updated_at/last_seen_at range is in the index.
      for (const p of plans) expect(p.join('\n')).toMatch(/USING COVERING INDEX/);
    }
  });

  it('asset and vulnerability diffs, schedules, workflows, workspaces', () => {
    const s = memStore();
    expectIndexed(s, 'asset_diffs', () => s.assetDiffs.list({}, P));
    expectIndexed(s, 'asset_diffs', () => s.assetDiffs.list({ workspace: 'ws' }, P), { seek: true });
    expectIndexed(s, 'vuln_diffs', () => s.vulnDiffs.list({}, P));
    expectIndexed(s, 'vuln_diffs', () => s.vulnDiffs.list({ workspace: 'ws' }, P), { seek: true });
    expectIndexed(s, 'schedules', () => s.schedules.list(P), { sortedByIndex: false });
    expectIndexed(s, 'schedules', () => s.schedules.listEnabled(), { sortedByIndex: false, seek: true });
    expectIndexed(s, 'workflows', () => s.workflows.list({}, P), { seek: true }); // hidden = 0 is always applied
    expectIndexed(s, 'workflows', () => s.workflows.list({ kind: 'flow' }, P), { seek: true });
    expectIndexed(s, 'workflows', () => s.workflows.list({ tags: ['recon'] }, P), { seek: true });
    expectIndexed(s, 'workspaces', () => s.workspaces.list({}, P));
    expectIndexed(s, 'workspaces', () => s.workspaces.list({ data_source: 'cloud' }, P), { seek: true });
    expectIndexed(s, 'workspaces', () => s.workspaces.list({ search: 'a' }, P));
  });

  it('stats reads counters and indexes only', () => {
    const s = memStore();
    for (const table of ['runs', 'schedules', 'workspaces', 'assets', 'vulnerabilities']) {
      const queries = capture(s, () => s.stats.snapshot()).filter((q) => q.sql.includes(table));
      for (const q of queries) expect(plan(s, q).filter((d) => d === `SCAN ${table}`), q.sql).toEqual([]);
    }
    const sqls = capture(s, () => s.stats.snapshot()).map((q) => q.sql).join('\n');
    expect(sqls).not.toMatch(/FROM (assets|vulnerabilities)\b/);
  });
});
