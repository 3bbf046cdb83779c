/** Longest partial line held back while waiting for its newline; a longer one is cut there. */
export const MAX_PARTIAL_LINE = 256 * 1024;

const NEWLINE = Buffer.from('\n');

/**
 * Splits a byte stream into whole lines. A command's stdout and stderr each get one, so the lines of
 * several commands writing to one step log never interleave mid-line. Works on bytes: a newline
 * never occurs inside a UTF-8 sequence, so whole lines always decode cleanly.
 */
export class LineSplitter {
  private rest: Buffer[] = [];
  private restLength = 0;

  /** Feeds a chunk; returns the bytes of the lines it completed (each ending in `\n`), if any. */
  push(chunk: Buffer): Buffer | undefined {
    const nl = chunk.lastIndexOf(10);
    if (nl === -1) {
      if (chunk.length === 0) return undefined;
      // Copied: the caller may reuse its buffer for the next chunk.
      this.rest.push(Buffer.from(chunk));
      this.restLength += chunk.length;
      return this.restLength >= MAX_PARTIAL_LINE ? this.flush() : undefined;
    }
    const head = chunk.subarray(0, nl + 1);
    const done = this.restLength ? Buffer.concat([...this.rest, head]) : head;
    const tail = chunk.subarray(nl + 1);
    this.rest = tail.length ? [Buffer.from(tail)] : [];
    this.restLength = tail.length;
    if (this.restLength < MAX_PARTIAL_LINE) return done;
    return Buffer.concat([done, this.flush()!]);
  }

  /** What is left (output that did not end with a newline), terminated with one; undefined when nothing is. */
  flush(): Buffer | undefined {
    if (this.restLength === 0) return undefined;
    const out = Buffer.concat([...this.rest, NEWLINE]);
    this.rest = [];
    this.restLength = 0;
    return out;
  }
}

/** Number of `\n` bytes in a buffer. */
export function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  return n;
}
