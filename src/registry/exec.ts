/**
 * Runs installer processes (trusted registry commands, git, nix) in their own process group with
 * a time limit: on timeout the whole group is killed, so a package manager's children do not
 * outlive the request. Output is kept (the last 64 KiB) for error messages. Programs are started
 * with an argv array; only trusted registry commands go through `sh -c`.
 */
import { spawn } from 'node:child_process';
import { killGroup } from '../engine/process-registry.js';

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, the last 64 KiB. */
  output: string;
}

export interface ExecOptions {
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const KEEP = 64 * 1024;

/** Runs `file args…` (no shell) and resolves when the process exits. */
export function runProgram(file: string, args: string[], opts: ExecOptions): Promise<ExecResult> {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const keep = (d: Buffer) => {
      output += d.toString('utf8');
      if (output.length > KEEP * 2) output = output.slice(-KEEP);
    };
    const child = spawn(file, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) killGroup(child.pid, 2000);
    }, opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, timedOut, output: `${output}${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut, output: output.slice(-KEEP) });
    });
  });
}

/** Runs a shell command line with `sh -c` (trusted registry commands only). */
export function runShell(command: string, opts: ExecOptions): Promise<ExecResult> {
  return runProgram('sh', ['-c', command], opts);
}

/** A one-line reason for a failed run: exit status plus the last line of output. */
export function failureText(r: ExecResult, timeoutMs: number): string {
  if (r.timedOut) return `timed out after ${Math.round(timeoutMs / 1000)}s`;
  const last = r.output.trim().split('\n').pop()?.trim() ?? '';
  const status = r.code !== null ? `exit status ${r.code}` : r.signal ? `killed by ${r.signal}` : 'could not start';
  return last ? `${status}: ${last.slice(0, 300)}` : status;
}
