/**
 * Key and path safety. Object keys listed from a bucket are untrusted: anyone who can write to the
 * bucket chooses them. A key only becomes a local path through `localTarget`, which holds it to
 * the archive entry rules (no `..`, no absolute or drive path, no backslash, no NUL or control
 * character) and places it under the destination folder with every folder on the way resolved,
 * so a symlink planted in the destination cannot carry the write outside either.
 */
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { errors } from '../errors.js';
import { entryNameSegments } from '../util/archive-paths.js';
import { isInside } from '../util/fs-safe.js';

const MAX_KEY_BYTES = 1024;

/** A key a caller names (function argument, CLI argument): leading slashes dropped; NUL/control characters and over-long keys refused. */
export function checkKey(key: string): string {
  const k = String(key ?? '').replace(/^\/+/, '');
  if (k === '') throw errors.storageKey('empty key');
  if (/[\u0000-\u001f\u007f]/.test(k)) throw errors.storageKey(`${JSON.stringify(k.slice(0, 200))} (NUL or control character)`);
  if (Buffer.byteLength(k) > MAX_KEY_BYTES) throw errors.storageKey('longer than 1024 bytes');
  return k;
}

/** A listing prefix: '' (everything) or a checked key. */
export function checkPrefix(prefix: string | undefined): string {
  const p = String(prefix ?? '').replace(/^\/+/, '');
  return p === '' ? '' : checkKey(p);
}

/** A prefix that names a folder: '' or ending in '/'. */
export function folderPrefix(prefix: string | undefined): string {
  const p = checkPrefix(prefix);
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/** The safe relative segments of `rel` (a key below a listed prefix); throws storageKey when it could leave its folder. */
export function keySegments(rel: string): string[] {
  return entryNameSegments(rel, { fail: (detail) => errors.storageKey(detail), nameLabel: '' });
}

/** The key prefix of a workspace's files: `<prefix>workspaces/<name>/`. */
export function workspaceKeyPrefix(prefix: string, workspace: string): string {
  return `${prefix}workspaces/${workspace}/`;
}

/**
 * The absolute local path for the key-relative name `rel` under `root`, with its parent folders
 * created. Every folder on the way is checked once it exists: a link (or anything else) that
 * resolves outside `root` refuses the key. The caller writes a temporary file next to the
 * returned path and renames it into place, which replaces a link at the final name instead of
 * following it.
 */
export async function localTarget(root: string, rel: string): Promise<string> {
  const segments = keySegments(rel);
  if (segments.length === 0) throw errors.storageKey(`${JSON.stringify(rel)} (names the folder itself)`);
  const base = resolve(root);
  await mkdir(base, { recursive: true });
  const realBase = await realpath(base);
  let dir = realBase;
  for (const seg of segments.slice(0, -1)) {
    const next = join(dir, seg);
    try {
      await mkdir(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const real = await realpath(next);
    if (!isInside(realBase, real)) throw errors.storageKey(`${JSON.stringify(rel)} (a folder on the way leads outside the destination)`);
    if (!(await lstat(real)).isDirectory()) throw errors.storageKey(`${JSON.stringify(rel)} (a file is in the way)`);
    dir = real;
  }
  const target = join(dir, segments[segments.length - 1]!);
  if (!isInside(realBase, target)) throw errors.storageKey(`${JSON.stringify(rel)} (leaves the destination)`);
  return target;
}
