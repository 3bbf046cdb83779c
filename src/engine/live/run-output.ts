/**
 * A run's output as it happens: the one writer of the run's step log files and of its journal
 * (journal.ts), and the in-process channel its live consumers hear from — the terminal printer and
 * `osm run --json` (every line, synchronously) and the daemon's log streams (a "something new"
 * ping; they read what is new from the files, at their own pace).
 *
 * Everything a step's commands print reaches this object as it arrives (spawner output messages,
 * foreach lane outputs, HTTP step logs) and is written at once, in whole lines, with one write per
 * batch: the file and the journal are current while the step runs. Nothing here ever waits for a
 * consumer: a slow stream client reads the files later, and never holds the engine back.
 */
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { countNewlines, LineSplitter } from './line-splitter.js';
import { formatFile, formatLines, formatStep, JOURNAL_FILE, type StepState, type StreamName } from './journal.js';
import { isSafeName } from '../../util/fs-safe.js';

export interface LiveLine {
  kind: 'line';
  seq: number;
  step: string;
  /** The parallel-steps child that wrote the line (journaled too: log streams carry it as `substep`). */
  part?: string;
  stream: StreamName;
  line: string;
  ts: number;
}

export interface LiveStep extends StepState {
  kind: 'step';
  seq: number;
  ts: number;
}

export interface LiveRun {
  kind: 'run';
  status: 'running' | 'completed' | 'failed' | 'cancelled';
  ts: number;
  run_uuid: string;
  workflow: string;
  target: string;
  workspace: string;
  error?: string;
  duration_ms?: number;
}

export type LiveEvent = LiveLine | LiveStep | LiveRun;
export type LiveListener = (e: LiveEvent) => void;

/** Where one command's output goes as it arrives (stream 1 = stdout, 2 = stderr). */
export interface OutputSink {
  write(stream: 1 | 2, chunk: Buffer): void;
  /** The command ended: output left without a final newline is written as a last line. */
  end(): void;
}

interface StepFile {
  index: number;
  path: string;
  name: string;
  step: string;
  fd?: number;
  failed: boolean;
  lines: number;
  /** Some of the step's output does not pass through here (an llm step's). */
  partial: boolean;
}

const live = new Map<string, RunOutput>();
const changeHooks = new Set<() => void>();

/**
 * Hears that some run of this process changed state (a step or the run itself): the daemon's event
 * stream looks at the event log at once instead of at its next poll. Returns the unsubscribe.
 */
export function onRunChange(cb: () => void): () => void {
  changeHooks.add(cb);
  return () => changeHooks.delete(cb);
}

function runChanged(): void {
  for (const cb of changeHooks) {
    try {
      cb();
    } catch {
      /* a listener's problem */
    }
  }
}

/** The output of a run executing in this process, if any. */
export function liveRunOutput(runUuid: string): RunOutput | undefined {
  return live.get(runUuid);
}

/** Writes a whole buffer (a regular file may take it in several writes). */
function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** The step name a log file stands for when nothing registered it (`0007-probe.log` → `probe`). */
function stepOfFile(path: string): string {
  return basename(path).replace(/^\d+-/, '').replace(/\.log$/, '') || 'output';
}

export class RunOutput {
  private readonly files = new Map<string, StepFile>();
  private readonly listeners = new Set<LiveListener>();
  private readonly watchers = new Set<() => void>();
  private journalFd?: number;
  private journalFailed = false;
  private seq = 0;
  private nextFile = 0;
  private closed = false;

  private folder = '';

  /** @param runUuid registers the output so this process's streams can find it ('' for none). */
  constructor(readonly runUuid: string) {
    if (runUuid) live.set(runUuid, this);
  }

  /** The run's log folder, where the journal is written ('' until the run knows its workspace). */
  get dir(): string {
    return this.folder;
  }

  /** Sets the log folder (once, before any step writes). */
  useDir(dir: string): void {
    this.folder = dir;
  }

  /** Highest sequence number given so far (0 before anything). */
  get lastSeq(): number {
    return this.seq;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Hears every line, step change and run change, synchronously, in order. Returns the unsubscribe. */
  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called (synchronously; keep it cheap) whenever something new is in the journal, and at close. */
  watch(cb: () => void): () => void {
    this.watchers.add(cb);
    return () => this.watchers.delete(cb);
  }

  /** Number of watchers (tests check that disconnected clients leave none behind). */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Records which step a log file belongs to (when the step starts, before its commands write). */
  openStep(logFile: string, step: string): void {
    if (!logFile || this.files.has(logFile)) return;
    this.register(logFile, step);
  }

  /** Lines written to a log file so far (0 for an unknown one). */
  linesOf(logFile: string): number {
    return this.files.get(logFile)?.lines ?? 0;
  }

  /** Lines of a log file shown live, or 0 when some of the step's output was not (see notStreamed). */
  streamedLines(logFile: string): number {
    const f = this.files.get(logFile);
    return f && !f.partial ? f.lines : 0;
  }

  /** Marks a step whose output (part of it) reaches only its record, so its output block is still shown. */
  notStreamed(logFile: string): void {
    const f = this.fileOf(logFile);
    if (f) f.partial = true;
  }

  /** A sink for one command's output into a step log file (an empty path keeps nothing). */
  sink(logFile: string, part?: string): OutputSink {
    const file = this.fileOf(logFile);
    const splitters = [new LineSplitter(), new LineSplitter()] as const;
    return {
      write: (stream, chunk) => {
        const done = splitters[stream - 1].push(chunk);
        if (done && file) this.writeLines(file, stream, done, part);
      },
      end: () => {
        for (const stream of [1, 2] as const) {
          const rest = splitters[stream - 1].flush();
          if (rest && file) this.writeLines(file, stream, rest, part);
        }
      },
    };
  }

  /** Output known whole (an HTTP step's log, a foreach lane item's output); `part` as for `sink`. */
  append(logFile: string, stream: 1 | 2, text: string | Buffer, part?: string): void {
    const file = this.fileOf(logFile);
    if (!file) return;
    let buf = typeof text === 'string' ? Buffer.from(text) : text;
    if (buf.length === 0) return;
    if (buf[buf.length - 1] !== 10) buf = Buffer.concat([buf, Buffer.from('\n')]);
    this.writeLines(file, stream, buf, part);
  }

  /** A step state change: journaled (it has a place in the run's sequence) and heard by listeners. */
  step(state: StepState): void {
    if (this.closed) return;
    const seq = ++this.seq;
    const ts = Date.now();
    this.journal(formatStep(seq, ts, state));
    this.tell({ kind: 'step', seq, ts, ...state });
    this.ping();
    runChanged();
  }

  /** A run state change (listeners only: the database holds the run's status). */
  run(change: Omit<LiveRun, 'kind' | 'ts'>): void {
    this.tell({ kind: 'run', ts: Date.now(), ...change });
    runChanged();
  }

  /** Closes the files, tells the watchers (streams then see the run end) and forgets the run. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.files.values()) {
      if (f.fd !== undefined) closeQuietly(f.fd);
      f.fd = undefined;
    }
    if (this.journalFd !== undefined) closeQuietly(this.journalFd);
    this.journalFd = undefined;
    if (live.get(this.runUuid) === this) live.delete(this.runUuid);
    this.ping();
    this.watchers.clear();
    this.listeners.clear();
  }

  private register(logFile: string, step: string): StepFile {
    const name = basename(logFile);
    // Only a plain file of the run's log folder is named in the journal (readers accept nothing else).
    const journaled = Boolean(this.folder) && dirname(logFile) === this.folder && isSafeName(name);
    const file: StepFile = { index: journaled ? this.nextFile++ : -1, path: logFile, name, step, failed: false, lines: 0, partial: false };
    this.files.set(logFile, file);
    if (journaled) this.journal(formatFile(file.index, name, step));
    return file;
  }

  private fileOf(logFile: string): StepFile | undefined {
    if (!logFile) return undefined;
    return this.files.get(logFile) ?? this.register(logFile, stepOfFile(logFile));
  }

  private writeLines(file: StepFile, stream: 1 | 2, buf: Buffer, part?: string): void {
    if (this.closed) return;
    const count = countNewlines(buf);
    if (count === 0) return;
    let range: [number, number] | undefined;
    if (!file.failed) {
      try {
        file.fd ??= openSync(file.path, 'a');
        writeAll(file.fd, buf);
        // The end offset from the file itself: another writer (an llm step's own log line) may append too.
        const end = fstatSync(file.fd).size;
        range = [end - buf.length, end];
      } catch {
        // The log folder may have been removed by the workflow itself: lines still reach listeners.
        file.failed = true;
      }
    }
    file.lines += count;
    const seq = this.seq + 1;
    this.seq += count;
    const ts = Date.now();
    const name: StreamName = stream === 2 ? 'stderr' : 'stdout';
    if (range && file.index >= 0) this.journal(formatLines({ seq, file: file.index, stream: name, start: range[0], end: range[1], count, ts, ...(part ? { part } : {}) }));
    if (this.listeners.size) {
      const lines = buf.toString('utf8').split('\n');
      for (let i = 0; i < count; i++) this.tell({ kind: 'line', seq: seq + i, step: file.step, ...(part ? { part } : {}), stream: name, line: lines[i]!, ts });
    }
    this.ping();
  }

  private journal(text: string): void {
    if (!this.folder || this.journalFailed) return;
    try {
      this.journalFd ??= openSync(join(this.folder, JOURNAL_FILE), 'a');
      writeAll(this.journalFd, Buffer.from(text));
    } catch {
      this.journalFailed = true;
    }
  }

  private tell(e: LiveEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // A consumer's failure (a closed terminal) must not fail the run.
      }
    }
  }

  private ping(): void {
    for (const w of this.watchers) {
      try {
        w();
      } catch {
        /* a stream's problem, not the run's */
      }
    }
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}
