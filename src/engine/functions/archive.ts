/**
 * Archive functions (reference §10.2 "archive"). archiver/unzipper are stream-based, so each call
 * runs a small node child synchronously. zip_dir stores regular files only and never follows a
 * link out of the source; unzip_dir skips entries that would land outside dest (zip-slip), link
 * entries, and stops at 200 000 entries or 8 GiB written. Tarballs go through the system `tar`.
 */
import { lstatSync, mkdirSync, openSync, readSync, closeSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, relative, resolve, sep } from 'node:path';
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, isDirectory, isRegularFile, ok, pathArg, runProgram } from './helpers.js';
import { isInside } from '../../util/fs-safe.js';

const requireHere = createRequire(import.meta.url);

const ZIP_CHILD = String.raw`
const fs = require('node:fs');
let input = '';
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const q = JSON.parse(input);
  const archiver = require(q.archiver);
  const tmp = q.dest + '.osm-part';
  const out = fs.createWriteStream(tmp);
  const zip = archiver('zip', { zlib: { level: 6 } });
  out.on('close', () => { fs.renameSync(tmp, q.dest); process.stdout.write('ok'); });
  zip.on('error', (e) => { try { fs.unlinkSync(tmp); } catch {} process.stderr.write(String(e)); process.exitCode = 1; });
  zip.pipe(out);
  for (const e of q.entries) zip.file(e.abs, { name: e.name });
  zip.finalize();
});
`;

const UNZIP_CHILD = String.raw`
const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { Transform } = require('node:stream');
const MAX_ENTRIES = 200000, MAX_BYTES = 8 * 1024 * 1024 * 1024;
let input = '';
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const q = JSON.parse(input);
  try {
    const unzipper = require(q.unzipper);
    const dir = await unzipper.Open.file(q.src);
    const root = path.resolve(q.dest);
    fs.mkdirSync(root, { recursive: true });
    const realRoot = fs.realpathSync(root);
    const inside = (p, r) => p === r || p.startsWith(r + path.sep);
    let total = 0, count = 0, skipped = 0;
    for (const e of dir.files) {
      if (++count > MAX_ENTRIES) throw new Error('too many entries');
      const name = e.path.replace(/\\/g, '/');
      const target = path.resolve(root, name);
      const mode = (e.externalFileAttributes >>> 16) & 0o170000;
      if (path.isAbsolute(name) || name.split('/').includes('..') || !inside(target, root) || mode === 0o120000) { skipped++; continue; }
      if (e.type === 'Directory' || name.endsWith('/')) { fs.mkdirSync(target, { recursive: true }); continue; }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // A folder created by an earlier entry or already present could be a link leading out.
      if (!inside(fs.realpathSync(path.dirname(target)), realRoot)) { skipped++; continue; }
      try { if (fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target); } catch {}
      const counter = new Transform({ transform(chunk, _e, cb) { total += chunk.length; cb(total > MAX_BYTES ? new Error('archive expands beyond 8 GiB') : null, chunk); } });
      await pipeline(e.stream(), counter, fs.createWriteStream(target));
    }
    process.stdout.write(JSON.stringify({ ok: true, skipped }));
  } catch (err) { process.stderr.write(String(err && err.message || err)); process.exitCode = 1; }
});
`;

/** Runs one archive child; true when it exited 0. */
function runChild(ctx: FnContext, script: string, request: Record<string, unknown>): boolean {
  return ok(runProgram(ctx, process.execPath, ['-e', script], { input: JSON.stringify(request), stdio: ['pipe', 'pipe', 'pipe'] }));
}

/** Regular files under `root` (links only when they resolve to a file inside root). */
function collectFiles(root: string): { abs: string; name: string }[] {
  const realRoot = realpathSync(root);
  const out: { abs: string; name: string }[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile()) out.push({ abs: full, name: relative(root, full).split(sep).join('/') });
      else if (st.isSymbolicLink()) {
        try {
          const real = realpathSync(full);
          if (isInside(realRoot, real) && statSync(real).isFile()) out.push({ abs: real, name: relative(root, full).split(sep).join('/') });
        } catch {
          // dangling link: nothing to store
        }
      }
    }
  };
  walk(root);
  return out;
}

/** Zips a directory (entries relative to it) or a single file into dest. */
export function zipPath(ctx: FnContext, source: string, dest: string): boolean {
  try {
    const entries = isDirectory(source) ? collectFiles(source) : isRegularFile(source) ? [{ abs: resolve(source), name: basename(source) }] : null;
    if (!entries) return false;
    mkdirSync(resolve(dest, '..'), { recursive: true });
    return runChild(ctx, ZIP_CHILD, { entries, dest: resolve(dest), archiver: requireHere.resolve('archiver') });
  } catch {
    return false;
  }
}

/** Extracts a zip into dest, skipping entries that would escape it. */
export function unzipPath(ctx: FnContext, source: string, dest: string): boolean {
  if (!isRegularFile(source)) return false;
  return runChild(ctx, UNZIP_CHILD, { src: resolve(source), dest: resolve(dest), unzipper: requireHere.resolve('unzipper') });
}

type Kind = 'zip' | 'gzip' | 'bzip2' | 'xz';

/** Archive kind by extension, else by magic bytes. */
function archiveKind(path: string): Kind | null {
  const lower = path.toLowerCase();
  if (lower.endsWith('.zip')) return 'zip';
  if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz')) return 'gzip';
  if (lower.endsWith('.tar.bz2')) return 'bzip2';
  if (lower.endsWith('.tar.xz')) return 'xz';
  const buf = Buffer.alloc(6);
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buf, 0, 6, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  if (buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 0x03 && buf[3] === 0x04) return 'zip';
  if (buf[0] === 0x1f && buf[1] === 0x8b) return 'gzip';
  if (buf.subarray(0, 3).toString('latin1') === 'BZh') return 'bzip2';
  if (buf.equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return 'xz';
  return null;
}

/** The archive functions, by snake_case name (aliases come from the catalogue). */
export const archiveFunctions: Record<string, FnImpl> = {
  zip_dir: (ctx, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    return src !== null && dest !== null && zipPath(ctx, src, dest);
  },
  unzip_dir: (ctx, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    return src !== null && dest !== null && unzipPath(ctx, src, dest);
  },
  extract_to: (ctx, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || !isRegularFile(src)) return false;
    const kind = archiveKind(src);
    const destAbs = resolve(dest);
    // dest is wiped first: refuse the filesystem root and any dest holding the archive itself.
    if (!kind || destAbs === '/' || isInside(destAbs, resolve(src))) return false;
    try {
      rmSync(destAbs, { recursive: true, force: true });
      mkdirSync(destAbs, { recursive: true });
    } catch {
      return false;
    }
    if (kind === 'zip') return unzipPath(ctx, src, destAbs);
    const flag = kind === 'gzip' ? '-xzf' : kind === 'bzip2' ? '-xjf' : '-xJf';
    // GNU tar already drops absolute names and `..` members; --no-same-owner keeps files ours.
    return ok(runProgram(ctx, 'tar', [flag, pathArg(src), '--no-same-owner', '-C', destAbs], { stdio: ['ignore', 'pipe', 'pipe'] }));
  },
};
