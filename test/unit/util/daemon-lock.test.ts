/**
 * The lock of `osm serve` (src/util/daemon-lock.ts) in one process: live owners refuse, dead ones
 * and reused PIDs are taken over, unverifiable owners need --force, release removes only our own.
 * The two-daemon behaviour of the real CLI is in test/e2e/daemon-lock.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDaemonLock, DAEMON_LOCK_FILE } from '../../../src/util/daemon-lock.js';
import { processStartTime } from '../../../src/engine/process-registry.js';
import { tempDir } from '../../helpers/tmp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function base(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

/** A live process that is not this one (so its PID and start time are real). */
function sleeper(): ChildProcess {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  return child;
}

function writeLock(dir: string, owner: Record<string, unknown> | string): string {
  const file = path.join(dir, DAEMON_LOCK_FILE);
  fs.writeFileSync(file, typeof owner === 'string' ? owner : JSON.stringify(owner));
  return file;
}

describe('daemon lock', () => {
  it('is created 0600 with this PID and start time, and removed by release', () => {
    const dir = base();
    const lock = acquireDaemonLock(dir);
    expect(lock.note).toBeUndefined();
    const owner = JSON.parse(fs.readFileSync(lock.file, 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, start: processStartTime(process.pid), host: hostname() });
    expect(fs.statSync(lock.file).mode & 0o777).toBe(0o600);
    // No temporary files are left next to it.
    expect(fs.readdirSync(dir)).toEqual([DAEMON_LOCK_FILE]);
    lock.release();
    expect(fs.existsSync(lock.file)).toBe(false);
  });

  it('refuses while a live process holds it, naming the PID and the lock file, even with force', () => {
    const dir = base();
    const child = sleeper();
    const file = writeLock(dir, { pid: child.pid, start: processStartTime(child.pid!), host: hostname(), started_at: 'x' });
    for (const force of [false, true]) {
      expect(() => acquireDaemonLock(dir, { force })).toThrow(expect.objectContaining({
        code: 'OSM_ERR_DAEMON_RUNNING',
        message: expect.stringContaining(`another osm daemon (PID ${child.pid}) is already serving the base folder ${dir} (lock file ${file})`),
      }));
    }
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).pid).toBe(child.pid);
  });

  it('takes over the lock of a dead PID with a note', async () => {
    const dir = base();
    const child = sleeper();
    const pid = child.pid!;
    const start = processStartTime(pid);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    writeLock(dir, { pid, start, host: hostname(), started_at: 'then' });
    const lock = acquireDaemonLock(dir);
    expect(lock.note).toMatch(new RegExp(`took over a stale lock: PID ${pid} on .* is no longer running`));
    expect(JSON.parse(fs.readFileSync(lock.file, 'utf8')).pid).toBe(process.pid);
  });

  it('takes over a lock whose PID now belongs to another process (start time differs)', () => {
    const dir = base();
    const child = sleeper();
    writeLock(dir, { pid: child.pid, start: '1', host: hostname(), started_at: 'long ago' });
    const lock = acquireDaemonLock(dir);
    expect(lock.note).toMatch(/its PID now belongs to another process/);
  });

  it('needs --force for a lock from another host or an unreadable lock', () => {
    const dir = base();
    const file = writeLock(dir, { pid: 4242, start: '7', host: 'elsewhere.example', started_at: 'x' });
    expect(() => acquireDaemonLock(dir)).toThrow(expect.objectContaining({
      code: 'OSM_ERR_DAEMON_LOCK',
      message: expect.stringMatching(/locked by a daemon on another host \(PID 4242 on elsewhere\.example.*start with --force/),
    }));
    expect(acquireDaemonLock(dir, { force: true }).note).toMatch(/took over the lock of PID 4242 on elsewhere\.example.*\(--force\)/);
    fs.rmSync(file);
    writeLock(dir, 'garbage');
    expect(() => acquireDaemonLock(dir)).toThrow(/locked by an unreadable lock file/);
    expect(acquireDaemonLock(dir, { force: true }).note).toMatch(/unreadable lock file/);
  });

  it('release leaves a lock that is no longer ours', () => {
    const dir = base();
    const lock = acquireDaemonLock(dir);
    const other = JSON.stringify({ pid: 1, start: '', host: 'elsewhere', started_at: '' });
    fs.writeFileSync(lock.file, other);
    lock.release();
    expect(fs.readFileSync(lock.file, 'utf8')).toBe(other);
  });
});
