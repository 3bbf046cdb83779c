/**
 * Zip extraction for untrusted archives (snapshots, registry downloads), on yauzl: it reads the
 * central directory (zip64 included) and gives the entry count before any entry is parsed, every
 * entry's name, sizes, external attributes and flags, and inflates one entry at a time, checking
 * that each entry produces exactly the bytes it declares.
 *
 * `inspectZip` checks EVERY entry before anything is written: no absolute paths, no `..` or `.`
 * segments, no backslashes, NUL or control characters (then yauzl's own name check as a second
 * opinion), no duplicates or file/folder clashes, no symlinks, devices or other special files
 * (Unix type bits of the external attributes), no encryption, only stored/deflated data, at most
 * `maxEntries` entries, a declared total within `maxTotalBytes`, and no entry with an absurd
 * compression ratio. `extractEntries` then writes into folders the caller chose, counting the
 * bytes actually inflated: an entry that produces more or less than it declared, a total over the
 * cap, or a CRC mismatch stops the extraction with an error.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { EntryTree, entryNameSegments, shownName, type ArchivePolicy } from './archive-paths.js';

export { entryNameSegments, shownName } from './archive-paths.js';

/** How a caller reports a refused archive and how strict entry names are. */
export type ZipPolicy = ArchivePolicy;

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
  /** Position of the entry in the central directory. */
  index: number;
}

export interface ZipPlan {
  /** The archive the plan was made from. */
  file: string;
  entries: ZipEntry[];
  /** Sum of the declared uncompressed sizes. */
  declaredBytes: number;
  /** Central directory records in the archive (the root `./` of a lenient archive included). */
  recordCount: number;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/**
 * yauzl options. Names are decoded and checked here, so that a backslash is refused rather than
 * turned into a `/`. Sizes are checked by yauzl while extracting (`validateEntrySizes`); the
 * inspection reads with it off so that every record meets the checks below in their order, and
 * does yauzl's stored-size check itself once the others passed.
 */
const openOptions = (validateEntrySizes: boolean) => ({ autoClose: false, lazyEntries: true, decodeStrings: false, validateEntrySizes });

async function openZip(file: string, limits: ZipLimits, reject: (detail: string) => Error, validateEntrySizes: boolean): Promise<ZipFile> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(file, openOptions(validateEntrySizes));
  } catch (err) {
    throw reject(`not a valid zip archive: ${(err as Error).message}`);
  }
  // The count comes from the end record: a zip announcing millions of entries is refused
  // before a single one is parsed.
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw reject(`too many entries (${zip.entryCount} > ${limits.maxEntries})`);
  }
  return zip;
}

/** Every central directory record, in order (yauzl refuses malformed records itself). */
async function readRecords(zip: ZipFile, reject: (detail: string) => Error): Promise<Entry[]> {
  const records: Entry[] = [];
  try {
    for await (const entry of zip.eachEntry()) records.push(entry);
  } catch (err) {
    throw reject(`not a valid zip archive: ${(err as Error).message}`);
  }
  return records;
}

/** The entry's name as the archive means it (UTF-8 flag or CP437), backslashes kept. */
function entryName(e: Entry): string {
  return yauzl.getFileNameLowLevel(e.generalPurposeBitFlag, e.fileNameRaw, e.extraFields, true);
}

/** Checks one record; returns the entry to extract, or undefined for the lenient root `./`. */
function checkRecord(e: Entry, index: number, limits: ZipLimits, policy: ZipPolicy): ZipEntry | undefined {
  const reject = policy.fail;
  const name = entryName(e);
  const shown = shownName(name);
  if (e.fileNameRaw.includes(0)) throw reject(`${policy.nameLabel}${shown} (NUL byte)`);
  const segments = entryNameSegments(name, policy);
  const dir = name.endsWith('/');
  if (segments.length === 0) {
    // Only a lenient policy gets here: the archive root (`./`) has nothing to create.
    if (!dir) throw reject(`${policy.nameLabel}${shown} (no name)`);
    return undefined;
  }
  const second = yauzl.validateFileName(name);
  if (second !== null) throw reject(`${policy.nameLabel}${shown} (${second})`);
  const unixMode = e.externalFileAttributes >>> 16;
  const type = unixMode & S_IFMT;
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw reject(`illegal entry type: ${shown} (${type === S_IFLNK ? 'symbolic link' : 'special file'})`);
  }
  if ((type === S_IFDIR) !== dir && type !== 0) throw reject(`illegal entry type: ${shown} (folder flag mismatch)`);
  if (e.isEncrypted()) throw reject(`encrypted entry: ${shown}`);
  if (e.compressionMethod !== 0 && e.compressionMethod !== 8) throw reject(`unsupported compression method ${e.compressionMethod}: ${shown}`);
  const size = e.uncompressedSize;
  const packed = e.compressedSize;
  if (!Number.isSafeInteger(size) || size < 0) throw reject(`invalid size: ${shown}`);
  if (dir && size !== 0) throw reject(`illegal folder entry with data: ${shown}`);
  if (size > limits.ratioMinBytes && size / Math.max(1, packed) > limits.maxRatio) {
    throw reject(`suspicious compression ratio: ${shown} (${size} bytes from ${packed})`);
  }
  const exec = type === S_IFREG && (unixMode & 0o111) !== 0;
  return { path: segments.join('/'), dir, mode: dir || exec ? 0o755 : 0o644, size, crc: e.crc32 >>> 0, index };
}

/** Opens the archive and checks every entry; nothing is written. */
export async function inspectZip(file: string, limits: ZipLimits, policy: ZipPolicy): Promise<ZipPlan> {
  const reject = policy.fail;
  const zip = await openZip(file, limits, reject, false);
  try {
    const records = await readRecords(zip, reject);
    const tree = new EntryTree(reject);
    const entries: ZipEntry[] = [];
    let declaredBytes = 0;
    records.forEach((record, index) => {
      const entry = checkRecord(record, index, limits, policy);
      if (!entry) return;
      declaredBytes += entry.size;
      if (declaredBytes > limits.maxTotalBytes) throw reject(`archive expands beyond ${limits.maxTotalBytes} bytes`);
      tree.add(entry.path.split('/'), entry.dir, shownName(entryName(record)));
      entries.push(entry);
    });
    for (const e of entries) {
      const r = records[e.index]!;
      // A stored entry's data is its content: sizes that disagree are a lie about one of them.
      if (r.compressionMethod === 0 && r.compressedSize !== r.uncompressedSize) throw reject(`size mismatch for stored entry: ${shownName(e.path)}`);
    }
    return { file, entries, declaredBytes, recordCount: records.length };
  } finally {
    zip.close();
  }
}

/** The records of the planned archive, refusing one that no longer matches its plan. */
async function reopen(plan: ZipPlan, limits: ZipLimits, reject: (detail: string) => Error): Promise<{ zip: ZipFile; records: Entry[] }> {
  const zip = await openZip(plan.file, limits, reject, true);
  try {
    const records = await readRecords(zip, reject);
    const same = records.length === plan.recordCount && plan.entries.every((e) => {
      const r = records[e.index];
      return r !== undefined && r.uncompressedSize === e.size && r.crc32 >>> 0 === e.crc && (r.compressionMethod === 0 || r.compressionMethod === 8) && !r.isEncrypted();
    });
    if (!same) throw reject('the archive changed after it was checked');
    return { zip, records };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** yauzl's size errors, said the way the rest of the checks say them. */
function sizeMessage(err: Error, e: ZipEntry): string | undefined {
  if (/^too many bytes in the stream/.test(err.message)) return `entry expands beyond its declared size: ${shownName(e.path)}`;
  if (/^not enough bytes in the stream/.test(err.message)) return `truncated entry: ${shownName(e.path)}`;
  return undefined;
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
  const { zip, records } = await reopen(plan, limits, reject);
  let total = 0;
  let files = 0;
  try {
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
          if (written > e.size) return done(refusal(`entry expands beyond its declared size: ${shownName(e.path)}`));
          if (total > limits.maxTotalBytes) return done(refusal(`archive expands beyond ${limits.maxTotalBytes} bytes`));
          crc = crc32(chunk, crc);
          done(null, chunk);
        },
      });
      try {
        const source = await zip.openReadStreamPromise(records[e.index]!);
        await pipeline(source, meter, createWriteStream(dest, { flags: 'wx', mode: e.mode }));
      } catch (err) {
        if (err instanceof Error && refusals.has(err)) throw err;
        throw reject(sizeMessage(err as Error, e) ?? `cannot extract ${shownName(e.path)}: ${(err as Error).message}`);
      }
      if (written !== e.size) throw reject(`truncated entry: ${shownName(e.path)}`);
      if ((crc >>> 0) !== e.crc) throw reject(`CRC mismatch: ${shownName(e.path)}`);
      files++;
    }
  } finally {
    zip.close();
  }
  return files;
}
