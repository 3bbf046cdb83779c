/**
 * Line reading for importers: a byte-level splitter with a cap on line length, fed by a stream
 * (async) or by fixed-size reads (sync, for workflow functions). Memory stays bounded by the read
 * size plus one line, whatever the file size; an over-long line is reported, not buffered.
 */
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';

/** Receives each line: its 1-based number and its text, or null when it exceeded the cap. */
export type LineHandler = (lineNo: number, text: string | null) => void;

export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
const READ_SIZE = 1 << 20;

/** Splits a byte stream on `\n` (a trailing `\r` is dropped); UTF-8 safe since 0x0A never occurs inside a sequence. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private overflow = false;
  private lineNo = 0;

  constructor(
    private readonly emit: LineHandler,
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {}

  /** Feeds one chunk; the chunk may be reused by the caller afterwards (tails are copied). */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        this.append(chunk.subarray(start), true);
        return;
      }
      this.append(chunk.subarray(start, nl), false);
      this.endLine();
      start = nl + 1;
    }
  }

  /** Flushes a last line without a trailing newline. */
  end(): void {
    if (this.size > 0 || this.overflow) this.endLine();
  }

  private append(bytes: Buffer, copy: boolean): void {
    if (this.overflow || bytes.length === 0) return;
    if (this.size + bytes.length > this.maxLineBytes) {
      this.overflow = true;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(copy ? Buffer.from(bytes) : bytes);
    this.size += bytes.length;
  }

  private endLine(): void {
    this.lineNo++;
    if (this.overflow) {
      this.emit(this.lineNo, null);
    } else {
      const buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
      let text = buf.toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      this.emit(this.lineNo, text);
    }
    this.parts = [];
    this.size = 0;
    this.overflow = false;
  }
}

/**
 * Streams a file line by line; rejects when the file cannot be read. `afterChunk` (e.g. storing the
 * batches the chunk's lines filled) is awaited after each chunk read and at the end.
 */
export async function forEachLineAsync(file: string, onLine: LineHandler, maxLineBytes = DEFAULT_MAX_LINE_BYTES, afterChunk?: () => Promise<void>): Promise<void> {
  const splitter = new LineSplitter(onLine, maxLineBytes);
  for await (const chunk of createReadStream(file, { highWaterMark: READ_SIZE })) {
    splitter.push(chunk as Buffer);
    await afterChunk?.();
  }
  splitter.end();
  await afterChunk?.();
}

/** Reads a file line by line synchronously (workflow functions are synchronous); throws when unreadable. */
export function forEachLineSync(file: string, onLine: LineHandler, maxLineBytes = DEFAULT_MAX_LINE_BYTES): void {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(READ_SIZE);
  const splitter = new LineSplitter(onLine, maxLineBytes);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      splitter.push(buf.subarray(0, n));
    }
    splitter.end();
  } finally {
    closeSync(fd);
  }
}
