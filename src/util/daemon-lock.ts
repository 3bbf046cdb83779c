/**
 * One `osm serve` per base folder. Two daemons on one base would both reconcile "interrupted"
 * runs (failing each other's live runs), both drain the queue and both fire every cron schedule.
 *
 * The lock is `<base>/osm-serve.lock`, holding the owner's PID, its kernel start time (a PID alone
 * is reused), host name and start date. It is created atomically with its content: written to a
 * private file first (O_EXCL) and then hard-linked into place, and link() fails when the lock
 * exists — so no reader ever sees a half-written lock. A lock whose owner is gone (dead PID, or
 * the PID now belongs to another process) is stale and taken over with a note. A lock from
 * another host, or one that cannot be read, cannot be checked from here: the daemon refuses to
 * start unless `--force` says the owner is known to be gone. `--force` never stops or overrides a
 * live daemon on this host.
 */
import { linkSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { errors } from '../errors.js';
import { processStartTime, sameProcess } from '../engine/process-registry.js';
import { createFileExclusive } from './fs-safe.js';

export const DAEMON_LOCK_FILE = 'osm-serve.lock';

/** What a lock file says about its owner. */
export interface LockOwner {
  pid: number;
  /** Kernel start time of the owner ('' where /proc is unavailable). */
  start: string;
  host: string;
  started_at: string;
}

export interface DaemonLock {
  file: string;
  /** Set when a stale or forced lock was taken over: what happened, for the log. */
  note?: string;
  /** Removes the lock if it is still ours (idempotent). */
  release(): void;
}

export interface LockOptions {
  /** Take over a lock whose owner cannot be checked (another host, unreadable file). */
  force?: boolean;
}

function readOwner(file: string): { raw: string; owner?: LockOwner } | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const v = JSON.parse(raw) as Partial<LockOwner>;
    if (Number.isSafeInteger(v.pid) && (v.pid as number) > 0 && typeof v.host === 'string') {
      return { raw, owner: { pid: v.pid as number, start: String(v.start ?? ''), host: v.host, started_at: String(v.started_at ?? '') } };
    }
  } catch {
    // not JSON: reported as unreadable below
  }
  return { raw };
}


/**
 * Removes the lock only if it still holds `raw`: renamed aside first (atomic), then compared, and
 * put back when another starter replaced it meanwhile. Two starters taking over the same stale
 * lock thus never both succeed.
 */
function removeIfUnchanged(file: string, raw: string): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  let now = '';
  try {
    now = readFileSync(aside, 'utf8');
  } catch {
    // vanished: nothing to put back
  }
  if (now !== raw) {
    try {
      linkSync(aside, file);
    } catch {
      // a third starter holds the lock now; it stays theirs
    }
  }
  rmSync(aside, { force: true });
}

function describe(o: LockOwner): string {
  return `PID ${o.pid} on ${o.host}${o.started_at ? `, started ${o.started_at}` : ''}`;
}

/** Takes the daemon lock of `base`, or throws a catalogue error naming the running daemon. */
export function acquireDaemonLock(base: string, opts: LockOptions = {}): DaemonLock {
  const file = join(base, DAEMON_LOCK_FILE);
  const me: LockOwner = { pid: process.pid, start: processStartTime(process.pid) ?? '', host: hostname(), started_at: new Date().toISOString() };
  const content = `${JSON.stringify(me)}\n`;
  let note: string | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createFileExclusive(file, content)) return { file, ...(note ? { note } : {}), release: () => release(file, content) };
    const found = readOwner(file);
    if (!found) continue; // released between our attempt and the read
    const { raw, owner } = found;
    if (!owner) {
      if (!opts.force) throw errors.daemonLockUnknown(file, 'an unreadable lock file');
      note = `took over an unreadable lock file (--force): ${file}`;
    } else if (owner.host !== me.host) {
      if (!opts.force) throw errors.daemonLockUnknown(file, `a daemon on another host (${describe(owner)})`);
      note = `took over the lock of ${describe(owner)} (--force)`;
    } else if (owner.pid !== process.pid && sameProcess(owner.pid, owner.start)) {
      // (Our own PID in the file is an earlier process — e.g. PID 1 of a restarted container.)
      // --force never takes the base folder from a live daemon: it would run twice.
      throw errors.daemonRunning(owner.pid, file, base);
    } else {
      const reused = owner.pid === process.pid || (owner.start !== '' && processStartTime(owner.pid) !== undefined);
      note = `took over a stale lock: ${describe(owner)} ${reused ? 'is gone (its PID now belongs to another process)' : 'is no longer running'}`;
    }
    removeIfUnchanged(file, raw);
  }
  throw errors.daemonLockUnknown(file, 'another starter racing for it');
}

function release(file: string, content: string): void {
  try {
    if (readFileSync(file, 'utf8') === content) unlinkSync(file);
  } catch {
    // already gone, or replaced by a --force takeover: not ours to remove
  }
}
