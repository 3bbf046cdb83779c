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

import { entryNameSegments } from '../util/archive-paths.js';

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 10_000, maxTotalBytes: 1024 ** 3, maxRatio: 200 };

/** An archive that is refused or cannot be read; the message names the entry (escaped). */
export class ArchiveError extends Error {}

/** An entry name as shown in messages: JSON-quoted (control characters escaped), shortened. */
export { shownName } from '../util/archive-paths.js';

/**
 * The safe relative segments of an entry name, or [] for the archive root itself (`./`).
 * Refuses NUL/control characters, backslashes, absolute and drive paths, `..` segments and
 * over-long names; `.` and empty segments (`./a//b`) are dropped.
 */
export function entrySegments(name: string): string[] {
  return entryNameSegments(name, { fail: (detail) => new ArchiveError(detail), nameLabel: 'illegal entry name ', lenientSegments: true });
}
