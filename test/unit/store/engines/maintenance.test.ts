/** The maintenance repository (liveness, integrity, tables, schema version) on both engines. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';

describe.each(ENGINES)('maintenance on $name', (engine) => {
  const s = useStore(engine);

  it('answers, checks, lists tables with counts and columns, and reports a current schema', async () => {
    await s().maintenance.ping();
    expect(await s().maintenance.quickCheck()).toBe('ok');
    const tables = await s().maintenance.tables();
    expect(tables).toEqual([...tables].sort());
    for (const t of ['runs', 'step_results', 'assets', 'vulnerabilities', 'workspaces', 'schema_migrations', 'run_attempts']) expect(tables).toContain(t);
    expect(await s().maintenance.count('runs')).toBe(0);
    await s().runs.create({ workflow_name: 'wf', workflow_kind: 'flow', target: 't' });
    expect(await s().maintenance.count('runs')).toBe(1);
    const cols = await s().maintenance.columns('runs');
    expect(cols[0]).toMatchObject({ name: 'id' });
    expect(cols.map((c) => c.name)).toContain('priority_rank');
    await expect(s().maintenance.count('runs; DROP TABLE runs')).rejects.toThrow(/unknown table/);
    await expect(s().maintenance.columns('nope')).rejects.toThrow(/unknown table/);
    const latest = await s().maintenance.latestVersion();
    expect(latest).toBeGreaterThan(10);
    expect(await s().maintenance.schemaVersion()).toBe(latest);
    expect(await s().maintenance.pending()).toEqual([]);
  });

  it('readOnlyQuery: one SELECT, at most maxRows rows, never a write; bad SQL is a 400', async () => {
    for (const t of ['a', 'b', 'c']) await s().runs.create({ workflow_name: `wf-${t}`, workflow_kind: 'flow', target: t });
    const r = await s().maintenance.readOnlyQuery('SELECT workflow_name, target FROM runs ORDER BY id', 2);
    expect(r.columns).toEqual(['workflow_name', 'target']);
    expect(r.rows).toEqual([
      { workflow_name: 'wf-a', target: 'a' },
      { workflow_name: 'wf-b', target: 'b' },
    ]);
    expect((await s().maintenance.readOnlyQuery('SELECT COUNT(*) AS n FROM runs', 10)).rows).toEqual([{ n: 3 }]);
    // No rows: the columns are still known.
    expect(await s().maintenance.readOnlyQuery("SELECT id, target FROM runs WHERE target = 'none'", 10)).toEqual({ columns: ['id', 'target'], rows: [] });
    for (const bad of ['DELETE FROM runs', "UPDATE runs SET target = 'x'", 'SELECT 1; DELETE FROM runs', 'SELECT * FROM no_such_table', 'SELEC 1']) {
      const err = await s().maintenance.readOnlyQuery(bad, 10).then(
        () => undefined,
        (e: unknown) => e as { status?: number; code?: string },
      );
      expect(err, bad).toMatchObject({ status: 400, code: 'OSM_ERR_VALIDATION' });
    }
    expect(await s().maintenance.count('runs')).toBe(3);
  });
});
