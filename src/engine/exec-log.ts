import { closeSync, openSync, writeSync } from 'node:fs';

/** Local ISO-8601 timestamp with offset, as the reference's JSON logger writes it. */
export function localTimestamp(d = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/**
 * `run-execution.log`: one JSON object per line (timestamp, level, message, fields), appended
 * synchronously so a crash never loses what was logged before it.
 */
export class ExecutionLog {
  private fd?: number;
  private failed = false;

  /**
   * `tee`, when given, is also told every line this run writes: the file is shared by the
   * workspace's runs, so a worker keeps its run's own lines to send them to the master.
   */
  constructor(
    private readonly path?: string,
    private readonly tee?: (line: string) => void,
  ) {}

  /** Appends one record; failures to write are ignored (logging must never fail a run). */
  write(level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR', message: string, fields: Record<string, unknown> = {}): void {
    if (!this.path) return;
    const line = `${JSON.stringify({ timestamp: localTimestamp(), level, message, ...fields })}\n`;
    this.tee?.(line);
    if (this.failed) return;
    try {
      this.fd ??= openSync(this.path, 'a');
      writeSync(this.fd, line);
    } catch {
      // The folder may have been removed by the workflow itself; stop trying.
      this.failed = true;
    }
  }

  /** Closes the file. */
  close(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
      this.fd = undefined;
    }
  }
}
