import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, writeSync, realpathSync, existsSync, copyFileSync, chmodSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep, basename } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file atomically: temp file in the same folder, fsync, rename. Optional mode (e.g.
 * 0o600). `durable: false` skips the fsync for files that are a convenience copy of database
 * state (run-state.json …): readers still never see a partial file, and a run's own writes are
 * not slowed by the disk (measured: fsyncs dominated run bookkeeping with 20 concurrent runs).
 */
export function atomicWriteFile(path: string, data: string | Uint8Array, mode?: number, opts: { durable?: boolean } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'w', mode ?? 0o644);
  try {
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
      if (opts.durable !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (mode !== undefined) chmodSync(tmp, mode);
    renameSync(tmp, path);
  } catch (err) {
    // A failed write or rename (e.g. path is a folder) leaves no temporary file behind.
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * `atomicWriteFile` of the same content to several paths of one folder: the content is written
 * once, to a temporary file hard-linked under each further name, then each is renamed into
 * place (one file created instead of one per path). Where hard links are refused, each path is
 * written on its own.
 */
export function atomicWriteFiles(paths: string[], data: string | Uint8Array, opts: { durable?: boolean } = {}): void {
  const [first, ...rest] = paths;
  if (first === undefined) return;
  const links: [string, string][] = [];
  try {
    for (const p of rest) {
      if (dirname(p) !== dirname(first)) throw new Error('not one folder');
      links.push([join(dirname(p), `.${basename(p)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`), p]);
    }
  } catch {
    for (const p of paths) atomicWriteFile(p, data, undefined, opts);
    return;
  }
  mkdirSync(dirname(first), { recursive: true });
  const tmp = join(dirname(first), `.${basename(first)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const made: string[] = [tmp];
  try {
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
      if (opts.durable !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    let linked = true;
    for (const [t] of links) {
      try {
        linkSync(tmp, t);
        made.push(t);
      } catch {
        linked = false;
        break;
      }
    }
    if (!linked) {
      for (const t of made.slice(1)) rmSync(t, { force: true });
      renameSync(tmp, first);
      for (const [, p] of links) atomicWriteFile(p, data, undefined, opts);
      return;
    }
    renameSync(tmp, first);
    for (const [t, p] of links) renameSync(t, p);
  } catch (err) {
    for (const t of made) rmSync(t, { force: true });
    throw err;
  }
}

/** Copies `path` to `backupPath` when it exists; returns the backup path or '' when nothing was copied. */
export function backupFile(path: string, backupPath = `${path}.backup`): string {
  if (!existsSync(path)) return '';
  copyFileSync(path, backupPath);
  return backupPath;
}

/** Names of files and folders users may choose (workspaces, snapshots, uploads): no separators, no `..`. */
export const SAFE_NAME_RE = /^[A-Za-z0-9._-]+$/;

/** True when `name` is a single safe path component (not `.`/`..`, no separators, no control chars). */
export function isSafeName(name: string): boolean {
  return typeof name === 'string' && name.length > 0 && name.length <= 255 && SAFE_NAME_RE.test(name) && name !== '.' && name !== '..';
}

/** Replaces every character outside [A-Za-z0-9._-] by `_` and strips leading dots. */
export function sanitizeName(name: string): string {
  const cleaned = basename(String(name)).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.slice(0, 200) || 'unnamed';
}

/**
 * Joins `rel` under `root` and returns the absolute path, or throws when the result would leave
 * `root` (absolute paths, `..`, or symlinks that resolve outside when `followLinks`).
 */
export function safeJoin(root: string, rel: string, opts: { followLinks?: boolean } = {}): string {
  if (typeof rel !== 'string' || rel.length === 0 || rel.includes('\0')) throw new Error('invalid path');
  if (isAbsolute(rel)) throw new Error(`absolute path not allowed: ${rel}`);
  const base = resolve(root);
  const full = resolve(base, normalize(rel));
  if (!isInside(base, full)) throw new Error(`path escapes its folder: ${rel}`);
  if (opts.followLinks && existsSync(full)) {
    const realBase = realpathSync(base);
    const real = realpathSync(full);
    if (!isInside(realBase, real)) throw new Error(`path escapes its folder through a link: ${rel}`);
  }
  return full;
}

/** True when `child` is `parent` or inside it (both absolute). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..');
}

/** mkdir -p that returns the path. */
export function ensureDir(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}

/**
 * Creates `file` with `content` only if it does not exist yet, atomically and exclusively: the
 * content is written to a private temporary file which is then hard-linked into place, so no
 * reader ever sees a half-written file and two processes never both succeed. Returns false when
 * the file already existed.
 */
export function createFileExclusive(file: string, content: string, opts: { mode?: number; durable?: boolean } = {}): boolean {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', opts.mode ?? 0o600);
  try {
    writeSync(fd, content);
    if (opts.durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}
