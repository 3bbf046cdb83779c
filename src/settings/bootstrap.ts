/**
 * First use of a base folder: the folder itself (mode 0700), the settings file (random secrets,
 * mode 0600), the standard folders and the bundled sample workflows. Everything here is
 * idempotent and never overwrites.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResolvedPaths } from './paths.js';
import { generateSettingsText } from './template.js';
import { createFileExclusive } from '../util/fs-safe.js';

/**
 * Writes a fresh settings file for `base` at `file` unless one exists. Returns true when this call
 * created it. The temp-file + link dance makes creation atomic and exclusive: two processes
 * starting at once never see a half-written file nor overwrite each other's secrets.
 */
export function ensureSettingsFile(file: string, base: string): boolean {
  if (existsSync(file)) return false;
  ensureBaseFolder(base);
  mkdirSync(dirname(file), { recursive: true });
  return createFileExclusive(file, generateSettingsText(base), { mode: 0o600, durable: true });
}

/**
 * Creates the base folder with mode 0700 when it is missing: it holds the database, the
 * workspaces (scan results) and the secrets. The folders above it are created as usual, and an
 * existing base folder is left as it is (it may be shared on purpose; loading warns about it).
 */
export function ensureBaseFolder(base: string): void {
  if (existsSync(base)) return;
  mkdirSync(dirname(base), { recursive: true });
  try {
    mkdirSync(base, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return; // another process was first
    throw err;
  }
  // mkdir applies the umask; the mode must not depend on the shell osm was started from.
  chmodSync(base, 0o700);
}

/** The package's bundled sample workflows (same relative location from src/settings and dist/settings). */
export function bundledWorkflowsDir(): string {
  return fileURLToPath(new URL('../../workflows/', import.meta.url));
}

/**
 * Creates the standard folders and, when `copySamples`, copies the bundled workflows into an
 * empty or missing workflows folder. Returns warnings instead of failing: a folder that cannot be
 * created (read-only mount, odd path in the file) should not stop `osm config` from working.
 */
export function ensureStandardFolders(paths: ResolvedPaths, opts: { copySamples?: boolean } = {}): string[] {
  const warnings: string[] = [];
  const workflowsWasEmpty = isMissingOrEmpty(paths.workflows);
  try {
    ensureBaseFolder(paths.base);
  } catch (err) {
    warnings.push(`cannot create folder ${paths.base}: ${(err as Error).message}`);
  }
  for (const dir of [paths.workspaces, paths.workflows, paths.data, paths.uploads, paths.binaries, paths.configs, paths.scripts, paths.snapshot]) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      warnings.push(`cannot create folder ${dir}: ${(err as Error).message}`);
    }
  }
  if (opts.copySamples && workflowsWasEmpty) {
    try {
      copySampleWorkflows(paths.workflows);
    } catch (err) {
      warnings.push(`cannot copy sample workflows into ${paths.workflows}: ${(err as Error).message}`);
    }
  }
  return warnings;
}

/** Copies the bundled sample workflows into `dest` without overwriting; returns the number of top-level entries copied. */
export function copySampleWorkflows(dest: string, source = bundledWorkflowsDir()): number {
  if (!existsSync(source)) return 0;
  mkdirSync(dest, { recursive: true });
  let count = 0;
  for (const entry of readdirSync(source)) {
    cpSync(join(source, entry), join(dest, entry), { recursive: true, force: false, errorOnExist: false });
    count++;
  }
  return count;
}

function isMissingOrEmpty(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return true;
  }
}
