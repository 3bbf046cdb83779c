/**
 * Entry-name rules and limits shared by the zip and tar extractors. Archives from a registry or
 * a workflow source are untrusted: every name is checked before anything is written, so an
 * archive with one bad entry writes nothing at all.
 */

export interface ArchiveLimits {
  /** More entries than this are refused. */
  maxEntries: number;
  /** Cap on the declared and on the actually written (uncompressed) bytes. */
  maxTotalBytes: number;
  /** A zip entry above 10 MiB may not inflate more than this many times its compressed size. */
  maxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 10_000, maxTotalBytes: 1024 ** 3, maxRatio: 200 };

/** An archive that is refused or cannot be read; the message names the entry (escaped). */
export class ArchiveError extends Error {}

/** An entry name as shown in messages: JSON-quoted (control characters escaped), shortened. */
export function shownName(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
}

/**
 * The safe relative segments of an entry name, or [] for the archive root itself (`./`).
 * Refuses NUL/control characters, backslashes, absolute and drive paths, `..` segments and
 * over-long names; `.` and empty segments (`./a//b`) are dropped.
 */
export function entrySegments(name: string): string[] {
  if (name.includes('\0') || /[\u0000-\u001f\u007f]/.test(name)) throw new ArchiveError(`illegal entry name ${shownName(name)} (control character)`);
  if (name.includes('\\')) throw new ArchiveError(`illegal entry name ${shownName(name)} (backslash)`);
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new ArchiveError(`illegal entry name ${shownName(name)} (absolute path)`);
  if (name.length > 4096) throw new ArchiveError(`illegal entry name ${shownName(name)} (too long)`);
  const segments = name.split('/').filter((s) => s !== '' && s !== '.');
  for (const s of segments) {
    if (s === '..') throw new ArchiveError(`illegal entry name ${shownName(name)} (parent directory segment)`);
    if (Buffer.byteLength(s) > 255) throw new ArchiveError(`illegal entry name ${shownName(name)} (segment too long)`);
  }
  return segments;
}
