import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTar, buildTarGz, buildZip, FAKE_TOOL, paxRecord } from '../../fixtures/registry/archives.js';
import { unpack, kindFromName } from '../../../src/registry/extract.js';
import { ArchiveError, entrySegments } from '../../../src/registry/archive-names.js';
import { pickExecutable, placeBinary, linkBinary } from '../../../src/registry/place.js';
import { gzipSync } from 'node:zlib';

let root: string;
let work: string;
let dest: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  work = path.join(root, 'work');
  dest = path.join(root, 'a', 'b', 'dest');
  fs.mkdirSync(work);
  fs.mkdirSync(dest, { recursive: true });
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function write(name: string, data: Buffer): string {
  const p = path.join(work, name);
  fs.writeFileSync(p, data);
  return p;
}

/** Every path under `dir`, relative. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      out.push(path.relative(dir, p));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

async function rejects(file: string, nameHint: string, pattern: RegExp): Promise<void> {
  const before = tree(root).filter((p) => !p.startsWith('work'));
  const err = await unpack(file, dest, { nameHint, rawName: 'tool', workDir: work }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ArchiveError);
  expect((err as Error).message).toMatch(pattern);
  // Nothing written anywhere: not in dest, not next to it, not above it.
  expect(tree(root).filter((p) => !p.startsWith('work'))).toEqual(before);
  expect(fs.existsSync(path.join(root, 'evil'))).toBe(false);
  expect(fs.existsSync(path.join(root, 'a', 'evil'))).toBe(false);
}

describe('entry names', () => {
  it('drops . and empty segments, refuses .., absolute, backslash and control characters', () => {
    expect(entrySegments('./a//b/./c')).toEqual(['a', 'b', 'c']);
    expect(entrySegments('./')).toEqual([]);
    for (const bad of ['../evil', 'a/../../evil', '/etc/passwd', 'C:/x', 'a\\..\\b', 'a\nb', 'a\0b']) {
      expect(() => entrySegments(bad), bad).toThrow(ArchiveError);
    }
  });

  it('detects kinds by name', () => {
    expect(kindFromName('x_1.0_linux_amd64.zip')).toBe('zip');
    expect(kindFromName('x.tar.gz')).toBe('gzip');
    expect(kindFromName('x.TGZ')).toBe('gzip');
    expect(kindFromName('x.gz')).toBe('gzip');
    expect(kindFromName('x.tar')).toBe('tar');
    expect(kindFromName('jq-linux-amd64')).toBeUndefined();
  });
});

describe('good archives', () => {
  it('extracts a tar.gz with ./ prefixes, folders and the executable bit', async () => {
    const file = write('t.tar.gz', buildTarGz([
      { name: './', type: '5' },
      { name: './tool-1.0/', type: '5' },
      { name: './tool-1.0/tool', content: FAKE_TOOL, mode: 0o755 },
      { name: './tool-1.0/README.md', content: 'read me' },
    ]));
    expect(await unpack(file, dest, { nameHint: 't.tar.gz', rawName: 'tool', workDir: work })).toBe('gzip');
    expect(tree(dest)).toEqual(['tool-1.0', 'tool-1.0/README.md', 'tool-1.0/tool']);
    expect(fs.statSync(path.join(dest, 'tool-1.0/tool')).mode & 0o111).not.toBe(0);
    expect(fs.readFileSync(path.join(dest, 'tool-1.0/README.md'), 'utf8')).toBe('read me');
    expect(pickExecutable(dest, 'tool')).toBe(path.join(dest, 'tool-1.0/tool'));
  });

  it('honours pax paths and GNU long names, and checks them like any name', async () => {
    const long = `${'d'.repeat(120)}/tool`;
    const file = write('p.tar.gz', buildTarGz([
      { name: 'PaxHeaders/x', type: 'x', content: paxRecord('path', long) },
      { name: 'short-ignored', content: FAKE_TOOL, mode: 0o755 },
      { name: '././@LongLink', type: 'L', content: `${'e'.repeat(110)}/readme\0` },
      { name: 'also-ignored', content: 'r' },
    ]));
    await unpack(file, dest, { nameHint: 'p.tar.gz', rawName: 'tool', workDir: work });
    expect(fs.readFileSync(path.join(dest, long), 'utf8')).toBe(FAKE_TOOL);
    expect(fs.readFileSync(path.join(dest, 'e'.repeat(110), 'readme'), 'utf8')).toBe('r');
    expect(fs.existsSync(path.join(dest, 'short-ignored'))).toBe(false);
    const evil = write('pe.tar.gz', buildTarGz([{ name: 'PaxHeaders/x', type: 'x', content: paxRecord('path', '../../evil') }, { name: 'innocent', content: 'x' }]));
    const err = await unpack(evil, path.join(root, 'dest3'), { nameHint: 'pe.tar.gz', rawName: 't', workDir: work }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/parent directory segment/);
    expect(fs.existsSync(path.join(root, 'evil'))).toBe(false);
  });

  it('tar modes keep only the executable bit, and the archive owner is never applied', async () => {
    const file = write('m.tar.gz', buildTarGz([
      { name: 'suid', content: FAKE_TOOL, mode: 0o4755, uid: 4242, gid: 4242 },
      { name: 'plain', content: 'x', mode: 0o666, uid: 4242, gid: 4242 },
      { name: 'dir/', type: '5', mode: 0o777, uid: 4242, gid: 4242 },
    ]));
    await unpack(file, dest, { nameHint: 'm.tar.gz', rawName: 't', workDir: work });
    const suid = fs.statSync(path.join(dest, 'suid'));
    expect(suid.mode & 0o7777).toBe(0o755 & ~process.umask());
    expect(fs.statSync(path.join(dest, 'plain')).mode & 0o7777).toBe(0o644 & ~process.umask());
    for (const name of ['suid', 'plain', 'dir']) {
      const st = fs.statSync(path.join(dest, name));
      expect([st.uid, st.gid], name).toEqual([process.getuid!(), process.getgid!()]);
    }
  });

  it('extracts a zip and keeps the content byte for byte', async () => {
    const file = write('t.zip', buildZip([
      { name: 'dist/' },
      { name: 'dist/tool', content: FAKE_TOOL, mode: 0o100755 },
      { name: 'LICENSE', content: 'MIT' },
    ]));
    expect(await unpack(file, dest, { nameHint: 't.zip', rawName: 'tool', workDir: work })).toBe('zip');
    expect(fs.readFileSync(path.join(dest, 'dist/tool'), 'utf8')).toBe(FAKE_TOOL);
    expect(pickExecutable(dest, 'tool')).toBe(path.join(dest, 'dist/tool'));
  });

  it('treats a lone .gz as one compressed file and an unknown name as a raw binary', async () => {
    const gz = write('tool.gz', gzipSync(Buffer.from(FAKE_TOOL)));
    expect(await unpack(gz, dest, { nameHint: 'tool_linux.gz', rawName: 'tool', workDir: work })).toBe('gzip');
    expect(fs.readFileSync(path.join(dest, 'tool'), 'utf8')).toBe(FAKE_TOOL);
    const dest2 = path.join(root, 'dest2');
    fs.mkdirSync(dest2);
    const raw = write('raw', Buffer.from(FAKE_TOOL));
    expect(await unpack(raw, dest2, { nameHint: 'jq-linux-amd64', rawName: 'jq', workDir: work })).toBe('raw');
    expect(fs.readFileSync(path.join(dest2, 'jq'), 'utf8')).toBe(FAKE_TOOL);
  });

  it('a zip with ./ entries (the root and ./a//b) extracts like a plain one; a snapshot would refuse it', async () => {
    const file = write('dots.zip', buildZip([{ name: './' }, { name: './bin//tool', content: FAKE_TOOL, mode: 0o100755 }]));
    const out = path.join(root, 'dest-dots');
    fs.mkdirSync(out);
    expect(await unpack(file, out, { nameHint: 'dots.zip', rawName: 'tool', workDir: work })).toBe('zip');
    expect(fs.readFileSync(path.join(out, 'bin/tool'), 'utf8')).toBe(FAKE_TOOL);
    expect(fs.statSync(path.join(out, 'bin/tool')).mode & 0o111).not.toBe(0);
    const { inspectZip } = await import('../../../src/snapshot/safe-unzip.js');
    await expect(inspectZip(file)).rejects.toThrow(/illegal file path: "\.\/" \(empty or "\." segment\)/);
  });

  it('recognises a zip by its magic bytes when the URL has no extension', async () => {
    const file = write('download', buildZip([{ name: 'tool', content: FAKE_TOOL, mode: 0o100755 }]));
    expect(await unpack(file, dest, { nameHint: 'latest', rawName: 'tool', workDir: work })).toBe('zip');
  });

  it('picks <name>-suffix files and the only executable when no exact name exists', () => {
    fs.writeFileSync(path.join(dest, 'jq-linux-amd64'), FAKE_TOOL, { mode: 0o755 });
    fs.writeFileSync(path.join(dest, 'notes.txt'), 'x');
    expect(pickExecutable(dest, 'jq')).toBe(path.join(dest, 'jq-linux-amd64'));
    expect(pickExecutable(dest, 'other')).toBe(path.join(dest, 'jq-linux-amd64'));
    fs.writeFileSync(path.join(dest, 'second'), FAKE_TOOL, { mode: 0o755 });
    expect(pickExecutable(dest, 'other')).toBeUndefined();
  });
});

describe('hostile archives are refused before anything is written', () => {
  it('tar.gz with ../evil', async () => {
    const file = write('e.tar.gz', buildTarGz([{ name: 'ok', content: 'fine' }, { name: '../../evil', content: 'pwned' }]));
    await rejects(file, 'e.tar.gz', /parent directory segment/);
  });

  it('tar.gz with an absolute path', async () => {
    const file = write('e.tar.gz', buildTarGz([{ name: path.join(root, 'evil'), content: 'pwned' }]));
    await rejects(file, 'e.tar.gz', /absolute path/);
  });

  it('tar.gz with a symlink pointing out, then a file written through it', async () => {
    const file = write('e.tar.gz', buildTarGz([
      { name: 'link', type: '2', linkname: root },
      { name: 'link/evil', content: 'pwned' },
    ]));
    await rejects(file, 'e.tar.gz', /symbolic link entries are not allowed/);
  });

  it('tar with a hard link or a device', async () => {
    await rejects(write('h.tar', buildTar([{ name: 'h', type: '1', linkname: '/etc/passwd' }])), 'h.tar', /hard link entries are not allowed/);
    await rejects(write('d.tar', buildTar([{ name: 'd', type: '3' }])), 'd.tar', /character device entries are not allowed/);
  });

  it('zip with ../evil, an absolute path, or a symlink', async () => {
    await rejects(write('a.zip', buildZip([{ name: 'ok', content: 'x' }, { name: '../evil', content: 'pwned' }])), 'a.zip', /parent directory segment/);
    await rejects(write('b.zip', buildZip([{ name: '/tmp/evil', content: 'pwned' }])), 'b.zip', /absolute path/);
    await rejects(write('c.zip', buildZip([{ name: 'link', content: root, mode: 0o120777 }, { name: 'link/evil', content: 'pwned' }])), 'c.zip', /illegal entry type: "link" \(symbolic link\)/);
  });

  it('a tar header with a bad checksum', async () => {
    const tar = buildTar([{ name: 'tool', content: FAKE_TOOL }]);
    tar[0] = 'X'.charCodeAt(0);
    await rejects(write('bad.tar', tar), 'bad.tar', /checksum mismatch/);
  });

  it('too many entries and too many bytes', async () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, content: 'x' }));
    const limits = { maxEntries: 3, maxTotalBytes: 64 * 1024, maxRatio: 200 };
    let err = await unpack(write('m.tar.gz', buildTarGz(many)), dest, { nameHint: 'm.tar.gz', rawName: 't', workDir: work, limits }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/too many entries/);
    err = await unpack(write('m.zip', buildZip(many)), dest, { nameHint: 'm.zip', rawName: 't', workDir: work, limits }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/too many entries/);
    const small = { ...limits, maxTotalBytes: 1024 };
    err = await unpack(write('big.tar.gz', buildTarGz([{ name: 'big', content: Buffer.alloc(4096) }])), dest, { nameHint: 'big.tar.gz', rawName: 't', workDir: work, limits: small }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/expands beyond 1024 bytes/);
    err = await unpack(write('big.zip', buildZip([{ name: 'big', content: Buffer.alloc(4096) }])), dest, { nameHint: 'big.zip', rawName: 't', workDir: work, limits: small }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/expands beyond 1024 bytes/);
    expect(fs.readdirSync(dest)).toEqual([]);
  });

  it('tar with a FIFO, a block device or a type tar libraries skip quietly (GNU sparse, volume label)', async () => {
    await rejects(write('f.tar', buildTar([{ name: 'ok', content: 'x' }, { name: 'fifo', type: '6' }])), 'f.tar', /FIFO entries are not allowed: "fifo"/);
    await rejects(write('b.tar', buildTar([{ name: 'blk', type: '4' }])), 'b.tar', /block device entries are not allowed/);
    await rejects(write('s.tar.gz', buildTarGz([{ name: 'ok', content: 'x' }, { name: 'sparse', type: 'S', content: 'y' }])), 's.tar.gz', /unsupported tar entry type "SparseFile": "sparse"/);
    await rejects(write('v.tar', buildTar([{ name: 'label', type: 'V' }, { name: 'ok', content: 'x' }])), 'v.tar', /unsupported tar entry type "TapeVolumeHeader"/);
  });

  it('tar with the same file twice, or a file below a file, writes nothing', async () => {
    await rejects(write('d.tar.gz', buildTarGz([{ name: 'tool', content: FAKE_TOOL }, { name: 'tool', content: 'second' }])), 'd.tar.gz', /duplicate entry: "tool"/);
    await rejects(write('u.tar.gz', buildTarGz([{ name: 'a', content: 'file' }, { name: 'a/b', content: 'below' }])), 'u.tar.gz', /entry below a file: "a\/b"/);
  });

  it('a truncated tar, an oversized pax record or a gzip inside the gzip', async () => {
    const tar = buildTar([{ name: 'tool', content: Buffer.alloc(4096, 1) }]);
    await rejects(write('t.tar', tar.subarray(0, 2048)), 't.tar', /invalid tar archive: .*truncated/i);
    const hugePax = buildTarGz([{ name: 'PaxHeaders/x', type: 'x', content: paxRecord('comment', 'c'.repeat(1024 * 1024 + 10)) }, { name: 'ok', content: 'x' }]);
    await rejects(write('p.tar.gz', hugePax), 'p.tar.gz', /tar metadata entry too large/);
    // node-tar would inflate a payload that starts like gzip, past the byte cap of the first inflate.
    const nested = buildTar([{ name: 'xxtool', content: 'x' }]);
    nested[0] = 0x1f;
    nested[1] = 0x8b;
    await rejects(write('n.tar.gz', gzipSync(nested)), 'n.tar.gz', /compressed twice/);
  });

  it('a tar entry whose declared size is over the cap is refused before any byte is written', async () => {
    const limits = { maxEntries: 10, maxTotalBytes: 1000, maxRatio: 200 };
    const file = write('two.tar', buildTar([{ name: 'a', content: Buffer.alloc(600) }, { name: 'b', content: Buffer.alloc(600) }]));
    const err = await unpack(file, dest, { nameHint: 'two.tar', rawName: 't', workDir: work, limits }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/expands beyond 1000 bytes/);
    expect(fs.readdirSync(dest)).toEqual([]);
  });

  it('a file named .zip that is not a zip', async () => {
    const err = await unpack(write('x.zip', Buffer.from(FAKE_TOOL)), dest, { nameHint: 'x.zip', rawName: 't', workDir: work }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/named like a zip archive but its content is not an archive/);
  });
});

describe('placing binaries', () => {
  it('copies with mode 0755 atomically, replacing an older copy', () => {
    const bin = path.join(root, 'bin');
    const src = write('tool', Buffer.from(FAKE_TOOL));
    const p = placeBinary(src, bin, 'tool');
    expect(p).toBe(path.join(bin, 'tool'));
    expect(fs.statSync(p).mode & 0o777).toBe(0o755);
    fs.writeFileSync(src, '#!/bin/sh\necho v2\n');
    placeBinary(src, bin, 'tool');
    expect(fs.readFileSync(p, 'utf8')).toContain('v2');
    expect(fs.readdirSync(bin)).toEqual(['tool']);
    expect(() => placeBinary(src, bin, '../evil')).toThrow(/invalid binary name/);
  });

  it('links a copy found elsewhere but never replaces a real file', () => {
    const bin = path.join(root, 'bin');
    const other = write('elsewhere', Buffer.from(FAKE_TOOL));
    expect(linkBinary(other, bin, 'tool')).toBe(path.join(bin, 'tool'));
    expect(fs.readlinkSync(path.join(bin, 'tool'))).toBe(other);
    fs.rmSync(path.join(bin, 'tool'));
    fs.writeFileSync(path.join(bin, 'tool'), 'real');
    expect(linkBinary(other, bin, 'tool')).toBe('');
    expect(fs.readFileSync(path.join(bin, 'tool'), 'utf8')).toBe('real');
  });
});
