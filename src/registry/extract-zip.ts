/**
 * Zip archives from a registry or a workflow source: the shared safe zip reader
 * (util/safe-zip.ts) with ArchiveError and lenient names (`./a` is `a`, the `./` root is skipped).
 * Every entry is checked before anything is written; bytes actually inflated are metered and
 * each CRC is checked.
 */
import { join } from 'node:path';
import { extractEntries, inspectZip, type ZipLimits, type ZipPolicy } from '../util/safe-zip.js';
import { ArchiveError, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from './archive-names.js';

export const ARCHIVE_POLICY: ZipPolicy = { fail: (detail) => new ArchiveError(detail), nameLabel: 'illegal entry name ', lenientSegments: true };

/** Extracts `file` into the existing empty folder `dest`; returns the number of files written. */
export async function extractZip(file: string, dest: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<number> {
  const zl: ZipLimits = { maxEntries: limits.maxEntries, maxTotalBytes: limits.maxTotalBytes, maxRatio: limits.maxRatio, ratioMinBytes: 10 * 1024 ** 2 };
  const plan = await inspectZip(file, zl, ARCHIVE_POLICY);
  return extractEntries(plan, (e) => join(dest, ...e.path.split('/')), zl, ARCHIVE_POLICY);
}
