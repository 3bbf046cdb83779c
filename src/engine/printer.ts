import { Chalk, type ChalkInstance } from 'chalk';
import { createWriteStream, type WriteStream } from 'node:fs';
import { formatDuration } from '../util/duration.js';

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
}

/**
 * The run console: what a user sees while a run executes. Every line also goes to
 * `run-console.log` (including output blocks hidden by --silent), so the file is a full record.
 */
export class RunPrinter {
  readonly c: ChalkInstance;
  private consoleLog?: WriteStream;

  constructor(private readonly opts: PrinterOptions) {
    this.c = new Chalk({ level: opts.color ? 1 : 0 });
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
    (opts.stderr ? process.stderr : process.stdout).write(joined);
  }

  /** A plain line (info level, hidden by --silent). */
  line(text: string): void {
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
    this.emit(`${this.c.blue('▶')} ${sym} ${this.c.dim('(starting)')} ${this.c.bold(name)}`, { quiet: true });
    if (!suppressDetails) for (const l of lines) this.emit(`  ${this.c.dim(sym)} ${l}`, { quiet: true });
  }

  stepSuccess(name: string, type: string, durationMs: number, output: string): void {
    const sym = STEP_SYMBOLS[type] ?? '▶';
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
    this.emit(`${this.c.red('⏹')} ${sym} ${this.c.red('(failed)')} ${name}: ${error}`, { stderr: true });
    for (const cmd of commands) this.emit(`  ${this.c.dim(sym)} ${cmd}`, { stderr: true });
  }

  stepSkipped(name: string, reason?: string): void {
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
