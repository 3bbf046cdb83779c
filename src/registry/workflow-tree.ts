/**
 * Folder helpers for installing a workflow tree: a bounded copy of a local folder (regular files
 * and folders only; a symlink refuses the copy so nothing outside the source can ride along),
 * the content root (a lone top folder, as GitHub archives have), a scan that counts the YAML files
 * and refuses links, and the swap of the workflows folder with a timestamped backup.
 */
import { constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface TreeLimits {
  maxEntries: number;
  maxBytes: number;
}

export const DEFAULT_TREE_LIMITS: TreeLimits = { maxEntries: 50_000, maxBytes: 1024 ** 3 };

export interface TreeSummary {
  files: number;
  bytes: number;
  yamlFiles: number;
}

const isYaml = (name: string) => /\.ya?ml$/i.test(name);

/** Walks `root` (skipping `.git`), calling `visit` for each entry; refuses links and special files. */
function walk(root: string, limits: TreeLimits, visit: (abs: string, rel: string, kind: 'dir' | 'file', size: number) => void): TreeSummary {
  const summary: TreeSummary = { files: 0, bytes: 0, yamlFiles: 0 };
  let entries = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const name of readdirSync(dir).sort()) {
      if (name === '.git') continue;
      const abs = join(dir, name);
      const rel = relative(root, abs);
      if (++entries > limits.maxEntries) throw new Error(`source has more than ${limits.maxEntries} files and folders`);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) throw new Error(`source contains a symbolic link (${JSON.stringify(rel)}); refusing to install it`);
      if (st.isDirectory()) {
        visit(abs, rel, 'dir', 0);
        stack.push(abs);
      } else if (st.isFile()) {
        summary.files++;
        summary.bytes += st.size;
        if (summary.bytes > limits.maxBytes) throw new Error(`source is larger than ${limits.maxBytes} bytes`);
        if (isYaml(name)) summary.yamlFiles++;
        visit(abs, rel, 'file', st.size);
      } else {
        throw new Error(`source contains a special file (${JSON.stringify(rel)})`);
      }
    }
  }
  return summary;
}

/** Counts files and YAML files under `root`; throws on links, special files or size limits. */
export function scanTree(root: string, limits: TreeLimits = DEFAULT_TREE_LIMITS): TreeSummary {
  return walk(root, limits, () => undefined);
}

/** Copies the folder `src` into the new folder `dest` (regular files and folders only). */
export function copyTree(src: string, dest: string, limits: TreeLimits = DEFAULT_TREE_LIMITS): TreeSummary {
  // Check everything first, so a refused source leaves nothing half-copied.
  const summary = scanTree(src, limits);
  mkdirSync(dest, { recursive: true, mode: 0o755 });
  walk(src, limits, (abs, rel, kind) => {
    const target = join(dest, rel);
    if (kind === 'dir') mkdirSync(target, { recursive: true, mode: 0o755 });
    else copyFileSync(abs, target, constants.COPYFILE_EXCL);
  });
  return summary;
}

/** The folder holding the content: `dir` itself, or its only visible entry when that is a folder. */
export function contentRoot(dir: string): string {
  const visible = readdirSync(dir, { withFileTypes: true }).filter((e) => !e.name.startsWith('.'));
  if (visible.length === 1 && visible[0]!.isDirectory()) return join(dir, visible[0]!.name);
  return dir;
}

/** `<folder>.backup-<UTC timestamp>` that does not exist yet. */
export function backupPathFor(folder: string, now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '');
  let candidate = `${folder}.backup-${stamp}`;
  for (let i = 2; existsSync(candidate); i++) candidate = `${folder}.backup-${stamp}-${i}`;
  return candidate;
}

/**
 * Replaces `target` by `replacement` (same file system): the old folder is renamed to a backup,
 * then the new one renamed into place; if the second rename fails the backup is put back.
 * Returns the backup path ('' when there was no old folder).
 */
export function swapFolder(replacement: string, target: string, now?: Date): string {
  let backup = '';
  let exists = true;
  try {
    lstatSync(target);
  } catch {
    exists = false;
  }
  if (exists) {
    backup = backupPathFor(target, now);
    renameSync(target, backup);
  }
  try {
    renameSync(replacement, target);
  } catch (err) {
    if (backup) renameSync(backup, target);
    throw err;
  }
  return backup;
}
