/**
 * Safe .tar.gz extraction without a tar library: the gzip stream is inflated to a temporary .tar
 * (byte-capped), the 512-byte headers are read and checked — checksum, name rules, ustar prefix,
 * GNU long names and pax `path`/`size` records — and only regular files and folders are accepted:
 * symlinks, hard links, devices and FIFOs refuse the whole archive. Only after every header passed
 * are the files written, each with an exclusive create.
 */
import { closeSync, createReadStream, createWriteStream, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, entrySegments, shownName, type ArchiveLimits } from './archive-names.js';

const BLOCK = 512;

/** Inflates a gzip file into `dest` (created exclusively), refusing output over `maxBytes`. */
export async function gunzipCapped(src: string, dest: string, maxBytes: number, mode = 0o600): Promise<number> {
  let total = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      done(total > maxBytes ? new ArchiveError(`archive expands beyond ${maxBytes} bytes`) : null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(src), createGunzip(), meter, createWriteStream(dest, { flags: 'wx', mode }));
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`not a valid gzip file: ${(err as Error).message}`);
  }
  return total;
}

interface TarEntry {
  rel: string;
  dir: boolean;
  mode: number;
  offset: number;
  size: number;
}

const cstr = (b: Buffer) => {
  const nul = b.indexOf(0);
  return (nul === -1 ? b : b.subarray(0, nul)).toString('utf8');
};

function parseNumeric(field: Buffer, what: string): number {
  if (field[0]! & 0x80) {
    // base-256 (GNU) for large values
    let n = 0;
    for (let i = 1; i < field.length; i++) n = n * 256 + field[i]!;
    if (!Number.isSafeInteger(n)) throw new ArchiveError(`invalid ${what} in tar header`);
    return n;
  }
  const text = cstr(field).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new ArchiveError(`invalid ${what} in tar header`);
  return parseInt(text, 8);
}

function checksumOk(h: Buffer): boolean {
  const stored = parseNumeric(h.subarray(148, 156), 'checksum');
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : h[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  return stored === unsigned || stored === signed;
}

/** `len key=value\n` records of a pax header. */
function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space === -1) break;
    const len = Number(data.subarray(pos, space).toString('ascii'));
    if (!Number.isSafeInteger(len) || len <= 0 || pos + len > data.length) throw new ArchiveError('invalid pax header');
    const record = data.subarray(space + 1, pos + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    pos += len;
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = { '1': 'hard link', '2': 'symbolic link', '3': 'character device', '4': 'block device', '6': 'FIFO' };

/** Reads and checks every header of an uncompressed tar; nothing is written. */
export function planTar(tarFile: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): TarEntry[] {
  const fd = openSync(tarFile, 'r');
  try {
    const size = fstatSync(fd).size;
    const entries: TarEntry[] = [];
    const header = Buffer.alloc(BLOCK);
    let pos = 0;
    let longName: string | undefined;
    let pax: Record<string, string> = {};
    let total = 0;
    const readData = (at: number, len: number) => {
      if (len > 1024 * 1024) throw new ArchiveError('tar metadata entry too large');
      const b = Buffer.alloc(len);
      if (readSync(fd, b, 0, len, at) !== len) throw new ArchiveError('truncated tar archive');
      return b;
    };
    while (pos + BLOCK <= size) {
      if (readSync(fd, header, 0, BLOCK, pos) !== BLOCK) throw new ArchiveError('truncated tar archive');
      if (header.every((b) => b === 0)) return entries; // end-of-archive marker
      if (!checksumOk(header)) throw new ArchiveError(`tar header checksum mismatch at offset ${pos}`);
      const type = String.fromCharCode(header[156]!);
      let entrySize = parseNumeric(header.subarray(124, 136), 'size');
      const dataAt = pos + BLOCK;
      const next = () => dataAt + Math.ceil(entrySize / BLOCK) * BLOCK;
      if (type === 'L' || type === 'x' || type === 'g' || type === 'K') {
        const data = readData(dataAt, entrySize);
        if (type === 'L') longName = cstr(data);
        else if (type === 'x') pax = parsePax(data);
        pos = next();
        continue;
      }
      const ustar = header.subarray(257, 262).toString('latin1') === 'ustar';
      const prefix = ustar ? cstr(header.subarray(345, 500)) : '';
      const name = pax.path ?? longName ?? (prefix ? `${prefix}/${cstr(header.subarray(0, 100))}` : cstr(header.subarray(0, 100)));
      if (pax.size !== undefined) {
        if (!/^\d+$/.test(pax.size)) throw new ArchiveError('invalid pax size');
        entrySize = Number(pax.size);
      }
      longName = undefined;
      pax = {};
      if (TYPE_NAMES[type]) throw new ArchiveError(`${TYPE_NAMES[type]} entries are not allowed: ${shownName(name)}`);
      const isFile = type === '0' || type === '\0' || type === '7';
      const isDir = type === '5';
      if (!isFile && !isDir) throw new ArchiveError(`unsupported tar entry type ${JSON.stringify(type)}: ${shownName(name)}`);
      const segments = entrySegments(name);
      if (dataAt + entrySize > size) throw new ArchiveError(`truncated entry: ${shownName(name)}`);
      if (segments.length > 0) {
        if (entries.length >= limits.maxEntries) throw new ArchiveError(`too many entries (> ${limits.maxEntries})`);
        total += isFile ? entrySize : 0;
        if (total > limits.maxTotalBytes) throw new ArchiveError(`archive expands beyond ${limits.maxTotalBytes} bytes`);
        const mode = parseNumeric(header.subarray(100, 108), 'mode');
        entries.push({ rel: segments.join('/'), dir: isDir, mode: isDir || (mode & 0o111) !== 0 ? 0o755 : 0o644, offset: dataAt, size: isFile ? entrySize : 0 });
      } else if (isFile) {
        throw new ArchiveError(`illegal entry name ${shownName(name)}`);
      }
      pos = next();
    }
    if (pos !== size) throw new ArchiveError('truncated tar archive');
    return entries;
  } finally {
    closeSync(fd);
  }
}

/** Extracts a checked plan from `tarFile` into the existing empty folder `dest`; returns files written. */
export async function extractTarFile(tarFile: string, dest: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  const plan = planTar(tarFile, limits);
  let count = 0;
  for (const e of plan) {
    const target = join(dest, ...e.rel.split('/'));
    if (e.dir) {
      mkdirSync(target, { recursive: true, mode: 0o755 });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    try {
      if (e.size === 0) {
        closeSync(openSync(target, 'wx', e.mode));
      } else {
        await pipeline(createReadStream(tarFile, { start: e.offset, end: e.offset + e.size - 1 }), createWriteStream(target, { flags: 'wx', mode: e.mode }));
      }
    } catch (err) {
      throw new ArchiveError(`cannot extract ${shownName(e.rel)}: ${(err as Error).message}`);
    }
    count++;
  }
  return count;
}
