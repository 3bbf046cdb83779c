/**
 * Shared plumbing of the utility-function library: argument coercion with the reference's
 * "undefined guard", line-oriented file helpers, bounded child processes and the per-evaluation
 * call state (logs, deadline, runtime variables) that the JS runtime attaches to the context.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { accessSync, closeSync, constants as fsc, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { FnContext } from '../js-runtime.js';

/** Key under which the runtime attaches a {@link CallState} to the context handed to functions. */
export const CALL_STATE = Symbol.for('osm.functions.callState');

/** What one evaluation shares with the functions it calls. */
export interface CallState {
  /** Every printed line, in order. */
  logs: string[];
  /** Prints one line: collected in `logs` and passed to `ctx.log` (default stdout, coloured on a TTY). */
  emit(line: string, color?: LineColor): void;
  /** Epoch ms after which blocking work must stop (the evaluation's time budget). */
  deadline: number;
  /** The evaluation's variables (for templates rendered by markdown helpers). */
  vars: Record<string, unknown>;
  /** set_var/get_var storage, scoped to this evaluation. */
  runtimeVars: Map<string, unknown>;
  /** Evaluates another script with the same variables and context (osm-func blocks). */
  evaluate(script: string): unknown;
}

export type LineColor = 'green' | 'blue' | 'yellow' | 'red';

const ANSI: Record<LineColor, string> = { green: '32', blue: '34', yellow: '33', red: '31' };

/** Builds the emitter shared by the runtime and detached calls: collect, then forward or print. */
export function makeEmitter(logs: string[], log?: (line: string) => void): (line: string, color?: LineColor) => void {
  return (line, color) => {
    logs.push(line);
    if (log) {
      log(line);
      return;
    }
    const useColor = color !== undefined && process.stdout.isTTY && !process.env.NO_COLOR;
    process.stdout.write(useColor ? `\u001b[${ANSI[color]}m${line}\u001b[0m\n` : `${line}\n`);
  };
}

type NestedEvaluator = (script: string, vars: Record<string, unknown>, ctx: FnContext, timeoutMs: number) => { value: unknown; logs: string[] };
let nestedEvaluator: NestedEvaluator | undefined;

/** The runtime registers itself here so functions can evaluate nested scripts without an import cycle. */
export function setNestedEvaluator(fn: NestedEvaluator): void {
  nestedEvaluator = fn;
}

const ONE_HOUR = 3_600_000;
const detachedStates = new WeakMap<object, CallState>();

/** The call state of `ctx`: the runtime's when called from a script, else one bound to ctx itself. */
export function stateOf(ctx: FnContext | undefined): CallState {
  const c = (ctx ?? {}) as FnContext & { [CALL_STATE]?: CallState };
  const attached = c[CALL_STATE];
  if (attached) return attached;
  const known = detachedStates.get(c);
  if (known) return known;
  const logs: string[] = [];
  const state: CallState = {
    logs,
    emit: makeEmitter(logs, c.log),
    deadline: Date.now() + ONE_HOUR,
    vars: {},
    runtimeVars: new Map(),
    evaluate(script) {
      if (!nestedEvaluator) throw new Error('the JS runtime is not loaded');
      const r = nestedEvaluator(script, state.vars, c, 10_000);
      for (const l of r.logs) state.emit(l);
      return r.value;
    },
  };
  detachedStates.set(c, state);
  return state;
}

/** Milliseconds left for blocking work: min(cap, time to the deadline), never below 1. */
export function budgetMs(ctx: FnContext | undefined, capMs = ONE_HOUR): number {
  return Math.max(1, Math.min(capMs, stateOf(ctx).deadline - Date.now()));
}

/** The reference's guard: undefined, null, '' and the literal string "undefined" count as missing. */
export function isMissing(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === 'undefined';
}

/** Stringifies like goja's Value.String(): undefined → "undefined", arrays joined by commas. */
export function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  try {
    return String(v);
  } catch {
    return '';
  }
}

/** A required string argument, or null when missing. */
export function argStr(v: unknown): string | null {
  if (isMissing(v)) return null;
  const s = asText(v);
  return s === '' || s === 'undefined' ? null : s;
}

/** An optional string argument: '' when missing. */
export function optStr(v: unknown): string {
  return argStr(v) ?? '';
}

/** An integer argument (numbers truncated, decimal strings parsed), or `def`. */
export function argInt(v: unknown, def: number): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  return def;
}

/** A list argument: arrays as is, strings split on commas (trimmed, blanks dropped). */
export function argList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((x) => asText(x).trim()).filter((x) => x !== '');
  const s = argStr(v);
  if (s === null) return [];
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** Reads a whole file as UTF-8, or null on any error. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Splits text into lines like a line scanner: `\r\n` tolerated, no phantom last line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** Lines of a file that are not whitespace-only, or null when unreadable. */
export function nonBlankLines(path: string): string[] | null {
  const text = readText(path);
  if (text === null) return null;
  return splitLines(text).filter((l) => l.trim() !== '');
}

/** Streams a file line by line (1 MiB reads) so big JSONL/CSV files never sit in memory; false when unreadable. */
export function forEachLine(path: string, fn: (line: string) => void): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  const buf = Buffer.alloc(1 << 20);
  const decoder = new StringDecoder('utf8');
  const emit = (l: string) => fn(l.endsWith('\r') ? l.slice(0, -1) : l);
  let rest = '';
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const parts = (rest + decoder.write(buf.subarray(0, n))).split('\n');
      rest = parts.pop()!;
      for (const p of parts) emit(p);
    }
    rest += decoder.end();
    if (rest !== '') emit(rest);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Buffered line writer (creates parent folders); every line gets a trailing newline. */
export class LineWriter {
  private readonly fd: number;
  private chunks: string[] = [];
  private size = 0;
  count = 0;
  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'w');
  }
  /** Queues one line. */
  write(line: string): void {
    this.chunks.push(line, '\n');
    this.size += line.length + 1;
    this.count++;
    if (this.size > 1 << 20) this.flush();
  }
  private flush(): void {
    if (this.chunks.length) writeSync(this.fd, this.chunks.join(''));
    this.chunks = [];
    this.size = 0;
  }
  /** Flushes and closes the file. */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }
}

/** Writes text, creating parent folders. Returns false on error. */
export function writeText(path: string, content: string | Uint8Array): boolean {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    return true;
  } catch {
    return false;
  }
}

/** Lines joined with a trailing newline (empty string for no lines), as the reference writes files. */
export function linesText(lines: string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** True when path is an existing regular file. */
export function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when path is an existing directory. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Compiles a JS regex, or null when the pattern is invalid. */
export function tryRegex(pattern: string, flags = ''): RegExp | null {
  try {
    return new RegExp(pattern, flags);
  } catch {
    return null;
  }
}

/** Quotes a string for /bin/sh so it stays one literal word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A path argument that cannot be mistaken for an option by the program receiving it. */
export function pathArg(p: string): string {
  return p.startsWith('-') ? `./${p}` : p;
}

/** PATH lookup without a shell. */
export function findExecutable(name: string): string | null {
  if (!name || name.includes('\0')) return null;
  const candidates = name.includes('/') ? [name] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      // Relative PATH entries would depend on the current folder: never searched.
      if (!isAbsolute(c) && !name.includes('/')) continue;
      accessSync(c, fsc.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here; keep looking
    }
  }
  return null;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Spawn failure, timeout or buffer overflow. */
  error?: string;
}

/** Runs a program synchronously with the evaluation's remaining budget (max 1 h) and a 10 MiB buffer. */
export function runProgram(ctx: FnContext | undefined, file: string, args: string[], opts: SpawnSyncOptions & { capMs?: number } = {}): RunResult {
  const { capMs, ...rest } = opts;
  const r = spawnSync(file, args, {
    encoding: 'utf8',
    maxBuffer: 10 * 1024 * 1024,
    timeout: budgetMs(ctx, capMs),
    killSignal: 'SIGKILL',
    cwd: ctx?.cwd,
    ...rest,
  });
  const out: RunResult = { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? '') };
  if (r.error) out.error = r.error.message;
  return out;
}

/** Runs `/bin/sh -c command`. */
export function runShell(ctx: FnContext | undefined, command: string, opts: SpawnSyncOptions & { capMs?: number } = {}): RunResult {
  return runProgram(ctx, '/bin/sh', ['-c', command], opts);
}

/** True when a program ran and exited 0. */
export function ok(r: RunResult): boolean {
  return r.error === undefined && r.status === 0;
}

/** JSON-encodes a value for display, or String() when it cannot be encoded. */
export function displayValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return asText(v);
  }
}
