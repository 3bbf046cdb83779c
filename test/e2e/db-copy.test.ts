/**
 * `osm db copy` between a real SQLite base and a fresh PostgreSQL database (created and dropped
 * here): a base filled through real code paths (a workflow run, tool imports, an org, the
 * workflow index) goes to PostgreSQL and back into a fresh base; counts and checksums verify on
 * each leg, a second copy duplicates nothing, and the round-tripped base reads the same.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalJson, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../helpers/pg.js';

const available = await pgAvailable('db copy tests');
const fx = (name: string) => join(ROOT, 'test/fixtures/tools', name);
const WF = join(ROOT, 'test/fixtures/workflows/valid');

interface CopyJson {
  ok: boolean;
  tables: { table: string; source_rows: number; target_rows: number; source_checksum: string; target_checksum: string; ok: boolean }[];
}

describe.skipIf(!available)('osm db copy', () => {
  let a: { dir: string; cleanup: () => void };
  let b: { dir: string; cleanup: () => void };
  let pg: PgDatabase;
  const osm = (base: string, args: string[]) => runOsm(['-b', base, '-F', WF, ...args], { timeoutMs: 180_000 });

  beforeAll(async () => {
    a = tempDir('osm-copy-a-');
    b = tempDir('osm-copy-b-');
    pg = await createPgDatabase('osm_copy');
  });
  afterAll(async () => {
    a?.cleanup();
    b?.cleanup();
    await pg?.drop();
  });

  it('copies a filled base to PostgreSQL and back, verified, idempotent', async () => {
    // Fill base A through the ordinary commands.
    const run = await osm(a.dir, ['run', '-m', 'simple-bash', '-t', 'example.com', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(finalJson(run.stdout)).toBeTruthy();
    for (const [tool, file, ws] of [['nmap', 'nmap.xml', 'lab'], ['sslscan', 'sslscan.xml', 'tls'], ['naabu', 'naabu.jsonl', 'lab']] as const) {
      const r = await osm(a.dir, ['import', tool, fx(file), '-w', ws]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect((await osm(a.dir, ['db', 'index', 'workflow'])).code).toBe(0);
    const org = await osm(a.dir, ['org', 'create', 'Acme']);
    expect(org.code, org.stderr).toBe(0);
    const countsA = JSON.parse((await osm(a.dir, ['db', 'list', '--json'])).stdout) as Record<string, number>;
    expect(countsA.runs).toBeGreaterThan(0);
    expect(countsA.step_results).toBeGreaterThan(0);
    expect(countsA.assets).toBeGreaterThan(0);
    expect(countsA.vulnerabilities).toBeGreaterThan(0);
    expect(countsA.workflows).toBeGreaterThan(0);
    expect(countsA.orgs).toBe(2);

    // SQLite → PostgreSQL, twice: the same rows and sums both times (truncate-and-reload).
    const to1 = await osm(a.dir, ['db', 'copy', '--to', pg.url, '--json']);
    expect(to1.code, to1.stderr).toBe(0);
    const first = JSON.parse(to1.stdout) as CopyJson;
    expect(first.ok).toBe(true);
    const rowsOf = (r: CopyJson) => Object.fromEntries(r.tables.map((t) => [t.table, t.target_rows]));
    // schema_migrations, leases (process state of each side) and store_meta (each database's own identity) are not copied.
    const own = new Set(['schema_migrations', 'leases', 'store_meta']);
    for (const [table, n] of Object.entries(countsA)) if (!own.has(table)) expect(rowsOf(first)[table], table).toBe(n);
    const to2 = JSON.parse((await osm(a.dir, ['db', 'copy', '--to', pg.url, '--json'])).stdout) as CopyJson;
    expect(to2.ok).toBe(true);
    expect(to2.tables.map((t) => [t.table, t.target_rows, t.target_checksum])).toEqual(first.tables.map((t) => [t.table, t.target_rows, t.target_checksum]));

    // PostgreSQL → a fresh SQLite base B: the same sums as base A had.
    const from = await osm(b.dir, ['db', 'copy', '--from', pg.url, '--json']);
    expect(from.code, from.stderr).toBe(0);
    const back = JSON.parse(from.stdout) as CopyJson;
    expect(back.ok).toBe(true);
    expect(back.tables.map((t) => [t.table, t.target_rows, t.target_checksum]).sort()).toEqual(first.tables.map((t) => [t.table, t.source_rows, t.source_checksum]).sort());
    const countsB = JSON.parse((await osm(b.dir, ['db', 'list', '--json'])).stdout) as Record<string, number>;
    expect(countsB).toEqual(countsA);
    // The copied base reads the same through the ordinary commands (lists, counters, stats).
    for (const args of [['assets', '-w', 'lab', '--json'], ['assets', '--stats', '--json'], ['vulns', '-w', 'tls', '--json'], ['org', 'list', '--json']]) {
      const x = await osm(a.dir, args);
      const y = await osm(b.dir, args);
      expect(y.code, y.stderr).toBe(0);
      expect(JSON.parse(y.stdout), args.join(' ')).toEqual(JSON.parse(x.stdout));
    }
    // New rows after the copy get fresh ids (the SQLite sequences moved past the copied ones).
    const again = await osm(b.dir, ['run', '-m', 'simple-bash', '-t', 'example.org', '--json']);
    expect(again.code, again.stderr).toBe(0);
    // About 25 CLI processes: minutes on a shared, busy machine.
  }, 600_000);

  it('a plain (non-JSON) copy prints per-table lines and the verdict; an unreachable target names host:port and the cause', async () => {
    const r = await osm(a.dir, ['db', 'copy', '--to', pg.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[\d+\/\d+\] assets: \d+ rows/);
    expect(r.stdout).toMatch(/counts and checksums match/);
    const bad = await osm(a.dir, ['db', 'copy', '--to', 'postgresql://osm:hunter22pw@127.0.0.1:1/nope']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('127.0.0.1:1');
    expect(bad.stderr).toMatch(/connection refused/);
    expect(bad.stderr + bad.stdout).not.toContain('hunter22pw');
    const both = await osm(a.dir, ['db', 'copy']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('exactly one of --to');
  }, 300_000);
});
