import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, finalJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// `script` gives the CLI a pseudo-terminal, the only place the spinner may appear.
const hasScript = spawnSync('script', ['--version']).status === 0;

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = tempDir('osm-spin-'));
  mkdirSync(join(dir, 'wf'));
  writeFileSync(
    join(dir, 'wf/slow.yaml'),
    ['name: slow', 'kind: module', 'steps:', '  - name: wait-a-bit', '    type: bash', '    command: sleep 3', ''].join('\n'),
  );
});
afterAll(() => cleanup());

function runInTerminal(extra: string[], setup = 'stty cols 120 rows 40; '): string {
  const args = [BIN, '-b', join(dir, 'base'), '-F', join(dir, 'wf'), 'run', '-m', 'slow', '-t', 'example.com', ...extra];
  const cmd = setup + [process.execPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", TERM: "xterm" };
  delete env.CI; // ora (rightly) stays quiet in CI
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env, encoding: 'utf8', timeout: 60_000, maxBuffer: 1024 * 1024 });
  expect(r.status, r.stdout.slice(-2000)).toBe(0);
  return r.stdout;
}

describe.skipIf(!hasScript)('spinner for long steps', () => {
  it('stays off on a terminal that reports no width (ora would redraw forever)', () => {
    const out = runInTerminal([], 'stty cols 0 rows 0; ');
    expect(out).not.toContain('running for');
  });

  it('shows the long-running step on a terminal, then clears it before the summary', () => {
    const out = runInTerminal([]);
    expect(out).toContain('wait-a-bit running for');
    expect(out).toMatch(/Status: completed/);
  });

  it('never appears with --json (output stays parseable) or --silent', () => {
    const json = runInTerminal(['--json']);
    expect(json).not.toContain('running for');
    expect(finalJson(json).status).toBe('completed');
    expect(runInTerminal(['-q'])).not.toContain('running for');
  });
});
