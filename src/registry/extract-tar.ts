/**
 * Safe tar extraction on node-tar (`tar` v7). Two passes over the same uncompressed tar:
 * 1. the whole archive is parsed (strict: a bad checksum, a truncated archive or an oversized
 *    metadata record is an error) and every entry is checked — only regular files and folders
 *    with safe relative names; links (symbolic AND hard), devices, FIFOs and any type node-tar
 *    would silently skip refuse the whole archive, as do duplicates, more than `maxEntries`
 *    entries and a declared total over `maxTotalBytes`;
 * 2. only then is it extracted by node-tar, whose filter re-checks each entry against the plan
 *    and rewrites its mode (0755 when the archive had any executable bit, else 0644: no setuid),
 *    with node-tar's own guards on (no absolute paths, no `..`, no writing through a link,
 *    archive ownership ignored even when running as root).
 * A .tar.gz is inflated first by `gunzipCapped`, which meters the inflated bytes, so node-tar
 * only ever reads an uncompressed tar whose size is already capped.
 */
import { closeSync, createReadStream, createWriteStream, openSync, readSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract, Parser, type ReadEntry } from 'tar';
import { EntryTree } from '../util/archive-paths.js';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, entrySegments, shownName, type ArchiveLimits } from './archive-names.js';

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

/** One entry node-tar reports, as the check saw it. */
interface PlannedEntry {
  path: string;
  type: string;
  size: number;
  /** Segments to create, or undefined for the archive root (`./`), which is skipped. */
  rel?: string;
  mode: number;
}

const REFUSED_TYPES: Record<string, string> = {
  Link: 'hard link',
  SymbolicLink: 'symbolic link',
  CharacterDevice: 'character device',
  BlockDevice: 'block device',
  FIFO: 'FIFO',
};
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const META_LIMIT = 1024 * 1024;

/**
 * Parser options of both passes. Decompression is off (the caller inflated a .tar.gz with a byte
 * cap); node-tar still sniffs gzip, so a payload starting with gzip magic is refused beforehand.
 */
const PARSE_OPTIONS = { strict: true, zstd: false, brotli: false, maxMetaEntrySize: META_LIMIT };

/** node-tar's error, said the way the other archive errors are said. */
function tarFailure(err: unknown): ArchiveError {
  if (err instanceof ArchiveError) return err;
  const message = (err as Error)?.message ?? String(err);
  if (/checksum failure/.test(message)) return new ArchiveError('tar header checksum mismatch');
  return new ArchiveError(`invalid tar archive: ${message.replace(/^TAR_[A-Z_]+: /, '')}`);
}

function checkEntry(entry: ReadEntry, tree: EntryTree): PlannedEntry {
  const name = entry.path;
  const refused = REFUSED_TYPES[entry.type];
  if (refused) throw new ArchiveError(`${refused} entries are not allowed: ${shownName(name)}`);
  const isFile = FILE_TYPES.has(entry.type);
  if (!isFile && entry.type !== 'Directory') throw new ArchiveError(`unsupported tar entry type ${JSON.stringify(entry.type)}: ${shownName(name)}`);
  const segments = entrySegments(name);
  const size = isFile ? entry.size : 0;
  if (!isFile && entry.size !== 0) throw new ArchiveError(`illegal folder entry with data: ${shownName(name)}`);
  if (segments.length === 0) {
    if (isFile) throw new ArchiveError(`illegal entry name ${shownName(name)}`);
    return { path: name, type: entry.type, size, mode: 0o755 };
  }
  tree.add(segments, !isFile, shownName(name));
  const exec = ((entry.mode ?? 0) & 0o111) !== 0;
  return { path: name, type: entry.type, size, rel: segments.join('/'), mode: !isFile || exec ? 0o755 : 0o644 };
}

function refuseNestedCompression(tarFile: string): void {
  const fd = openSync(tarFile, 'r');
  try {
    const head = Buffer.alloc(4);
    const n = readSync(fd, head, 0, 4, 0);
    if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) throw new ArchiveError('invalid tar archive: compressed twice');
  } finally {
    closeSync(fd);
  }
}

/** Reads and checks every entry of an uncompressed tar; nothing is written. */
export async function planTar(tarFile: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<PlannedEntry[]> {
  refuseNestedCompression(tarFile);
  const plan: PlannedEntry[] = [];
  const tree = new EntryTree((detail) => new ArchiveError(detail));
  let files = 0;
  let total = 0;
  let failure: ArchiveError | undefined;
  const parser = new Parser(PARSE_OPTIONS);
  const refuse = (err: unknown) => {
    if (failure) return;
    failure = tarFailure(err);
    parser.abort(failure);
  };
  parser.on('entry', (entry: ReadEntry) => {
    entry.resume();
    if (failure) return;
    try {
      const planned = checkEntry(entry, tree);
      if (planned.rel !== undefined) {
        files++;
        if (files > limits.maxEntries) throw new ArchiveError(`too many entries (> ${limits.maxEntries})`);
        total += planned.size;
        if (total > limits.maxTotalBytes) throw new ArchiveError(`archive expands beyond ${limits.maxTotalBytes} bytes`);
      }
      plan.push(planned);
    } catch (err) {
      refuse(err);
    }
  });
  // node-tar skips unknown entry types and oversized metadata quietly; here they refuse the archive.
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    refuse(entry.meta
      ? new ArchiveError(`tar metadata entry too large (> ${META_LIMIT} bytes)`)
      : new ArchiveError(`unsupported tar entry type ${JSON.stringify(entry.type)}: ${shownName(entry.path)}`));
  });
  parser.on('error', refuse);
  const done = new Promise<void>((resolve) => parser.on('close', () => resolve()));
  try {
    for await (const chunk of createReadStream(tarFile)) {
      if (failure) break;
      parser.write(chunk as Buffer);
    }
  } catch (err) {
    refuse(err);
  }
  if (!failure) {
    parser.end();
    await done;
  }
  if (failure) throw failure;
  return plan;
}

/** Extracts a checked `tarFile` into the existing empty folder `dest`; returns files written. */
export async function extractTarFile(tarFile: string, dest: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  const plan = await planTar(tarFile, limits);
  let next = 0;
  let drift = false;
  await extract({
    ...PARSE_OPTIONS,
    file: tarFile,
    cwd: dest,
    preservePaths: false,
    // The archive's owner ids would otherwise be applied when running as root.
    preserveOwner: false,
    keep: true,
    noMtime: true,
    dmode: 0o755,
    fmode: 0o644,
    filter: (path, entry) => {
      const e = entry as ReadEntry;
      const planned = plan[next++];
      // The same parser read the same file a moment ago: anything else means the file changed.
      if (!planned || drift || planned.path !== path || planned.type !== e.type || planned.size !== e.size) {
        drift = true;
        return false;
      }
      e.mode = planned.mode;
      return planned.rel !== undefined;
    },
  }).catch((err: unknown) => {
    throw tarFailure(err);
  });
  if (drift || next !== plan.length) throw new ArchiveError('the archive changed after it was checked');
  return plan.filter((e) => e.rel !== undefined && FILE_TYPES.has(e.type)).length;
}
