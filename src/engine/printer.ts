import { Chalk, type ChalkInstance } from 'chalk';
import { createWriteStream, type WriteStream } from 'node:fs';
import ora, { type Ora } from 'ora';
import { formatDuration } from '../util/duration.js';
import { untracedStderr } from '../util/log-file.js';

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
}

/**
 * The run console: what a user sees while a run executes. Every line also goes to
 * `run-console.log` (including output blocks hidden by --silent), so the file is a full record.
 */
export class RunPrinter {
  readonly c: ChalkInstance;
  private consoleLog?: WriteStream;
  /** Steps started and not yet finished (name → start times; foreach runs one name many times). */
  private readonly running = new Map<string, number[]>();
  private spin?: Ora;
  private tick?: NodeJS.Timeout;

  constructor(private readonly opts: PrinterOptions) {
    this.c = new Chalk({ level: opts.color ? 1 : 0 });
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
    const secs = formatDuration(now - oldest[1]);
    const others = count - 1;
    return `${oldest[0]} running for ${secs}${others > 0 ? ` (+${others} more step${others > 1 ? 's' : ''})` : ''}`;
  }

  private stepBegan(name: string): void {
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

  /** Starts teeing into a console log file (truncated when `truncate`). */
  attachConsoleLog(path: string, truncate: boolean): void {
    this.detachConsoleLog();
    this.consoleLog = createWriteStream(path, { flags: truncate ? 'w' : 'a' });
    this.consoleLog.on('error', () => {
      this.consoleLog = undefined;
    });
  }

  /** Stops teeing; resolves when the file is flushed. */
  async detachConsoleLog(): Promise<void> {
    const s = this.consoleLog;
    this.consoleLog = undefined;
    if (s) await new Promise<void>((resolve) => s.end(resolve));
  }

  private emit(text: string, opts: { stderr?: boolean; quiet?: boolean } = {}): void {
    const lines = text.split('\n').map((l) => (this.opts.prefix ? this.opts.prefix + l : l));
    const joined = `${lines.join('\n')}\n`;
    this.consoleLog?.write(stripAnsi(joined));
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

  stepSuccess(name: string, type: string, durationMs: number, output: string): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
    this.stepEnded(name);
    this.emit(`${this.c.green('✔')} ${sym} ${this.c.dim(`(finished in ${formatDuration(durationMs)})`)} ${name}`, { quiet: true });
    this.outputBlock(output);
  }

  /** The `[output]` block: every non-blank line indented two spaces. Hidden by --silent. */
  outputBlock(output: string): void {
    const lines = output.split('\n').filter((l) => l.trim() !== '');
    if (lines.length === 0) return;
    this.emit(`${this.c.dim('[output]')}\n${lines.map((l) => `  ${l}`).join('\n')}`, { quiet: true });
  }

  stepFailed(name: string, type: string, error: string, commands: string[]): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
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
