/**
 * Zip extraction for untrusted snapshots. `inspectZip` checks EVERY entry of the central
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
import { errors } from '../errors.js';
import { declaredEntryCount } from './zip-eocd.js';

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

const reject = (detail: string) => errors.snapshotRejected(detail);
/** An entry name as shown in messages (control characters escaped). */
const shown = (name: string) => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);

/** Validates one entry name; returns its segments. */
function checkName(raw: ZipFile): { segments: string[]; dir: boolean } {
  const name = raw.path;
  if (raw.pathBuffer.includes(0) || name.includes('\0')) throw reject(`illegal file path: ${shown(name)} (NUL byte)`);
  if (name.includes('\\')) throw reject(`illegal file path: ${shown(name)} (backslash)`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw reject(`illegal file path: ${shown(name)} (control character)`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw reject(`illegal file path: ${shown(name)} (absolute path)`);
  if (name.length === 0 || name.length > 4096) throw reject(`illegal file path: ${shown(name)} (empty or too long)`);
  const dir = name.endsWith('/');
  const segments = (dir ? name.slice(0, -1) : name).split('/');
  for (const s of segments) {
    if (s === '..') throw reject(`illegal file path: ${shown(name)} (parent directory segment)`);
    if (s === '' || s === '.') throw reject(`illegal file path: ${shown(name)} (empty or "." segment)`);
    if (Buffer.byteLength(s) > 255) throw reject(`illegal file path: ${shown(name)} (name too long)`);
  }
  return { segments, dir };
}

/** Opens the archive and checks every entry; nothing is written. */
export async function inspectZip(file: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipPlan> {
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
    const { segments, dir } = checkName(f);
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
export async function extractEntries(plan: ZipPlan, target: (e: ZipEntry) => string | null, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<number> {
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
        if (written > e.size) return done(reject(`entry expands beyond its declared size: ${shown(e.path)}`));
        if (total > limits.maxTotalBytes) return done(reject(`archive expands beyond ${limits.maxTotalBytes} bytes`));
        crc = crc32(chunk, crc);
        done(null, chunk);
      },
    });
    try {
      await pipeline(e.source.stream(), meter, createWriteStream(dest, { flags: 'wx', mode: e.mode }));
    } catch (err) {
      if (err instanceof Error && 'status' in err) throw err;
      throw reject(`cannot extract ${shown(e.path)}: ${(err as Error).message}`);
    }
    if (written !== e.size) throw reject(`truncated entry: ${shown(e.path)}`);
    if ((crc >>> 0) !== e.crc) throw reject(`CRC mismatch: ${shown(e.path)}`);
    files++;
  }
  return files;
}
