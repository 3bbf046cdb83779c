import { Chalk, type ChalkInstance } from 'chalk';
import { createWriteStream, type WriteStream } from 'node:fs';
import ora, { type Ora } from 'ora';
import { formatDuration } from '../util/duration.js';
import { untracedStderr } from '../util/log-file.js';
import type { LiveEvent, LiveLine } from './live/run-output.js';
import { cleanToolLine, progressText, type Progress } from './printer-live.js';

/** Symbol printed before a step of each type (reference output style). */
export const STEP_SYMBOLS: Record<string, string> = {
  bash: '$',
  'remote-bash': '$',
  function: 'ƒ',
  foreach: '∀',
  'parallel-steps': '⫘',
  http: '⇄',
  llm: '⋈',
  agent: '⚙',
  'agent-acp': '⚙',
  'agent-sdk': '⚙',
};

export interface PrinterOptions {
  /** Print to the terminal (false in the daemon: only the console log gets the text). */
  stdout: boolean;
  /** Hide step output blocks and info lines (errors still shown). */
  silent: boolean;
  color: boolean;
  /** Prefix every line (multi-target runs), e.g. `[a.com] `. */
  prefix?: string;
  /**
   * Show a spinner (ora, on stderr) naming the steps still running once one has run longer than
   * `spinnerAfterMs`. Only for an interactive terminal; never in the daemon or with --json.
   */
  spinner?: boolean;
  spinnerAfterMs?: number;
  /** --disable-logging: drop timestamped log lines (`<time> INFO …`). */
  noLogLines?: boolean;
  /** -v: live output lines show the time since their step started. */
  verbose?: boolean;
}

/** Without a spinner, a running foreach prints a progress line this often at most. */
export const PROGRESS_LINE_MS = 2000;

/**
 * The run console: what a user sees while a run executes. Every line also goes to
 * `run-console.log` (including output blocks hidden by --silent), so the file is a full record.
 */
/** Console log files of runs that ended and are flushing their last lines (path → flushed). */
const closingLogs = new Map<string, Promise<void>>();
/** Console log files runs are writing now (path → how many runs, ended ones not counted). */
const writingLogs = new Map<string, number>();
const countWriter = (path: string, by: number) => {
  const n = (writingLogs.get(path) ?? 0) + by;
  if (n > 0) writingLogs.set(path, n);
  else writingLogs.delete(path);
};
/** Longest wait for another run's console log to be flushed. */
const CLOSING_WAIT_MS = 5000;

export class RunPrinter {
  readonly c: ChalkInstance;
  private consoleLog?: WriteStream;
  private consolePath = '';
  /** Resolves this run's entry in closingLogs once its console log is flushed. */
  private closed?: () => void;
  /** Steps started and not yet finished (name → start times; foreach runs one name many times). */
  private readonly running = new Map<string, number[]>();
  private spin?: Ora;
  private tick?: NodeJS.Timeout;
  /** Steps running now (name → start times), for prefixes and timings of live output lines. */
  private readonly active = new Map<string, number[]>();
  /** Live output lines waiting to be written (one write, and one spinner redraw, per batch). */
  private pendingLive: string[] = [];
  private liveFlush?: NodeJS.Immediate;
  private readonly progressOf = new Map<string, Progress>();
  /** Steps whose live output began under an `[output]` header (one step running at the time). */
  private readonly headed = new Set<string>();

  constructor(private readonly opts: PrinterOptions) {
    this.c = new Chalk({ level: opts.color ? 1 : 0 });
  }

  /** True when the tool output of running steps is shown as it arrives (an `osm run` terminal). */
  get live(): boolean {
    return this.opts.stdout;
  }

  /** True when `lines` live output lines of a step were shown, so its output block is not repeated. */
  streamed(lines: number): boolean {
    return this.live && lines > 0;
  }

  /** True when foreach steps should report their progress here. */
  get wantsProgress(): boolean {
    return this.opts.stdout && (Boolean(this.opts.spinner) || !this.opts.silent);
  }

  /** A live event of the run: output lines are printed (batched), hidden by --silent. */
  liveEvent(e: LiveEvent): void {
    if (e.kind === 'line') this.liveLine(e);
  }

  private liveLine(e: LiveLine): void {
    // Hidden (--silent): still a full record in the console log.
    const hidden = !this.opts.stdout || this.opts.silent;
    let prefix = '  ';
    if (!hidden) {
      const starts = this.active.get(e.step);
      if (this.opts.verbose && starts?.length) prefix += `${this.c.dim(`+${((e.ts - starts[0]!) / 1000).toFixed(1)}s`)} `;
      // Several steps running (or parallel-steps children): say whose line it is; one: its output
      // under a header, as a block would be.
      if (e.part) prefix += `${this.c.cyan(`[${this.active.size > 1 ? `${e.step}/${e.part}` : e.part}]`)} `;
      else if (this.active.size > 1) prefix += `${this.c.cyan(`[${e.step}]`)} `;
      else if (!this.headed.has(e.step)) {
        this.headed.add(e.step);
        this.pendingLive.push(this.c.dim('[output]'));
      }
    } else if (!this.consoleLog) return;
    this.pendingLive.push(prefix + cleanToolLine(e.line, this.opts.color && !hidden));
    if (this.pendingLive.length >= 500) this.flushLive();
    else this.liveFlush ??= setImmediate(() => this.flushLive());
  }

  /** Writes the live lines waiting (before any other output, and at the end of a run). */
  flushLive(): void {
    if (this.liveFlush) clearImmediate(this.liveFlush);
    this.liveFlush = undefined;
    if (this.pendingLive.length === 0) return;
    const text = this.pendingLive.join('\n');
    this.pendingLive = [];
    if (!this.opts.stdout || this.opts.silent) this.toConsoleLog(`${stripAnsi(text)}\n`);
    else this.emit(text, { quiet: true, live: true });
  }

  /** Progress of a foreach step: drawn in the spinner on a terminal, else a plain line now and then. */
  progress(step: string, done: number, total?: number): void {
    const now = Date.now();
    let p = this.progressOf.get(step);
    if (!p) {
      p = { done, total, started: now, lastLine: now, lines: 0 };
      this.progressOf.set(step, p);
      return;
    }
    p.done = done;
    if (total !== undefined) p.total = total;
    if (!this.opts.spinner && !this.opts.silent && now - p.lastLine >= PROGRESS_LINE_MS) {
      p.lastLine = now;
      p.lines++;
      this.line(`${this.c.dim('∀')} ${progressText(step, p, now, false)}`);
    }
  }

  /** A foreach ended: its progress goes away (with a last line when progress lines were printed). */
  progressDone(step: string): void {
    const p = this.progressOf.get(step);
    this.progressOf.delete(step);
    if (p && p.lines > 0 && !this.opts.spinner) this.line(`${this.c.dim('∀')} ${progressText(step, p, Date.now(), false)}`);
  }

  /** The spinner text for the steps running now, or undefined when none has run long enough. */
  spinnerText(now = Date.now()): string | undefined {
    const after = this.opts.spinnerAfterMs ?? 2000;
    let oldest: [string, number] | undefined;
    let count = 0;
    for (const [name, starts] of this.running) {
      count += starts.length;
      if (starts.length && (!oldest || starts[0]! < oldest[1])) oldest = [name, starts[0]!];
    }
    if (!oldest || now - oldest[1] < after) return undefined;
    const progress = this.progressOf.get(oldest[0]);
    if (progress) return progressText(oldest[0], progress, now, true) + (count > 1 ? ` (+${count - 1} more)` : '');
    const secs = formatDuration(now - oldest[1]);
    const others = count - 1;
    return `${oldest[0]} running for ${secs}${others > 0 ? ` (+${others} more step${others > 1 ? 's' : ''})` : ''}`;
  }

  private stepBegan(name: string): void {
    const live = this.active.get(name);
    if (live) live.push(Date.now());
    else this.active.set(name, [Date.now()]);
    if (!this.opts.spinner || !this.opts.stdout) return;
    const starts = this.running.get(name);
    if (starts) starts.push(Date.now());
    else this.running.set(name, [Date.now()]);
    if (!this.tick) {
      this.tick = setInterval(() => this.refreshSpinner(), 500);
      this.tick.unref();
    }
  }

  private stepEnded(name: string): void {
    this.headed.delete(name);
    const live = this.active.get(name);
    if (live) {
      live.shift();
      if (live.length === 0) this.active.delete(name);
    }
    const starts = this.running.get(name);
    if (!starts) return;
    starts.shift();
    if (starts.length === 0) this.running.delete(name);
    if (this.running.size === 0) this.stopSpinner();
    else this.refreshSpinner();
  }

  private refreshSpinner(): void {
    const text = this.spinnerText();
    if (text === undefined) {
      this.spin?.stop();
      return;
    }
    if (!this.spin) this.spin = ora({ stream: untracedStderr(), discardStdin: false, hideCursor: true });
    this.spin.text = text;
    if (!this.spin.isSpinning) this.spin.start();
  }

  /** Stops and clears the spinner (before the summary, at the end of a run). */
  stopSpinner(): void {
    if (this.tick) clearInterval(this.tick);
    this.tick = undefined;
    this.running.clear();
    this.spin?.stop();
  }

  /**
   * Starts teeing into a console log file (truncated when `truncate`). A run that ended but is
   * still flushing its last lines into the same file (markClosing) is waited for first — unless
   * other runs are writing that file now (runs of one workspace at once share it anyway).
   */
  async attachConsoleLog(path: string, truncate: boolean): Promise<void> {
    await this.detachConsoleLog();
    // Bounded: a run that failed between markClosing and its detach never holds the next one up for long.
    const closing = closingLogs.get(path);
    if (closing && !writingLogs.has(path)) await Promise.race([closing, new Promise<void>((resolve) => setTimeout(resolve, CLOSING_WAIT_MS).unref())]);
    this.consolePath = path;
    countWriter(path, 1);
    const stream = createWriteStream(path, { flags: truncate ? 'w' : 'a' });
    this.consoleLog = stream;
    stream.on('error', () => {
      if (this.consoleLog !== stream) return;
      this.consoleLog = undefined;
      if (!this.closed) countWriter(path, -1);
    });
  }

  /**
   * The run is terminal and will close its console log: from now on a next run attaching the same
   * file (the next run of the workspace, which truncates it) waits until the last lines are flushed.
   */
  markClosing(): void {
    if (!this.consoleLog || this.closed) return;
    const path = this.consolePath;
    countWriter(path, -1);
    const done = new Promise<void>((resolve) => (this.closed = resolve));
    closingLogs.set(path, done);
    void done.then(() => {
      if (closingLogs.get(path) === done) closingLogs.delete(path);
    });
  }

  /**
   * Appends to the console log. What one turn of the event loop writes goes to the file in one
   * write (the stream is corked until the next turn): a step's start or end is several lines,
   * and each write costs a round trip to the thread pool.
   */
  private toConsoleLog(text: string): void {
    const s = this.consoleLog;
    if (!s) return;
    if (this.corked !== s) {
      this.corked = s;
      s.cork();
      setImmediate(() => {
        if (this.corked === s) this.corked = undefined;
        s.uncork();
      });
    }
    s.write(text);
  }

  private corked?: WriteStream;

  /** Stops teeing; resolves when the file is flushed. */
  async detachConsoleLog(): Promise<void> {
    const s = this.consoleLog;
    this.consoleLog = undefined;
    // A writer not counted off by markClosing is counted off here.
    if (s && !this.closed) countWriter(this.consolePath, -1);
    try {
      if (s) await new Promise<void>((resolve) => s.end(resolve));
    } finally {
      this.closed?.();
      this.closed = undefined;
    }
  }

  private emit(text: string, opts: { stderr?: boolean; quiet?: boolean; live?: boolean } = {}): void {
    // Live lines waiting go first: what a step printed comes before its "finished" line.
    if (!opts.live && this.pendingLive.length) this.flushLive();
    const lines = text.split('\n').map((l) => (this.opts.prefix ? this.opts.prefix + l : l));
    const joined = `${lines.join('\n')}\n`;
    this.toConsoleLog(stripAnsi(joined));
    if (!this.opts.stdout) return;
    if (opts.quiet && this.opts.silent) return;
    // The spinner owns the last terminal line: clear it, print, draw it again below.
    const spinning = this.spin?.isSpinning;
    if (spinning) this.spin!.clear();
    (opts.stderr ? process.stderr : process.stdout).write(joined);
    if (spinning) this.spin!.render();
  }

  /** A plain line (info level, hidden by --silent). */
  line(text: string): void {
    this.emit(text, { quiet: true });
  }

  /** A timestamped log line (`<time> INFO …`): hidden by --silent and by --disable-logging. */
  logLine(text: string): void {
    if (this.opts.noLogLines) return;
    this.emit(text, { quiet: true });
  }

  /** A line that is always shown (summaries, results). */
  always(text: string): void {
    this.emit(text);
  }

  info(text: string): void {
    this.emit(`${this.c.cyan('◆')} ${text}`, { quiet: true });
  }

  warn(text: string): void {
    this.emit(`${this.c.yellow('⚠')} ${text}`, { quiet: true });
  }

  error(text: string): void {
    this.emit(`${this.c.red('✘')} ${text}`, { stderr: true });
  }

  stepLog(text: string): void {
    this.emit(`${this.c.magenta('＊')} ${text}`, { quiet: true });
  }

  stepStart(name: string, type: string, lines: string[], suppressDetails = false): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
    this.stepBegan(name);
    this.emit(`${this.c.blue('▶')} ${sym} ${this.c.dim('(starting)')} ${this.c.bold(name)}`, { quiet: true });
    if (!suppressDetails) for (const l of lines) this.emit(`  ${this.c.dim(sym)} ${l}`, { quiet: true });
  }

  /** A step completed; its output block is shown unless `streamedLines` of it were shown live. */
  stepSuccess(name: string, type: string, durationMs: number, output: string, streamedLines = 0): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
    this.flushLive();
    this.stepEnded(name);
    this.emit(`${this.c.green('✔')} ${sym} ${this.c.dim(`(finished in ${formatDuration(durationMs)})`)} ${name}`, { quiet: true });
    if (!this.streamed(streamedLines)) this.outputBlock(output);
  }

  /** The `[output]` block: every non-blank line indented two spaces. Hidden by --silent. */
  outputBlock(output: string): void {
    const lines = output.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) return;
    this.emit(`${this.c.dim('[output]')}\n${lines.map((l) => `  ${l}`).join('\n')}`, { quiet: true });
  }

  stepFailed(name: string, type: string, error: string, commands: string[]): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
    this.flushLive();
    this.stepEnded(name);
    this.emit(`${this.c.red('⏹')} ${sym} ${this.c.red('(failed)')} ${name}: ${error}`, { stderr: true });
    for (const cmd of commands) this.emit(`  ${this.c.dim(sym)} ${cmd}`, { stderr: true });
  }

  stepSkipped(name: string, reason?: string): void {
    this.stepEnded(name);
    this.emit(`${this.c.gray('◌')} ${name} (skipped)${reason ? ` ${this.c.dim(reason)}` : ''}`, { quiet: true });
  }

  /** Raw lines printed by functions (log_info …): shown unless --silent. */
  functionLog(line: string): void {
    this.emit(line, { quiet: true });
  }
}

/** Removes ANSI escape sequences (for the console log file). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
