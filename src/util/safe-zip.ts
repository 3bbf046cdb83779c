/**
 * Zip extraction for untrusted archives (snapshots, registry downloads). `inspectZip` checks EVERY entry of the central
 * directory before anything is written: no absolute paths, no `..` or `.` segments, no
 * backslashes, NUL or control characters, no duplicates or file/folder clashes, no symlinks,
 * devices or other special files (Unix type bits of the external attributes), no encryption,
 * only stored/deflated data, at most `maxEntries` entries, a declared total within
 * `maxTotalBytes`, and no entry with an absurd compression ratio. `extractEntries` then writes
 * into folders the caller chose, counting the bytes actually inflated: an entry that produces more
 * than it declared, a total over the cap, or a CRC mismatch stops the extraction with an error.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import unzipper, { type File as ZipFile } from 'unzipper';
import { declaredEntryCount } from '../snapshot/zip-eocd.js';

/** How a caller reports a refused archive and how strict entry names are. */
export interface ZipPolicy {
  /** Builds the error thrown for a refused archive; `detail` names the entry and the reason. */
  fail: (detail: string) => Error;
  /** Prefix of name errors, e.g. `illegal file path: `. */
  nameLabel: string;
  /** Drop `.` and empty segments (`./a//b` → `a/b`) instead of refusing them; the root (`./`) is skipped. */
  lenientSegments?: boolean;
}

export interface ZipLimits {
  /** More entries than this are refused (default 10 000). */
  maxEntries: number;
  /** Cap on the sum of declared sizes and on the bytes actually written (default 2 GiB). */
  maxTotalBytes: number;
  /** Entries larger than `ratioMinBytes` may not inflate more than this many times their compressed size. */
  maxRatio: number;
  ratioMinBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 10_000, maxTotalBytes: 2 * 1024 ** 3, maxRatio: 200, ratioMinBytes: 10 * 1024 ** 2 };

export interface ZipEntry {
  /** `a/b/c` (no leading or trailing slash). */
  path: string;
  dir: boolean;
  /** 0o644 or 0o755 (only the executable bit of the archive is kept). */
  mode: number;
  size: number;
  crc: number;
  source: ZipFile;
}

export interface ZipPlan {
  entries: ZipEntry[];
  /** Sum of the declared uncompressed sizes. */
  declaredBytes: number;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** An entry name as shown in messages (control characters escaped). */
export const shownName = (name: string) => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
const shown = shownName;

/**
 * The safe relative segments of an archive entry name (zip or tar). Refuses NUL and control
 * characters, backslashes, absolute and drive paths, `..` segments and over-long names; `.` and
 * empty segments are refused, or dropped with `lenientSegments` (then `./` gives []).
 */
export function entryNameSegments(name: string, policy: ZipPolicy): string[] {
  const bad = (why: string) => policy.fail(`${policy.nameLabel}${shown(name)} (${why})`);
  if (name.includes('\0')) throw bad('NUL byte');
  if (/[\u0000-\u001f\u007f]/.test(name)) throw bad('control character');
  if (name.includes('\\')) throw bad('backslash');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw bad('absolute path');
  if (name.length === 0 || name.length > 4096) throw bad('empty or too long');
  const parts = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  const segments: string[] = [];
  for (const s of parts) {
    if (s === '..') throw bad('parent directory segment');
    if (s === '' || s === '.') {
      if (policy.lenientSegments) continue;
      throw bad('empty or "." segment');
    }
    if (Buffer.byteLength(s) > 255) throw bad('name too long');
    segments.push(s);
  }
  return segments;
}

/** Opens the archive and checks every entry; nothing is written. */
export async function inspectZip(file: string, limits: ZipLimits, policy: ZipPolicy): Promise<ZipPlan> {
  const reject = policy.fail;
  let declared: number | undefined;
  try {
    declared = declaredEntryCount(file);
  } catch (err) {
    throw reject(`cannot read archive: ${(err as Error).message}`);
  }
  if (declared === undefined) throw reject('not a valid zip archive');
  if (declared > limits.maxEntries) throw reject(`too many entries (${declared} > ${limits.maxEntries})`);
  let files: ZipFile[];
  try {
    files = (await unzipper.Open.file(file)).files;
  } catch (err) {
    throw reject(`not a valid zip archive: ${(err as Error).message}`);
  }
  if (files.length !== declared) throw reject('inconsistent central directory');

  const entries: ZipEntry[] = [];
  const filePaths = new Set<string>();
  const dirPaths = new Set<string>();
  let declaredBytes = 0;
  for (const f of files) {
    if (f.pathBuffer.includes(0)) throw reject(`${policy.nameLabel}${shown(f.path)} (NUL byte)`);
    const segments = entryNameSegments(f.path, policy);
    const dir = f.path.endsWith('/');
    if (segments.length === 0) {
      // Only a lenient policy gets here: the archive root (`./`) has nothing to create.
      if (!dir) throw reject(`${policy.nameLabel}${shown(f.path)} (no name)`);
      continue;
    }
    const path = segments.join('/');
    const type = (f.externalFileAttributes >>> 16) & S_IFMT;
    if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
      throw reject(`illegal entry type: ${shown(f.path)} (${(type >> 12) === 0o12 ? 'symbolic link' : 'special file'})`);
    }
    if ((type === S_IFDIR) !== dir && type !== 0) throw reject(`illegal entry type: ${shown(f.path)} (folder flag mismatch)`);
    if (f.flags & 0x1) throw reject(`encrypted entry: ${shown(f.path)}`);
    if (f.compressionMethod !== 0 && f.compressionMethod !== 8) throw reject(`unsupported compression method ${f.compressionMethod}: ${shown(f.path)}`);
    if (dir && f.uncompressedSize !== 0) throw reject(`illegal folder entry with data: ${shown(f.path)}`);
    const size = Number(f.uncompressedSize);
    const packed = Number(f.compressedSize);
    if (!Number.isSafeInteger(size) || size < 0) throw reject(`invalid size: ${shown(f.path)}`);
    if (size > limits.ratioMinBytes && size / Math.max(1, packed) > limits.maxRatio) {
      throw reject(`suspicious compression ratio: ${shown(f.path)} (${size} bytes from ${packed})`);
    }
    declaredBytes += size;
    if (declaredBytes > limits.maxTotalBytes) throw reject(`archive expands beyond ${limits.maxTotalBytes} bytes`);
    if (filePaths.has(path) || (dir ? false : dirPaths.has(path))) throw reject(`duplicate entry: ${shown(f.path)}`);
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (filePaths.has(parent)) throw reject(`entry below a file: ${shown(f.path)}`);
      dirPaths.add(parent);
    }
    if (dir) {
      if (filePaths.has(path)) throw reject(`duplicate entry: ${shown(f.path)}`);
      dirPaths.add(path);
    } else {
      filePaths.add(path);
    }
    const exec = type === S_IFREG && ((f.externalFileAttributes >>> 16) & 0o111) !== 0;
    entries.push({ path, dir, mode: dir || exec ? 0o755 : 0o644, size, crc: f.crc32 >>> 0, source: f });
  }
  return { entries, declaredBytes };
}

/**
 * Extracts the entries `target` maps to an absolute destination (null skips one); returns the
 * number of files written. Files are created exclusively (never through an existing path).
 */
export async function extractEntries(plan: ZipPlan, target: (e: ZipEntry) => string | null, limits: ZipLimits, policy: ZipPolicy): Promise<number> {
  const reject = policy.fail;
  // Errors raised by the meter itself pass through the pipeline unchanged.
  const refusals = new WeakSet<object>();
  const refusal = (detail: string) => {
    const err = reject(detail);
    refusals.add(err);
    return err;
  };
  let total = 0;
  let files = 0;
  for (const e of plan.entries) {
    const dest = target(e);
    if (dest === null) continue;
    if (e.dir) {
      mkdirSync(dest, { recursive: true, mode: 0o755 });
      continue;
    }
    mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
    let written = 0;
    let crc = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        written += chunk.length;
        total += chunk.length;
        if (written > e.size) return done(refusal(`entry expands beyond its declared size: ${shown(e.path)}`));
        if (total > limits.maxTotalBytes) return done(refusal(`archive expands beyond ${limits.maxTotalBytes} bytes`));
        crc = crc32(chunk, crc);
        done(null, chunk);
      },
    });
    try {
      await pipeline(e.source.stream(), meter, createWriteStream(dest, { flags: 'wx', mode: e.mode }));
    } catch (err) {
      if (err instanceof Error && refusals.has(err)) throw err;
      throw reject(`cannot extract ${shown(e.path)}: ${(err as Error).message}`);
    }
    if (written !== e.size) throw reject(`truncated entry: ${shown(e.path)}`);
    if ((crc >>> 0) !== e.crc) throw reject(`CRC mismatch: ${shown(e.path)}`);
    files++;
  }
  return files;
}
