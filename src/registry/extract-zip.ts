/**
 * Safe zip extraction. The entry count declared by the end-of-central-directory record is checked
 * before the directory is parsed; then every entry is checked (name rules, no symlinks or special
 * files, no encryption, stored/deflated only, sizes and compression ratio) before anything is
 * written; then entries are written with exclusive creates, metering the bytes actually inflated
 * and checking each CRC.
 */
import { closeSync, createWriteStream, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import unzipper, { type File as ZipFile } from 'unzipper';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, entrySegments, shownName, type ArchiveLimits } from './archive-names.js';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const RATIO_MIN_BYTES = 10 * 1024 * 1024;

/** Entry count from the end-of-central-directory record (zip64 archives are refused). */
export function zipEntryCount(file: string): number {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const tailLen = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLen);
    readSync(fd, tail, 0, tailLen, size - tailLen);
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) !== 0x06054b50 || tail.readUInt16LE(i + 20) !== tail.length - i - 22) continue;
      const count = tail.readUInt16LE(i + 10);
      if (count === 0xffff || tail.readUInt32LE(i + 16) === 0xffffffff) throw new ArchiveError('zip64 archives are not supported');
      return count;
    }
    throw new ArchiveError('not a valid zip archive (no end of central directory)');
  } finally {
    closeSync(fd);
  }
}

interface PlannedEntry {
  rel: string;
  dir: boolean;
  mode: number;
  size: number;
  crc: number;
  source: ZipFile;
}

/** Checks every entry; nothing is written. */
async function planZip(file: string, limits: ArchiveLimits): Promise<PlannedEntry[]> {
  const declared = zipEntryCount(file);
  if (declared > limits.maxEntries) throw new ArchiveError(`too many entries (${declared} > ${limits.maxEntries})`);
  let files: ZipFile[];
  try {
    files = (await unzipper.Open.file(file)).files;
  } catch (err) {
    throw new ArchiveError(`not a valid zip archive: ${(err as Error).message}`);
  }
  if (files.length > limits.maxEntries) throw new ArchiveError(`too many entries (${files.length} > ${limits.maxEntries})`);
  const plan: PlannedEntry[] = [];
  let total = 0;
  for (const f of files) {
    const segments = entrySegments(f.path);
    const type = (f.externalFileAttributes >>> 16) & S_IFMT;
    if (type === S_IFLNK) throw new ArchiveError(`symbolic link entries are not allowed: ${shownName(f.path)}`);
    if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) throw new ArchiveError(`special file entries are not allowed: ${shownName(f.path)}`);
    if (f.flags & 0x1) throw new ArchiveError(`encrypted entry: ${shownName(f.path)}`);
    const dir = f.path.endsWith('/') || type === S_IFDIR;
    if (segments.length === 0) {
      if (!dir) throw new ArchiveError(`illegal entry name ${shownName(f.path)}`);
      continue;
    }
    if (!dir && f.compressionMethod !== 0 && f.compressionMethod !== 8) throw new ArchiveError(`unsupported compression method ${f.compressionMethod}: ${shownName(f.path)}`);
    const size = Number(f.uncompressedSize);
    const packed = Number(f.compressedSize);
    if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError(`invalid size: ${shownName(f.path)}`);
    if (size > RATIO_MIN_BYTES && size / Math.max(1, packed) > limits.maxRatio) throw new ArchiveError(`suspicious compression ratio: ${shownName(f.path)}`);
    total += size;
    if (total > limits.maxTotalBytes) throw new ArchiveError(`archive expands beyond ${limits.maxTotalBytes} bytes`);
    const exec = ((f.externalFileAttributes >>> 16) & 0o111) !== 0;
    plan.push({ rel: segments.join('/'), dir, mode: dir || exec ? 0o755 : 0o644, size, crc: f.crc32 >>> 0, source: f });
  }
  return plan;
}

/** Extracts `file` into the existing empty folder `dest`; returns the number of files written. */
export async function extractZip(file: string, dest: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  const plan = await planZip(file, limits);
  let total = 0;
  let count = 0;
  for (const e of plan) {
    const target = join(dest, ...e.rel.split('/'));
    if (e.dir) {
      mkdirSync(target, { recursive: true, mode: 0o755 });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    let written = 0;
    let crc = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        written += chunk.length;
        total += chunk.length;
        if (written > e.size) return done(new ArchiveError(`entry expands beyond its declared size: ${shownName(e.rel)}`));
        if (total > limits.maxTotalBytes) return done(new ArchiveError(`archive expands beyond ${limits.maxTotalBytes} bytes`));
        crc = crc32(chunk, crc);
        done(null, chunk);
      },
    });
    try {
      await pipeline(e.source.stream(), meter, createWriteStream(target, { flags: 'wx', mode: e.mode }));
    } catch (err) {
      if (err instanceof ArchiveError) throw err;
      throw new ArchiveError(`cannot extract ${shownName(e.rel)}: ${(err as Error).message}`);
    }
    if (written !== e.size) throw new ArchiveError(`truncated entry: ${shownName(e.rel)}`);
    if ((crc >>> 0) !== e.crc) throw new ArchiveError(`CRC mismatch: ${shownName(e.rel)}`);
    count++;
  }
  return count;
}
