import { readFileSync } from 'node:fs';

/**
 * Live child process groups per run. Every spawned step process is registered here (and its PID
 * written to `runs.current_pid` by the caller) so cancel, timeouts and shutdown can kill whole
 * process groups, never leaving orphans behind.
 */

export interface KillReport {
  killed: number[];
}

const GRACE_MS_DEFAULT = 3000;

export class ProcessRegistry {
  private readonly byRun = new Map<string, Set<number>>();

  /** Records a live process group leader for a run. */
  add(runUuid: string, pid: number): void {
    let set = this.byRun.get(runUuid);
    if (!set) {
      set = new Set();
      this.byRun.set(runUuid, set);
    }
    set.add(pid);
  }

  /** Forgets a process group after it exited. */
  remove(runUuid: string, pid: number): void {
    const set = this.byRun.get(runUuid);
    if (!set) return;
    set.delete(pid);
    if (set.size === 0) this.byRun.delete(runUuid);
  }

  /** PIDs currently alive for a run. */
  pids(runUuid: string): number[] {
    return [...(this.byRun.get(runUuid) ?? [])];
  }

  /** Every run with live processes. */
  runs(): string[] {
    return [...this.byRun.keys()];
  }

  /** Kills every process group of a run: SIGTERM now, SIGKILL after the grace period. */
  killRun(runUuid: string, graceMs = GRACE_MS_DEFAULT): KillReport {
    const pids = this.pids(runUuid);
    for (const pid of pids) killGroup(pid, graceMs);
    return { killed: pids };
  }

  /** Kills everything (daemon shutdown). */
  killAll(graceMs = GRACE_MS_DEFAULT): number[] {
    const all: number[] = [];
    for (const run of this.runs()) all.push(...this.killRun(run, graceMs).killed);
    return all;
  }
}

/**
 * The kernel's start time of a process (Linux: /proc/<pid>/stat field 22, in clock ticks since
 * boot), or undefined when it does not exist or the platform has no /proc. A PID plus its start
 * time identifies one process: PIDs themselves are reused.
 */
export function processStartTime(pid: number): string | undefined {
  if (!pid || pid <= 0) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * True when `pid` is still the process recorded with `start` (an empty `start` — recorded where
 * /proc is unavailable, or by an older version — trusts the PID alone).
 */
export function sameProcess(pid: number, start: string): boolean {
  if (!isAlive(pid)) return false;
  if (!start) return true;
  const now = processStartTime(pid);
  return now === undefined || now === start;
}

/** True when a process (or group, for negative ids) exists. */
export function isAlive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Sends SIGTERM to the process group led by `pid` (falling back to the single process), then
 * SIGKILL after `graceMs` if anything of the group is still alive.
 */
export function killGroup(pid: number, graceMs = GRACE_MS_DEFAULT): void {
  if (!pid || pid <= 1) return;
  const start = processStartTime(pid);
  signalGroup(pid, 'SIGTERM');
  if (graceMs <= 0) {
    signalGroup(pid, 'SIGKILL');
    return;
  }
  const timer = setTimeout(() => {
    // The leader may have exited and its number been reused by an unrelated process: escalate
    // only to the same process, or to the group when the leader is gone.
    if (isAlive(pid) ? start === undefined || processStartTime(pid) === start : isAlive(-pid)) signalGroup(pid, 'SIGKILL');
  }, graceMs);
  timer.unref();
}

/** Sends a signal to a process group, or to the process when it leads no group. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/** Kills a group synchronously with SIGKILL and waits (bounded) until it is gone. */
export async function killGroupAndWait(pid: number, timeoutMs = 5000): Promise<boolean> {
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  let escalated = false;
  while (Date.now() < deadline) {
    if (!isAlive(-pid) && !isAlive(pid)) return true;
    if (!escalated && Date.now() > deadline - timeoutMs / 2) {
      signalGroup(pid, 'SIGKILL');
      escalated = true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  signalGroup(pid, 'SIGKILL');
  return !isAlive(-pid) && !isAlive(pid);
}
