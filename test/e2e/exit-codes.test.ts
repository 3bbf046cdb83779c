import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { finalJson, processesWith, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// The exit codes of `osm run` that scripts and CI rely on (issue 16; `osm run --help`, README).
const FIX = join(ROOT, 'test/fixtures/engine');
let base: string;
let cleanup: () => void;

function osm(args: string[], opts: Parameters<typeof runOsm>[1] = {}) {
  return runOsm(['-b', base, '-F', FIX, ...args], opts);
}

async function waitFor(check: () => boolean, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-exit-'));
});
afterAll(() => cleanup());

describe('osm run exit codes', () => {
  it('documents them in --help', async () => {
    const r = await osm(['run', '--help']);
    expect(r.code).toBe(0);
    const help = r.stdout.slice(r.stdout.indexOf('Exit codes:'));
    expect(help).toMatch(/^Exit codes:\n/);
    for (const code of ['0', '1', '2', '130']) expect(help).toMatch(new RegExp(`\\n  ${code} +\\S`));
  });

  it('0 when every module completed', async () => {
    const r = await osm(['run', '-m', 'bash-forms', '-t', 'ok.example.com']);
    expect(r.code).toBe(0);
  });

  it('1 when a step fails', async () => {
    const r = await osm(['run', '-m', 'mod-fail', '-t', 'fail.example.com']);
    expect(r.code).toBe(1);
  });

  it('1 for a flow whose module failed, while the run record keeps the reference status completed', async () => {
    const r = await osm(['run', '-f', 'flow', '-t', 'flow.example.com', '--json']);
    expect(r.code).toBe(1);
    expect(finalJson(r.stdout).status).toBe('completed');
  });

  it('2 for usage and validation errors (nothing runs)', async () => {
    expect((await osm(['run', '-m', 'bash-forms', '-t', 'a.example.com', '--no-such-option'])).code).toBe(2);
    expect((await osm(['run', '-m', 'bash-forms', '-t', 'a.example.com', '--heuristics-check', 'reckless'])).code).toBe(2);
    expect((await osm(['run', '-m', 'bash-forms'])).code).toBe(2);
    expect((await osm(['run', '-m', 'no-such-workflow', '-t', 'a.example.com'])).code).toBe(2);
    const invalid = join(base, 'invalid.yaml');
    writeFileSync(invalid, 'kind: module\nname: invalid\nsteps:\n  - name: x\n    type: nope\n');
    const r = await osm(['run', '-m', invalid, '-t', 'a.example.com']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('validation error');
  });

  it('130 when interrupted with SIGINT', async () => {
    const marker = `osm-exit-${process.pid}-${Date.now()}`;
    let child: ChildProcess | undefined;
    const p = osm(['run', '-m', 'long', '-t', 'int.example.com', '-p', `marker=${marker}`], { onSpawn: (c) => (child = c) });
    expect(await waitFor(() => processesWith(`sleep 30; echo ${marker}`).length > 0)).toBe(true);
    child!.kill('SIGINT');
    expect((await p).code).toBe(130);
  });
});
