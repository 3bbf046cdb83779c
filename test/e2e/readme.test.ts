/**
 * Every command in the README's ```sh blocks runs here, so the README cannot drift: each block is
 * one bash script (`set -e`, the block's own shell variables) with `osm` on PATH, a temporary
 * base folder (OSM_BASE_FOLDER) and home. Set-up commands (npm …) are what CI itself runs and are
 * skipped with that reason printed; `osm serve &` is replaced by a daemon the test starts on a
 * free port, which the block's 127.0.0.1:8002 URLs are pointed at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { killDaemon, startDaemon, type Daemon } from '../helpers/daemon.js';

interface Block {
  index: number;
  commands: string[];
}

/** The ```sh blocks of a markdown text, each as its commands (continuation lines joined, comment lines dropped). */
export function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  for (const [i, m] of [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].entries()) {
    const commands: string[] = [];
    let pending = '';
    for (const line of m[1]!.split('\n')) {
      if (!pending && (line.trim() === '' || line.trim().startsWith('#'))) continue;
      if (line.endsWith('\\')) {
        pending += `${line}\n`;
        continue;
      }
      commands.push(pending + line);
      pending = '';
    }
    blocks.push({ index: i, commands });
  }
  return blocks;
}

const SETUP_REASON = 'a set-up command (npm ci / npm run build / npm link / npm test …): CI runs the set-up itself, and a test must not reinstall or relink the checkout';

let tmp: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let base: string;
let daemon: Daemon | undefined;
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = shellBlocks(readme);

beforeAll(() => {
  tmp = tempDir('osm-readme-');
  base = join(tmp.dir, 'base');
  const bin = join(tmp.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'osm'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'osm'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH}`, HOME: join(tmp.dir, 'home'), OSM_BASE_FOLDER: base, NO_COLOR: '1', MANPAGER: 'cat', PAGER: 'cat', LANG: 'C.UTF-8' };
  mkdirSync(env.HOME!);
});

afterAll(async () => {
  if (daemon) await killDaemon(daemon);
  tmp.cleanup();
});

describe('README', () => {
  it('starts with the two set-up commands', () => {
    expect(blocks[0]!.commands.map((c) => c.replace(/\s+#.*$/, '').trim())).toEqual(['npm ci && npm run build && node bin/osm.js serve', 'npm ci && npm test']);
    expect(blocks.length).toBeGreaterThan(4);
  });

  for (const block of blocks) {
    it(`block ${block.index + 1}: ${block.commands[0]!.slice(0, 60)}`, async () => {
      const lines: string[] = [];
      for (const c of block.commands) {
        if (/^npm\s/.test(c.trim())) {
          console.log(`README block ${block.index + 1}: skipped \`${c.split('#')[0]!.trim()}\`: ${SETUP_REASON}`);
          continue;
        }
        if (/^osm serve &/.test(c.trim())) {
          daemon ??= await startDaemon(base);
          continue;
        }
        lines.push(daemon ? c.replaceAll('127.0.0.1:8002', `127.0.0.1:${daemon.port}`) : c);
      }
      if (lines.length === 0) return;
      const script = ['set -eo pipefail', `trap 'echo "README command failed: $BASH_COMMAND" >&2' ERR`, ...lines].join('\n');
      const r = spawnSync('bash', ['-c', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 240_000 });
      expect(r.status, `${r.stderr}\n${r.stdout.slice(-2000)}`).toBe(0);
      expect(r.stderr).not.toContain('README command failed');
    }, 300_000);
  }

  it('the daemon block talked to the daemon', () => {
    expect(daemon, 'the README shows `osm serve &` and its API').toBeDefined();
  });
});
