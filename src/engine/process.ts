import { execa } from 'execa';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { killGroup } from './process-registry.js';
import { formatDuration } from '../util/duration.js';

/** Caps of the in-memory copy of a step's output; the log file always gets everything. */
export const STDOUT_CAP = 4 * 1024 * 1024;
export const STDERR_CAP = 1024 * 1024;

export interface SpawnOptions {
  /** argv; the first element is the program. */
  argv: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** Append all output (stdout and stderr, as it arrives) to this file while the process runs. */
  logFile?: string;
  /** Called with the process group leader's PID right after spawn, and with 0 when it ended. */
  onPid?: (pid: number) => void;
  /** SIGTERM → SIGKILL grace period. */
  graceMs?: number;
  stdoutCap?: number;
  stderrCap?: number;
}

export interface SpawnResult {
  exitCode: number;
  signal?: string;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  /** Count of output lines seen (stdout + stderr), for events. */
  lines: number;
}

/** Bounded text accumulator: keeps the first `cap` bytes and counts the rest. */
class Capture {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    if (this.size >= this.cap) {
      this.truncated = true;
      return;
    }
    const room = this.cap - this.size;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8') + (this.truncated ? '\n[output truncated]' : '');
  }
}

function countNewlines(chunk: Buffer): number {
  let n = 0;
  let i = -1;
  while ((i = chunk.indexOf(10, i + 1)) !== -1) n++;
  return n;
}

/**
 * Runs a program in its own process group, streaming output to the log file and keeping a bounded
 * copy in memory. Timeouts and aborts kill the whole group (SIGTERM, then SIGKILL after the grace).
 * Never throws for a failing program: the caller reads exitCode/timedOut/cancelled.
 */
export async function spawnCommand(opts: SpawnOptions): Promise<SpawnResult> {
  const started = Date.now();
  const [file, ...args] = opts.argv;
  if (!file) throw new Error('empty command');
  const out = new Capture(opts.stdoutCap ?? STDOUT_CAP);
  const err = new Capture(opts.stderrCap ?? STDERR_CAP);
  // The step log file is opened on the first output chunk: silent commands cost no file I/O.
  let log: WriteStream | undefined;
  const logWrite = (chunk: Buffer) => {
    if (!opts.logFile) return;
    log ??= createWriteStream(opts.logFile, { flags: 'a' });
    log.write(chunk);
  };
  let lines = 0;
  let lastByteNewline = true;

  if (opts.signal?.aborted) {
    return { exitCode: -1, stdout: '', stderr: '', truncated: false, timedOut: false, cancelled: true, durationMs: 0, lines: 0 };
  }

  const child = execa(file, args, {
    cwd: opts.cwd && existsSync(opts.cwd) ? opts.cwd : undefined,
    env: opts.env,
    extendEnv: false,
    detached: true,
    buffer: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    stripFinalNewline: false,
    cleanup: true,
  });

  const pid = child.pid ?? 0;
  if (pid) opts.onPid?.(pid);

  let timedOut = false;
  let cancelled = false;
  const grace = opts.graceMs ?? 2000;
  const kill = () => {
    if (pid) killGroup(pid, grace);
  };
  let timer: NodeJS.Timeout | undefined;
  if (opts.timeoutMs && opts.timeoutMs > 0) {
    timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
  }
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  const onData = (cap: Capture) => (chunk: Buffer) => {
    cap.push(chunk);
    lines += countNewlines(chunk);
    lastByteNewline = chunk.length > 0 ? chunk[chunk.length - 1] === 10 : lastByteNewline;
    logWrite(chunk);
  };
  child.stdout?.on('data', onData(out));
  child.stderr?.on('data', onData(err));

  let exitCode = -1;
  let signal: string | undefined;
  try {
    const result = await child;
    exitCode = typeof result.exitCode === 'number' ? result.exitCode : -1;
    signal = result.signal ?? undefined;
    if (result.failed && result.exitCode === undefined && !signal && result.message) {
      // spawn failure (ENOENT …): surface it like a shell would.
      err.push(Buffer.from(`${result.shortMessage ?? result.message}\n`));
      exitCode = 127;
    }
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    if (pid) opts.onPid?.(0);
    if (log) await new Promise<void>((resolve) => log!.end(resolve));
  }
  if (!lastByteNewline) lines++;
  return {
    exitCode,
    signal,
    stdout: out.text(),
    stderr: err.text(),
    truncated: out.truncated || err.truncated,
    timedOut,
    cancelled,
    durationMs: Date.now() - started,
    lines,
  };
}

/** The error text of a failed command, as the reference words it. */
export function commandError(res: SpawnResult, timeoutMs?: number): string {
  if (res.timedOut) return `command timed out after ${formatDuration(timeoutMs ?? res.durationMs)}`;
  if (res.cancelled) return 'command cancelled';
  if (res.signal) return `command killed by signal ${res.signal}`;
  return `command exited with code ${res.exitCode}`;
}

/** The shell used for bash steps: bash when present (workflows use bash-isms), else /bin/sh. */
export const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
