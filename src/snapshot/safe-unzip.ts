/**
 * Snapshot archives are untrusted: the shared safe zip reader (util/safe-zip.ts) with the
 * snapshot's error (`Failed to import snapshot: …`, HTTP 400) and strict entry names.
 */
import { errors } from '../errors.js';
import { extractEntries as extract, inspectZip as inspect, type ZipEntry, type ZipLimits, type ZipPlan, type ZipPolicy } from '../util/safe-zip.js';

export { DEFAULT_ZIP_LIMITS, type ZipEntry, type ZipLimits, type ZipPlan } from '../util/safe-zip.js';
import { DEFAULT_ZIP_LIMITS } from '../util/safe-zip.js';

const SNAPSHOT_POLICY: ZipPolicy = { fail: (detail) => errors.snapshotRejected(detail), nameLabel: 'illegal file path: ' };

/** Opens a snapshot zip and checks every entry; nothing is written. */
export function inspectZip(file: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipPlan> {
  return inspect(file, limits, SNAPSHOT_POLICY);
}

/** Extracts the entries `target` maps to an absolute destination (null skips one). */
export function extractEntries(plan: ZipPlan, target: (e: ZipEntry) => string | null, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<number> {
  return extract(plan, target, limits, SNAPSHOT_POLICY);
}
