/**
 * Putting a binary into the binaries folder: the executable found in an unpacked release, an
 * atomic copy (temp file, chmod 0755, rename — a running old copy keeps its inode), or a symlink
 * to a copy that already exists elsewhere on PATH.
 */
import { chmodSync, copyFileSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, relative } from 'node:path';
import { isInside, isSafeName } from '../util/fs-safe.js';

const MAX_WALK = 20_000;

interface Candidate {
  path: string;
  name: string;
  depth: number;
  exec: boolean;
}

function walkFiles(root: string): Candidate[] {
  const out: Candidate[] = [];
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  let seen = 0;
  while (stack.length > 0) {
    const { dir, depth } = stack.pop()!;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (++seen > MAX_WALK) return out;
      const p = join(dir, e.name);
      if (e.isDirectory() && depth < 12) stack.push({ dir: p, depth: depth + 1 });
      else if (e.isFile()) out.push({ path: p, name: e.name, depth, exec: (lstatSync(p).mode & 0o111) !== 0 });
    }
  }
  return out;
}

/**
 * The file in an unpacked release that is the binary `name`: exactly that name (shallowest
 * first), else `<name>-…`/`<name>_…`/`<name>.…` (executables first), else the only executable,
 * else the only file.
 */
export function pickExecutable(root: string, name: string): string | undefined {
  const files = walkFiles(root).sort((a, b) => a.depth - b.depth || Number(b.exec) - Number(a.exec) || a.path.localeCompare(b.path));
  const exact = files.find((f) => f.name === name) ?? files.find((f) => f.name === `${name}.exe`);
  if (exact) return exact.path;
  const prefixed = files.find((f) => f.name.startsWith(name) && /[-_.]/.test(f.name.charAt(name.length)) && !/\.(md|txt|sha256|sig|asc|1)$/i.test(f.name));
  if (prefixed) return prefixed.path;
  const execs = files.filter((f) => f.exec);
  if (execs.length === 1) return execs[0]!.path;
  if (files.length === 1) return files[0]!.path;
  return undefined;
}

/** Copies `src` to `<binaries>/<name>` with mode 0755, atomically; returns the final path. */
export function placeBinary(src: string, binaries: string, name: string): string {
  if (!isSafeName(name)) throw new Error(`invalid binary name ${JSON.stringify(name)}`);
  mkdirSync(binaries, { recursive: true });
  const dest = join(binaries, name);
  const tmp = join(binaries, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    copyFileSync(src, tmp);
    chmodSync(tmp, 0o755);
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return dest;
}

/**
 * Links `<binaries>/<name>` to `target` (a copy found elsewhere on PATH). An existing regular file
 * is left alone; an existing link is replaced atomically. Returns the link path, or '' when
 * nothing was linked.
 */
export function linkBinary(target: string, binaries: string, name: string): string {
  if (!isSafeName(name)) return '';
  const dest = join(binaries, name);
  if (isInside(binaries, target) && relative(binaries, target) === name) return '';
  try {
    if (!lstatSync(dest).isSymbolicLink()) return '';
  } catch {
    // absent: create it
  }
  mkdirSync(binaries, { recursive: true });
  const tmp = join(binaries, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.lnk`);
  symlinkSync(target, tmp);
  try {
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return dest;
}
