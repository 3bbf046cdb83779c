import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let base: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-query-'));
});
afterAll(() => cleanup());

const osm = (args: string[]) => runOsm(['-b', base, ...args]);

describe('osm query', () => {
  it('runs: table, JSON, filters and paging; steps of one run; clear errors', async () => {
    for (const t of ['a.example.com', 'b.example.org']) expect((await osm(['run', '-m', 'sample-recon', '-t', t])).code).toBe(0);
    const all = JSON.parse((await osm(['query', 'runs', '--json'])).stdout);
    expect(all.total).toBe(2);
    expect(all.data.map((r: { target: string }) => r.target)).toEqual(['b.example.org', 'a.example.com']);
    const one = JSON.parse((await osm(['query', 'runs', '-t', 'a.example.com', '--status', 'completed', '--json'])).stdout);
    expect(one.data).toHaveLength(1);
    expect(one.data[0]).toMatchObject({ workflow_name: 'sample-recon', status: 'completed' });
    expect(JSON.parse((await osm(['query', 'runs', '--status', 'failed', '--json'])).stdout).total).toBe(0);
    const paged = JSON.parse((await osm(['query', 'runs', '--limit', '1', '--offset', '1', '--json'])).stdout);
    expect(paged.data.map((r: { target: string }) => r.target)).toEqual(['a.example.com']);
    const table = await osm(['query', 'runs', '--limit', '1']);
    expect(table.stdout).toContain('b.example.org');
    expect(table.stdout).toContain('showing 1 of 2 runs');

    const steps = JSON.parse((await osm(['query', 'steps', one.data[0].run_uuid, '--json'])).stdout);
    expect(steps.data.length).toBeGreaterThan(0);
    expect(steps.data.every((s: { status: string }) => s.status === 'completed')).toBe(true);
    expect((await osm(['query', 'steps', String(one.data[0].id)])).stdout).toContain('dedupe');

    const bad = await osm(['query', 'runs', '--status', 'bogus']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--status must be one of");
    const missing = await osm(['query', 'steps', '424242']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Run not found');
    expect((await osm(['query', 'runs', '--offset', '-1'])).stderr).toContain('--offset must be a whole number');
    expect(JSON.parse((await osm(['query', 'vulns', '--json'])).stdout).total).toBe(0);
  });

  it('a run with the global --org puts its workspace (and the run) in that org; listings filter by it', async () => {
    expect((await osm(['org', 'create', 'acme'])).code).toBe(0);
    const r = await osm(['--org', 'acme', 'run', '-m', 'sample-recon', '-t', 'orgtest.net']);
    expect(r.code, r.stderr).toBe(0);
    const q = await osm(['--org', 'acme', 'query', 'runs', '--json']);
    expect(q.stderr).toBe('');
    const acme = JSON.parse(q.stdout);
    expect(acme.data.map((x: { target: string }) => x.target)).toEqual(['orgtest.net']);
    expect(JSON.parse((await osm(['query', 'runs', '--org', 'default', '--json'])).stdout).data.some((x: { target: string }) => x.target === 'orgtest.net')).toBe(false);
    const unknown = await osm(['--org', 'nope', 'run', '-m', 'sample-recon', '-t', 'x.net']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('org not found: nope');
  });

  it('worker queue new|list|run: the reference\'s database queue, oldest first', async () => {
    const added = await osm(['worker', 'queue', 'new', '-m', 'sample-recon', '-t', 'q1.example.com', '-t', 'q2.example.com', '--json']);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout).map((r: { status: string }) => r.status)).toEqual(['queued', 'queued']);
    const listed = JSON.parse((await osm(['worker', 'queue', 'list', '--json'])).stdout);
    expect(listed.total).toBe(2);
    expect(listed.data.map((r: { target: string }) => r.target)).toEqual(['q1.example.com', 'q2.example.com']);
    const ran = await osm(['worker', 'queue', 'run', '--concurrency', '2', '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
    expect(JSON.parse((await osm(['worker', 'queue', 'list', '--json'])).stdout).total).toBe(0);
  });
});
