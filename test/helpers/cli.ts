import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = resolve(ROOT, 'bin/osm.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  input?: string;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** Called with the child right after spawn (e.g. to send it SIGINT later). */
  onSpawn?: (child: ReturnType<typeof spawn>) => void;
}

/** Runs the built CLI (`node bin/osm.js …`) and collects its output. Colours are off (NO_COLOR). */
export function runOsm(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...(opts.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
    opts.onSpawn?.(child);
  });
}

/** PIDs of processes whose command line contains `marker` (pgrep -f); [] when none. */
export function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The last line of `osm run --json` output: the run record (or array of records) after the event lines. */
export function finalJson(stdout: string): any {
  const lines = stdout.replace(/\r/g, '').trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!);
}

/** The event lines of `osm run --json` output (every line but the last). */
export function jsonEvents(stdout: string): Record<string, any>[] {
  const lines = stdout.replace(/\r/g, '').trim().split('\n');
  return lines.slice(0, -1).map((l) => JSON.parse(l));
}

/** True while the process exists and is not a zombie (an orphan may wait to be reaped by init). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    if (process.platform === 'linux') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
