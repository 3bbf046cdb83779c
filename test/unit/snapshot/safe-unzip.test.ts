import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asyncSqlite, openStore, type Store } from '../../../src/store/index.js';
import { inspectZip, DEFAULT_ZIP_LIMITS } from '../../../src/snapshot/safe-unzip.js';
import { importSnapshotZip } from '../../../src/snapshot/import.js';
import { writeZip, zeroBomb, type TestEntry } from './zip-builder.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
function store(): Store {
  const s = openStore(':memory:');
  cleanups.push(() => s.close());
  return s;
}

/** Every path under `dir` with its type and content hash (lstat: links are not followed). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else if (st.isSymbolicLink()) out[r] = `link:${fs.readlinkSync(path.join(dir, r))}`;
      else out[r] = crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, r))).digest('hex');
    }
  };
  walk('');
  return out;
}

/** A workspaces folder with one existing workspace, and the outside folder an escape would hit. */
function setup() {
  const root = tmp();
  const workspaces = path.join(root, 'workspaces');
  fs.mkdirSync(path.join(workspaces, 'existing.com'), { recursive: true });
  fs.writeFileSync(path.join(workspaces, 'existing.com', 'keep.txt'), 'keep me');
  return { root, workspaces, before: tree(root) };
}

const ok = (name: string, data = name.endsWith('/') ? '' : 'x'): TestEntry => ({ name, data: Buffer.from(data) });

const hostile: [string, () => TestEntry[], RegExp][] = [
  ['a ../ entry', () => [ok('evil.com/'), ok('evil.com/a.txt'), ok('evil.com/../../evil.txt')], /illegal file path: .*parent directory segment/],
  ['a bare ../evil entry', () => [ok('../evil')], /parent directory segment/],
  ['an absolute path', () => [ok('evil.com/a.txt'), ok('/tmp/evil.txt')], /absolute path/],
  ['a drive letter path', () => [ok('C:/evil.txt')], /absolute path/],
  ['a backslash trick', () => [ok('evil.com/..\\..\\evil.txt')], /backslash/],
  ['a NUL byte', () => [{ name: Buffer.from('evil.com/a.txt\u0000.png'), data: Buffer.from('x') }], /NUL byte/],
  ['a control character', () => [ok('evil.com/a\nb.txt')], /control character/],
  ['a "." segment', () => [ok('evil.com/./a.txt')], /"\." segment/],
  ['a symlink entry', () => [ok('evil.com/'), { name: 'evil.com/link', data: Buffer.from('/etc/passwd'), mode: 0o120777 }], /illegal entry type: .*symbolic link/],
  ['a character device', () => [{ name: 'evil.com/dev', data: Buffer.alloc(0), mode: 0o020644 }], /special file/],
  ['a FIFO', () => [{ name: 'evil.com/fifo', data: Buffer.alloc(0), mode: 0o010644 }], /special file/],
  ['a duplicate entry', () => [ok('evil.com/a.txt'), ok('evil.com/a.txt', 'y')], /duplicate entry/],
  ['a file used as a folder', () => [ok('evil.com/a'), ok('evil.com/a/b.txt')], /entry below a file/],
  ['an encrypted entry', () => [{ ...ok('evil.com/a.txt'), flags: 1 }], /encrypted entry/],
  ['an unknown compression method', () => [{ ...ok('evil.com/a.txt'), method: 12 }], /unsupported compression method 12/],
  ['a stored entry whose two sizes disagree', () => [{ ...ok('evil.com/a.txt'), declaredSize: 5000 }], /size mismatch for stored entry: "evil.com\/a.txt"/],
  ['10 001 entries', () => Array.from({ length: 10_001 }, (_, i) => ok(`evil.com/f${i}.txt`)), /too many entries \(10001 > 10000\)/],
  ['a 1 GiB zero bomb (honest sizes)', () => [{ name: 'evil.com/zeros.bin', raw: zeroBomb(1024) }], /suspicious compression ratio/],
];

describe('inspectZip and import refuse hostile archives before writing anything', () => {
  for (const [what, entries, message] of hostile) {
    it(`rejects ${what}`, async () => {
      const { root, workspaces, before } = setup();
      const zip = writeZip(path.join(tmp(), 'evil.com.zip'), entries());
      await expect(inspectZip(zip)).rejects.toThrow(message);
      const s = store();
      const err = await importSnapshotZip(asyncSqlite(s), { file: zip, workspacesDir: workspaces, force: true, skipDb: false }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400, message: expect.stringMatching(/^Failed to import snapshot: /) });
      expect((err as Error).message).toMatch(message);
      expect(tree(root)).toEqual(before);
      expect(s.workspaces.names()).toEqual([]);
    });
  }

  it('rejects a zip whose declared total exceeds the cap', async () => {
    const zip = writeZip(path.join(tmp(), 'big.zip'), [{ name: 'w/a.bin', data: Buffer.alloc(10), declaredSize: 3000 }, { name: 'w/b.bin', data: Buffer.alloc(10), declaredSize: 3000 }]);
    await expect(inspectZip(zip, { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 5000 })).rejects.toThrow('archive expands beyond 5000 bytes');
  });

  it('rejects files that are not zips', async () => {
    const f = path.join(tmp(), 'x.zip');
    fs.writeFileSync(f, 'hello, not a zip');
    await expect(inspectZip(f)).rejects.toThrow('Failed to import snapshot: not a valid zip archive');
  });
});

describe('extraction stops on what only inflating reveals, leaving nothing behind', () => {
  it('stops a bomb that lies about its size (1 GiB declared as 1000 bytes)', async () => {
    const { root, workspaces, before } = setup();
    const bomb = zeroBomb(1024);
    const zip = writeZip(path.join(tmp(), 'liar.zip'), [ok('liar.com/'), ok('liar.com/first.txt'), { name: 'liar.com/zeros.bin', raw: { ...bomb, size: 1000 } }]);
    await expect(inspectZip(zip)).resolves.toBeDefined(); // the directory looks harmless
    const err = await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: false }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/entry expands beyond its declared size: "liar.com\/zeros.bin"/);
    expect(tree(root)).toEqual(before);
  });

  it('stops at the total cap counted from inflated bytes', async () => {
    const { root, workspaces, before } = setup();
    const zip = writeZip(path.join(tmp(), 'w.zip'), [{ name: 'w/a.bin', data: Buffer.alloc(4000), deflate: true }, { name: 'w/b.bin', data: Buffer.alloc(4000), deflate: true }]);
    const err = await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: true, limits: { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 8000 } })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeUndefined(); // exactly at the cap is fine
    fs.rmSync(path.join(workspaces, 'w'), { recursive: true });
    const lying = writeZip(path.join(tmp(), 'w2.zip'), [
      { name: 'w/a.bin', data: Buffer.alloc(4000), deflate: true },
      { name: 'w/b.bin', raw: { deflated: zeroBomb(1).deflated, size: 4000, crc: 0 } },
    ]);
    const err2 = await importSnapshotZip(asyncSqlite(store()), { file: lying, workspacesDir: workspaces, force: false, skipDb: true, limits: { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 8000 } }).catch((e: unknown) => e);
    expect((err2 as Error).message).toMatch(/expands beyond/);
    expect(tree(root)).toEqual(before);
  });

  it('rejects a CRC mismatch', async () => {
    const { root, workspaces, before } = setup();
    const zip = writeZip(path.join(tmp(), 'crc.zip'), [{ name: 'crc.com/a.txt', data: Buffer.from('hello'), declaredCrc: 1234 }]);
    const err = await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: false }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('Failed to import snapshot: CRC mismatch: "crc.com/a.txt"');
    expect(tree(root)).toEqual(before);
  });
});

describe('well-formed archives', () => {
  it('extracts a top-folder zip as that workspace, keeping the executable bit', async () => {
    const { workspaces } = setup();
    const zip = writeZip(path.join(tmp(), 'anything.zip'), [
      ok('good.com/'),
      ok('good.com/sub/', ''),
      ok('good.com/sub/a.txt', 'A'),
      { name: 'good.com/run.sh', data: Buffer.from('#!/bin/sh\n'), mode: 0o104755, deflate: true },
    ]);
    const s = store();
    const r = await importSnapshotZip(asyncSqlite(s), { file: zip, workspacesDir: workspaces, force: false, skipDb: false });
    expect(r).toMatchObject({ workspace: 'good.com', local_path: path.join(workspaces, 'good.com'), files_count: 2 });
    expect(fs.readFileSync(path.join(workspaces, 'good.com/sub/a.txt'), 'utf8')).toBe('A');
    expect(fs.statSync(path.join(workspaces, 'good.com/run.sh')).mode & 0o7777).toBe(0o755); // setuid dropped
    expect(s.workspaces.get('good.com')).toMatchObject({ data_source: 'imported', local_path: path.join(workspaces, 'good.com') });
    expect(fs.readdirSync(workspaces).sort()).toEqual(['existing.com', 'good.com']); // no temp folders left
  });

  it('extracts a legacy zip without a top folder into the folder named by the file', async () => {
    const { workspaces } = setup();
    const zip = writeZip(path.join(tmp(), 'legacy.io_1739470834.zip'), [ok('a.txt', 'A'), ok('sub/b.txt', 'B')]);
    const r = await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: true });
    expect(r).toMatchObject({ workspace: 'legacy.io', files_count: 2 });
    expect(tree(path.join(workspaces, 'legacy.io'))).toMatchObject({ 'a.txt': expect.any(String), sub: 'dir', 'sub/b.txt': expect.any(String) });
  });

  it('refuses an existing workspace without force, naming it (409, no path)', async () => {
    const { root, workspaces, before } = setup();
    const zip = writeZip(path.join(tmp(), 'x.zip'), [ok('existing.com/new.txt')]);
    const err = await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      status: 409,
      message: 'Failed to import snapshot: workspace already exists: existing.com (use force=true to overwrite)',
    });
    expect(tree(root)).toEqual(before);
  });

  it('replaces an existing workspace with force', async () => {
    const { workspaces } = setup();
    const zip = writeZip(path.join(tmp(), 'x.zip'), [ok('existing.com/new.txt', 'N')]);
    await importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: true, skipDb: true });
    expect(fs.readdirSync(path.join(workspaces, 'existing.com'))).toEqual(['new.txt']);
    expect(fs.readdirSync(workspaces)).toEqual(['existing.com']);
  });

  it('refuses a workspace name that is not safe', async () => {
    const { workspaces } = setup();
    const zip = writeZip(path.join(tmp(), 'bad name!.zip'), [ok('a.txt')]);
    await expect(importSnapshotZip(asyncSqlite(store()), { file: zip, workspacesDir: workspaces, force: false, skipDb: true })).rejects.toThrow(/cannot tell a valid workspace name/);
    const dotted = writeZip(path.join(tmp(), 'x.zip'), [ok('.hidden/a.txt')]);
    await expect(importSnapshotZip(asyncSqlite(store()), { file: dotted, workspacesDir: workspaces, force: false, skipDb: true })).rejects.toThrow(/cannot tell a valid workspace name/);
  });
});
