import { existsSync } from 'node:fs';
import { spawnerPool } from './spawner/pool.js';
import { killGroup } from './process-registry.js';
import { formatDuration } from '../util/duration.js';
import type { OutputSink } from './live/run-output.js';

/** Caps of the in-memory copy of a step's output; the log file always gets everything. */
export const STDOUT_CAP = 4 * 1024 * 1024;
export const STDERR_CAP = 1024 * 1024;

export interface SpawnOptions {
  /** argv; the first element is the program. */
  argv: string[];
  env?: Record<string, string | undefined>;
  /** A stable base environment `env` is merged over (sent to the spawner once, see spawner/pool). */
  baseEnv?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** Where the output goes as it arrives: the run's step log, its streams and the terminal. */
  output?: OutputSink;
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

/** A bounded in-memory copy of one output stream (the log file always gets everything). */
function capture(cap: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  let newlines = 0;
  let last = 10;
  return {
    truncated: false,
    push(chunk: Buffer) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
      last = chunk[chunk.length - 1]!;
      if (size >= cap) {
        this.truncated = true;
        return;
      }
      const part = chunk.length > cap - size ? chunk.subarray(0, cap - size) : chunk;
      if (part.length < chunk.length) this.truncated = true;
      chunks.push(part);
      size += part.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
    /** Lines seen, a last line without its newline included. */
    lines: () => newlines + (last === 10 ? 0 : 1),
  };
}

/**
 * Runs a program in its own process group through the spawner pool (the engine never forks
 * itself, see spawner/child.ts), handing its output to `output` as it arrives and keeping a
 * bounded copy in memory. Timeouts and aborts kill the whole group (SIGTERM, then SIGKILL after the grace).
 * Never throws for a failing program: the caller reads exitCode/timedOut/cancelled.
 */
export async function spawnCommand(opts: SpawnOptions): Promise<SpawnResult> {
  const started = Date.now();
  if (!opts.argv[0]) throw new Error('empty command');
  if (opts.signal?.aborted) {
    return { exitCode: -1, stdout: '', stderr: '', truncated: false, timedOut: false, cancelled: true, durationMs: 0, lines: 0 };
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env ?? (opts.baseEnv ? {} : process.env))) if (v !== undefined) env[k] = v;

  let pid = 0;
  let timedOut = false;
  let cancelled = false;
  const grace = opts.graceMs ?? 2000;
  const kill = () => {
    if (pid) killGroup(pid, grace);
  };
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const out = capture(opts.stdoutCap ?? STDOUT_CAP);
  const err = capture(opts.stderrCap ?? STDERR_CAP);
  try {
    const exit = await spawnerPool().run({ argv: opts.argv, env, baseEnv: opts.baseEnv, cwd: opts.cwd }, {
      onOutput: (stream, chunk) => {
        (stream === 2 ? err : out).push(chunk);
        opts.output?.write(stream, chunk);
      },
      onPid: (p) => {
        pid = p;
        if (!p) return;
        opts.onPid?.(p);
        // The run may have been cancelled while the request was in flight.
        if (cancelled || opts.signal?.aborted) {
          cancelled = true;
          kill();
        }
        if (opts.timeoutMs && opts.timeoutMs > 0) {
          timer = setTimeout(() => {
            timedOut = true;
            kill();
          }, Math.max(0, opts.timeoutMs - (Date.now() - started)));
        }
      },
    });
    const truncated = out.truncated || err.truncated;
    const stdout = out.text();
    return {
      exitCode: typeof exit.code === 'number' ? exit.code : -1,
      signal: exit.signal ?? undefined,
      stdout: stdout + (truncated && stdout ? '\n[output truncated]' : ''),
      stderr: err.text(),
      truncated,
      timedOut,
      cancelled,
      durationMs: Date.now() - started,
      lines: out.lines() + err.lines(),
    };
  } finally {
    opts.output?.end();
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    if (pid) opts.onPid?.(0);
  }
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
