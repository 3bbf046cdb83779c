import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SHELL, STDERR_CAP, STDOUT_CAP, type SpawnResult } from '../process.js';
import { killGroup } from '../process-registry.js';
import type { OutputSink, RunOutput } from '../live/run-output.js';

/**
 * Shell lanes: a foreach over many items runs each item's command line in one of N long-lived
 * bash processes ("lanes") instead of forking a new process tree per item. Each lane reads
 * `<command>\0` from its stdin, runs it in a subshell — `( eval "$command" )`, exactly the parsing
 * `bash -c` would do — with stdin from /dev/null and stdout/stderr in two files of its own, then
 * reports `<exit status> <stdout non-empty> <stderr non-empty>` on one line. Forking a subshell of a
 * small bash costs far less than a fresh process spawned by Node, which is what limited fan-out.
 *
 * A lane is a process group leader: cancelling the run (or the daemon's reconciliation through
 * `runs.current_pid`) kills the lane and whatever its item started. When the engine dies, the
 * lane's supervisor (below) kills the group.
 *
 * Differences from a fresh `bash -c` that a command could observe: `$$` is the lane's PID (stable
 * across items of one lane) and `$BASH_SUBSHELL` is 1. The lane's own variables are unset before the
 * command runs. Items with a timeout, another runner or a different environment do not use lanes.
 */
const LANE_SCRIPT = [
  '__osm_d=$1; shift; set --',
  'while IFS= read -r -d "" __osm_c; do',
  '  ( exec </dev/null >"$__osm_d/o" 2>"$__osm_d/e"; unset __osm_d __osm_s __osm_o __osm_e; eval "unset __osm_c"$\'\\n\'"$__osm_c" )',
  '  __osm_s=$?',
  '  if [ -s "$__osm_d/o" ]; then __osm_o=1; else __osm_o=0; fi',
  '  if [ -s "$__osm_d/e" ]; then __osm_e=1; else __osm_e=0; fi',
  '  printf "%s %s %s\\n" "$__osm_s" "$__osm_o" "$__osm_e"',
  'done',
].join('\n');

/**
 * The process the engine starts (the group leader): it runs the lane as its child, handing it the
 * engine's pipes, and watches the engine — when the engine dies (kill -9), the lane's whole group,
 * the item running now included, is killed within a second, as the spawner does for its own
 * children. When the lane ends normally it just exits. Being the parent rather than a background
 * job of the lane keeps the lane's `$!` and `wait` what a fresh shell would have.
 */
const SUPERVISOR_SCRIPT = [
  'p=$PPID',
  `"$0" -c "$1" osm-lane "$2" <&0 &`,
  'l=$!',
  'exec </dev/null >/dev/null',
  'while kill -0 "$p" 2>/dev/null; do',
  '  kill -0 "$l" 2>/dev/null || exit 0',
  '  sleep 1',
  'done',
  'kill -TERM -- -$$',
].join('\n');

interface Waiter {
  resolve: (r: { code: number; out: boolean; err: boolean } | undefined) => void;
}

class Lane {
  readonly child: ChildProcess;
  readonly dir: string;
  private buf = '';
  private waiter?: Waiter;
  dead = false;

  constructor(root: string, index: number, env: Record<string, string>, cwd: string) {
    this.dir = join(root, String(index));
    mkdirSync(this.dir, { recursive: true });
    this.child = spawn(SHELL, ['-c', SUPERVISOR_SCRIPT, SHELL, LANE_SCRIPT, this.dir], {
      cwd: existsSync(cwd) ? cwd : undefined,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      this.buf += chunk;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const [code, out, err] = line.split(' ');
        const w = this.waiter;
        this.waiter = undefined;
        w?.resolve({ code: Number(code), out: out === '1', err: err === '1' });
      }
    });
    this.child.on('error', () => this.died());
    this.child.on('close', () => this.died());
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  private died(): void {
    this.dead = true;
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(undefined);
  }

  /** Runs one command line; undefined when the lane died (killed, or bash could not start). */
  run(line: string): Promise<{ code: number; out: boolean; err: boolean } | undefined> {
    if (this.dead) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = { resolve };
      this.child.stdin!.write(`${line}\0`);
    });
  }

  /** Ends the lane (it exits at end-of-file) and its supervisor, so nothing keeps the engine waiting. */
  close(): void {
    this.child.stdin!.end();
    try {
      if (this.pid) process.kill(this.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
}

interface Collected {
  text: string;
  truncated: boolean;
  lines: number;
  lastNewline: boolean;
}

/** Files up to this size are read in one synchronous call; larger ones in async chunks. */
const SMALL_OUTPUT = 256 * 1024;

/**
 * Reads up to `cap` bytes of an item's output file into memory and hands all of it to the run's
 * output (step log, streams, terminal). Large outputs are read in chunks with the event loop free
 * in between, so an item printing a gigabyte neither grows the heap nor stalls the daemon.
 */
async function collect(path: string, cap: number, sink: OutputSink | undefined, stream: 1 | 2): Promise<Collected> {
  const size = statSync(path).size;
  const keep = Buffer.allocUnsafe(Math.min(size, cap));
  let kept = 0;
  let lines = 0;
  let last = 10;
  const take = (part: Buffer) => {
    if (part.length === 0) return;
    if (kept < keep.length) kept += part.copy(keep, kept, 0, Math.min(part.length, keep.length - kept));
    for (let i = part.indexOf(10); i !== -1; i = part.indexOf(10, i + 1)) lines++;
    last = part[part.length - 1]!;
    sink?.write(stream, part);
  };
  if (size <= SMALL_OUTPUT) {
    take(readFileSync(path));
  } else {
    const fh = await open(path, 'r');
    try {
      const chunk = Buffer.allocUnsafe(256 * 1024);
      for (;;) {
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
        if (bytesRead <= 0) break;
        take(chunk.subarray(0, bytesRead));
      }
    } finally {
      await fh.close();
    }
  }
  sink?.end();
  return { text: keep.subarray(0, kept).toString('utf8'), truncated: size > cap, lines, lastNewline: last === 10 };
}

/** Lanes need bash (`read -d ''`); with only /bin/sh every item spawns as usual. */
export const LANES_AVAILABLE = SHELL.endsWith('bash');

/**
 * A pool of lanes for one foreach step. `run` takes a free lane (waiting for one), sends the
 * command, reads its output files back and frees the lane. All lanes share one environment and
 * working folder (the foreach's: items only differ in the rendered command line).
 */
export class LanePool {
  private readonly lanes: Lane[] = [];
  private readonly free: Lane[] = [];
  private readonly queue: Array<(lane: Lane | undefined) => void> = [];
  private readonly root: string;
  private closed = false;
  private killed = false;
  private growing = false;

  constructor(
    private readonly size: number,
    private readonly env: Record<string, string>,
    private readonly envSignature: string,
    private readonly cwd: string,
    private readonly onPid: (pid: number, alive: boolean) => void,
    /** Where items' output goes (the run's step log, streams and terminal). */
    private readonly output?: RunOutput,
  ) {
    this.root = mkdtempSync(join(tmpdir(), 'osm-lanes-'));
  }

  /** Whether a command with this per-item environment can run in these lanes. */
  accepts(envSignature: string): boolean {
    return !this.closed && envSignature === this.envSignature;
  }

  private acquire(): Promise<Lane | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const lane = this.free.pop();
    if (lane) return Promise.resolve(lane);
    if (this.lanes.length === 0) return Promise.resolve(this.grow());
    const waiting = new Promise<Lane | undefined>((resolve) => this.queue.push(resolve));
    this.growSoon();
    return waiting;
  }

  private grow(): Lane {
    const l = new Lane(this.root, this.lanes.length, this.env, this.cwd);
    this.lanes.push(l);
    if (l.pid) this.onPid(l.pid, true);
    return l;
  }

  /**
   * Starts lanes one per event-loop turn while commands wait: each spawn blocks the loop for a
   * few milliseconds, so starting 16 at once would stall the daemon's requests for tens of ms.
   */
  private growSoon(): void {
    if (this.growing || this.lanes.length >= this.size) return;
    this.growing = true;
    setImmediate(() => {
      this.growing = false;
      if (this.closed || this.queue.length === 0 || this.lanes.length >= this.size) return;
      this.queue.shift()!(this.grow());
      this.growSoon();
    });
  }

  private release(lane: Lane): void {
    if (lane.dead || this.closed) {
      if (!lane.dead) lane.close();
      const next = this.queue.shift();
      if (next) next(undefined);
      return;
    }
    const next = this.queue.shift();
    if (next) next(lane);
    else this.free.push(lane);
  }

  /**
   * Runs one command line in a lane. Returns undefined when no lane could run it (the pool was
   * closed or a lane died before starting it), so the caller can fall back to a normal spawn.
   */
  async run(line: string, logFile: string): Promise<SpawnResult | undefined> {
    const started = Date.now();
    const lane = await this.acquire();
    if (!lane) return this.killed ? cancelledResult(started) : undefined;
    try {
      const r = await lane.run(line);
      if (!r) return this.killed ? cancelledResult(started) : undefined;
      // The item's stdout lines, then its stderr lines, each ended (a last line without newline kept).
      const out = r.out ? await collect(join(lane.dir, 'o'), STDOUT_CAP, this.output?.sink(logFile), 1) : undefined;
      const err = r.err ? await collect(join(lane.dir, 'e'), STDERR_CAP, this.output?.sink(logFile), 2) : undefined;
      const truncated = Boolean(out?.truncated || err?.truncated);
      const lines = (out ? out.lines + (out.lastNewline ? 0 : 1) : 0) + (err ? err.lines + (err.lastNewline ? 0 : 1) : 0);
      return {
        exitCode: r.code,
        stdout: (out?.text ?? '') + (out?.truncated ? '\n[output truncated]' : ''),
        stderr: err?.text ?? '',
        truncated,
        timedOut: false,
        cancelled: this.killed,
        durationMs: Date.now() - started,
        lines,
      };
    } finally {
      this.release(lane);
    }
  }

  /** Kills every lane's process group (cancellation); pending commands report `cancelled`. */
  kill(graceMs?: number): void {
    this.killed = true;
    for (const l of this.lanes) if (!l.dead && l.pid) killGroup(l.pid, graceMs);
  }

  /** Ends the lanes (they exit after their current command) and removes their folder. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.lanes) {
      if (!l.dead) l.close();
      if (l.pid) this.onPid(l.pid, false);
    }
    for (const next of this.queue.splice(0)) next(undefined);
    rmSync(this.root, { recursive: true, force: true });
  }
}

function cancelledResult(started: number): SpawnResult {
  return { exitCode: -1, stdout: '', stderr: '', truncated: false, timedOut: false, cancelled: true, durationMs: Date.now() - started, lines: 0 };
}
