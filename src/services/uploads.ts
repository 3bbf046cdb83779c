/**
 * POST /upload-file: a file streamed to `<uploads>/<ns-epoch>_<sanitised name>` (never buffered
 * whole), its size capped, its lines counted while it streams. The stored path is accepted as
 * `target_file` by POST /runs.
 */
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errors } from '../errors.js';
import { sanitizeName } from '../util/fs-safe.js';
import type { AppContext } from './context.js';

export interface UploadInput {
  filename: string;
  /** The file's bytes; `truncated` is set by multipart parsers that stopped at their size limit. */
  stream: Readable & { truncated?: boolean };
  limitBytes: number;
}

export interface UploadResult {
  filename: string;
  path: string;
  size: number;
  lines: number;
}

// hrtime is monotonic, not an epoch: anchor it once to the wall clock, then add elapsed nanoseconds.
const EPOCH_NS_AT_START = BigInt(Date.now()) * 1_000_000n;
const HR_AT_START = process.hrtime.bigint();
let lastStamp = 0n;

/** Nanoseconds since the Unix epoch, strictly increasing within this process. */
export function epochNanos(): bigint {
  let ns = EPOCH_NS_AT_START + (process.hrtime.bigint() - HR_AT_START);
  if (ns <= lastStamp) ns = lastStamp + 1n;
  lastStamp = ns;
  return ns;
}

/** Counts bytes and lines (newlines, +1 when the last byte is not a newline) and enforces the size cap. */
class LineCounter extends Transform {
  size = 0;
  newlines = 0;
  lastByte = -1;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      done(new UploadLimitError());
      return;
    }
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.newlines++;
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1]!;
    done(null, chunk);
  }

  get lines(): number {
    return this.newlines + (this.size > 0 && this.lastByte !== 10 ? 1 : 0);
  }
}

class UploadLimitError extends Error {}

/** Streams an upload to the uploads folder; a file over the limit is removed and answered 413. */
export async function saveUpload(app: AppContext, input: UploadInput): Promise<UploadResult> {
  const dir = app.settings().paths.uploads;
  mkdirSync(dir, { recursive: true });
  const limitMb = Math.round(input.limitBytes / 1024 / 1024);
  const counter = new LineCounter(input.limitBytes);
  const filename = `${epochNanos()}_${sanitizeName(input.filename || 'upload')}`;
  const path = join(dir, filename);
  // 'wx': never overwrite an existing file, even if two uploads ever got the same stamp.
  const out = createWriteStream(path, { flags: 'wx', mode: 0o644 });
  try {
    await pipeline(input.stream, counter, out);
  } catch (err) {
    // A body cut short fails the pipeline before the write stream has finished opening the file;
    // removing it then would race the open and leave the partial upload behind.
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    rmSync(path, { force: true });
    if (err instanceof UploadLimitError || (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw errors.uploadTooLarge(limitMb);
    throw err;
  }
  if (input.stream.truncated) {
    rmSync(path, { force: true });
    throw errors.uploadTooLarge(limitMb);
  }
  return { filename, path, size: counter.size, lines: counter.lines };
}
