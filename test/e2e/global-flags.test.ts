import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { fitColumns } from '../../src/cli/output.js';
import { usageExampleRequest } from '../../src/cli/examples.js';

let base: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-global-'));
});
afterAll(() => cleanup());

const osm = (args: string[]) => runOsm(['-b', base, ...args]);

describe('reference global flags', () => {
  it('--log-file copies everything printed (stdout and stderr, no colours) into a 0600 file', async () => {
    const file = join(base, 'logs', 'run.log');
    const r = await runOsm(['-b', base, '--log-file', file, 'run', '-m', 'sample-recon', '-t', 'example.com'], { env: { FORCE_COLOR: '1', NO_COLOR: '' } });
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('Workflow loaded: sample-recon');
    expect(text).toContain('Execution Summary');
    expect(r.stdout).toMatch(/\u001b\[/); // the terminal got colours …
    expect(text).not.toMatch(/\u001b/); // … the file did not
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const bad = await osm(['--log-file', file, 'run', '-m', 'no-such-workflow', '-t', 'a.com']);
    expect(bad.code).toBe(2);
    expect(readFileSync(file, 'utf8')).toContain('Error: ');
  });

  it('--log-file-tmp prints the path of the temp log it writes', async () => {
    const r = await osm(['--log-file-tmp', 'workflow', 'list']);
    expect(r.code).toBe(0);
    const m = /Logging to (\S+)/.exec(r.stderr);
    expect(m).not.toBeNull();
    const path = m![1]!;
    expect(path.startsWith(tmpdir())).toBe(true);
    expect(readFileSync(path, 'utf8')).toContain('sample-recon');
  });

  it('--disable-db runs against a throw-away database: nothing is recorded, nothing left behind', async () => {
    const before = readdirSync(tmpdir()).filter((n) => n.startsWith('osm-nodb-')).length;
    const runs = async () => (JSON.parse((await osm(['db', 'list', '--json'])).stdout) as Record<string, number>).runs;
    const runsBefore = await runs();
    const r = await osm(['--disable-db', 'run', '-m', 'sample-recon', '-t', 'nodbtest.org']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('throw-away database');
    expect(r.stdout).toContain('Execution Summary');
    expect(await runs()).toBe(runsBefore);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('osm-nodb-')).length).toBe(before);
    const db = await osm(['--disable-db', 'db', 'clean', '--force']);
    expect(db.code).toBe(1);
    expect(db.stderr).toContain('drop --disable-db');
    // The state files in the workspace are still written (only the database is skipped).
    expect(existsSync(join(base, 'workspaces', 'nodbtest.org'))).toBe(true);
  });

  it('-H / --full-usage-example print examples instead of running the command', async () => {
    const r = await osm(['run', '-H']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('osm run -m recon -t x.com -F ./workflows -b ~/base -p threads=20');
    expect(r.stdout).not.toContain('osm serve');
    const full = await osm(['--full-usage-example']);
    expect(full.stdout).toContain('osm serve');
    expect(full.stdout).toContain('osm run -f general');
    expect(usageExampleRequest(['run', '-t', 'x', '--', '-H'], new Set(['run']))).toBeUndefined();
    expect(usageExampleRequest(['-H', 'scan'], new Set(['run', 'scan']))).toEqual({ full: false, command: 'scan' });
  });

  it('--force works before or after the command; --width wraps tables; --skip-auto-setup and --spinner are accepted', async () => {
    expect((await osm(['--force', 'db', 'clean'])).code).toBe(0);
    expect((await osm(['db', 'clean', '--force'])).code).toBe(0);
    const wide = await osm(['workflow', 'list']);
    const narrow = await osm(['--width', '60', 'workflow', 'list']);
    const longest = (s: string) => Math.max(...s.split('\n').map((l) => [...l].length));
    expect(longest(wide.stdout)).toBeGreaterThan(60);
    expect(longest(narrow.stdout)).toBeLessThanOrEqual(60);
    const bad = await osm(['--width', 'wide', 'workflow', 'list']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--width must be a whole number');
    expect((await osm(['--skip-auto-setup', '--spinner', 'workflow', 'list'])).code).toBe(0);
  });

  it('--chunk-threads runs a chunk with its own concurrency and needs --chunk-part', async () => {
    const list = join(base, 'chunk-targets.txt');
    writeFileSync(list, 'c1.example.com\nc2.example.com\nc3.example.com\n');
    const r = await osm(['run', '-m', 'sample-recon', '-T', list, '--chunk-size', '2', '--chunk-part', '0', '--chunk-threads', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Processing chunk 1/2 (2 targets, indices 0-1)');
    expect(r.stdout).toContain('Running against 2 targets (concurrency: 2)');
    const bad = await osm(['run', '-m', 'sample-recon', '-T', list, '--chunk-threads', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--chunk-threads goes with --chunk-part');
  });

  it('fitColumns shrinks the widest columns first and never below the minimum', () => {
    expect(fitColumns([5, 5], 80)).toBeUndefined();
    const w = fitColumns([10, 50, 10], 40)!;
    expect(w.reduce((a, b) => a + b, 0) + 4).toBe(40);
    expect(w[0]).toBe(12);
    expect(w[2]).toBe(12);
    expect(fitColumns([30, 30], 10)).toEqual([6, 6]);
  });
});
