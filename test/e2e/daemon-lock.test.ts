/**
 * One daemon per base folder, with the built CLI: a second `osm serve` on the same base exits
 * non-zero naming the running daemon's PID and the lock file (also with --force); after kill -9
 * of the first the lock is stale and a new daemon starts; a clean shutdown removes the lock.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, ensureBuilt, killAllDaemons, killDaemon, ROOT, startDaemon, stopDaemon } from '../helpers/daemon.js';

let tmp: string;
beforeAll(() => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
});
afterAll(async () => {
  await killAllDaemons();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs `osm -b base serve …` to completion (a refused start exits by itself). */
function serveOnce(base: string, extra: string[] = []) {
  return spawnSync(process.execPath, [BIN, '-b', base, 'serve', '--host', '127.0.0.1', '--port', '0', '--no-schedule', ...extra], { env: cleanEnv(), encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
}

describe('one daemon per base folder', () => {
  it('refuses a second daemon, takes over after kill -9, and removes the lock on shutdown', async () => {
    const lockFile = path.join(tmp, 'osm-serve.lock');
    const first = await startDaemon(tmp);
    expect(JSON.parse(fs.readFileSync(lockFile, 'utf8')).pid).toBe(first.pid);

    for (const extra of [[], ['--force']]) {
      const second = serveOnce(tmp, extra);
      expect(second.status, second.stdout).not.toBe(0);
      expect(second.stderr).toContain(`another osm daemon (PID ${first.pid}) is already serving the base folder ${tmp} (lock file ${lockFile})`);
      expect(second.stdout).not.toMatch(/listening on/);
    }
    expect(first.alive()).toBe(true);

    await killDaemon(first);
    expect(fs.existsSync(lockFile)).toBe(true); // kill -9 leaves it behind
    const next = await startDaemon(tmp);
    expect(next.output()).toMatch(new RegExp(`took over a stale lock: PID ${first.pid} on .* is no longer running`));
    expect(JSON.parse(fs.readFileSync(lockFile, 'utf8')).pid).toBe(next.pid);

    await stopDaemon(next);
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(fs.existsSync(lockFile)).toBe(false);
  });
});
