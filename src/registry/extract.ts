/**
 * Unpacks a downloaded release or workflow archive into an empty folder: `.zip`, `.tar.gz`/`.tgz`,
 * `.tar`, `.gz` (one compressed file) or a raw file, chosen by name and confirmed by the file's
 * magic bytes (a URL without an extension still works). Every form goes through the checked
 * extractors; nothing is ever written outside `dest`.
 */
import { closeSync, copyFileSync, openSync, readSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './archive-names.js';
import { extractTarFile, gunzipCapped } from './extract-tar.js';
import { extractZip } from './extract-zip.js';

export type ArchiveKind = 'zip' | 'gzip' | 'tar' | 'raw';

/** The kind a file name announces (`.zip`, `.tar.gz`/`.tgz`/`.gz`, `.tar`), else undefined. */
export function kindFromName(name: string): ArchiveKind | undefined {
  const n = name.toLowerCase();
  if (n.endsWith('.zip')) return 'zip';
  if (n.endsWith('.tar.gz') || n.endsWith('.tgz') || n.endsWith('.gz')) return 'gzip';
  if (n.endsWith('.tar')) return 'tar';
  return undefined;
}

function readHead(file: string, length: number, position = 0): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(length);
    const n = readSync(fd, b, 0, length, position);
    return b.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** The kind the file's first bytes show. */
export function kindFromMagic(file: string): ArchiveKind {
  const head = readHead(file, 4);
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (isTar(file)) return 'tar';
  return 'raw';
}

function isTar(file: string): boolean {
  return readHead(file, 5, 257).toString('latin1') === 'ustar';
}

export interface UnpackOptions {
  /** Name that decides the kind (usually the URL's last path segment). */
  nameHint: string;
  /** File name for a raw file or a lone `.gz` payload inside `dest`. */
  rawName: string;
  /** Scratch folder (outside `dest`) for the inflated tar. */
  workDir: string;
  limits?: ArchiveLimits;
}

/** Unpacks `file` into the empty folder `dest`; returns what it was. */
export async function unpack(file: string, dest: string, opts: UnpackOptions): Promise<ArchiveKind> {
  const limits = opts.limits ?? DEFAULT_ARCHIVE_LIMITS;
  const magic = kindFromMagic(file);
  const named = kindFromName(opts.nameHint);
  if (named && named !== magic) {
    throw new ArchiveError(`the file is named like a ${named === 'gzip' ? 'gzip/tar.gz' : named} archive but its content is ${magic === 'raw' ? 'not an archive' : `a ${magic} archive`}`);
  }
  if (magic === 'zip') {
    await extractZip(file, dest, limits);
    return 'zip';
  }
  if (magic === 'tar') {
    await extractTarFile(file, dest, limits);
    return 'tar';
  }
  if (magic === 'gzip') {
    const payload = join(opts.workDir, `payload-${process.pid}-${Date.now()}`);
    await gunzipCapped(file, payload, limits.maxTotalBytes);
    if (isTar(payload)) {
      await extractTarFile(payload, dest, limits);
    } else {
      renameSync(payload, join(dest, opts.rawName));
    }
    return 'gzip';
  }
  copyFileSync(file, join(dest, opts.rawName));
  return 'raw';
}
