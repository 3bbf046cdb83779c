/**
 * Runs installer processes (trusted registry commands, git, nix) in their own process group with
 * a time limit: on timeout the whole group is killed, so a package manager's children do not
 * outlive the request. Output is kept (the last 64 KiB) for error messages. Programs are started
 * with an argv array; only trusted registry commands go through `sh -c`.
 */
import { execa } from 'execa';
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

/**
 * Runs `file args…` (no shell) with execa and resolves when the process exits. The process leads
 * its own group (`detached`); the time limit kills the whole group ourselves (execa's own timeout
 * would signal the leader only and leave a package manager's children behind).
 */
export async function runProgram(file: string, args: string[], opts: ExecOptions): Promise<ExecResult> {
  let output = '';
  let timedOut = false;
  const keep = (d: Buffer | string) => {
    output += d.toString();
    if (output.length > KEEP * 2) output = output.slice(-KEEP);
  };
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    extendEnv: false,
    stdin: 'ignore',
    detached: true,
    buffer: false,
    reject: false,
    all: true,
    stripFinalNewline: false,
  });
  child.all?.on('data', keep);
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid) killGroup(child.pid, 2000);
  }, opts.timeoutMs);
  try {
    const r = await child;
    const signal = (r.signal ?? null) as NodeJS.Signals | null;
    // A program that could not start (ENOENT, EACCES) has no exit code: keep execa's reason.
    if (r.exitCode === undefined && !signal) return { code: null, signal: null, timedOut, output: `${output}${r.originalMessage ?? r.shortMessage}` };
    return { code: r.exitCode ?? null, signal, timedOut, output: output.slice(-KEEP) };
  } finally {
    clearTimeout(timer);
  }
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
