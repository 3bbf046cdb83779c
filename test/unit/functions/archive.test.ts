import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { call, tempDir } from './call.js';

const t = tempDir();
afterAll(t.cleanup);

/** A minimal stored (uncompressed) zip, so hostile entry names can be written as is. */
function makeZip(entries: { name: string; data: string; mode?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const data = Buffer.from(e.data);
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

describe('archive functions', () => {
  it('zip_dir / unzip_dir round trip with relative entries', () => {
    t.file('src/a.txt', 'A');
    t.file('src/nested/b.txt', 'B');
    const zip = path.join(t.dir, 'out', 'src.zip');
    expect(call('zip_dir', path.join(t.dir, 'src'), zip)).toBe(true);
    const dest = path.join(t.dir, 'unzipped');
    expect(call('unzipDir', zip, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'a.txt'), 'utf8')).toBe('A');
    expect(fs.readFileSync(path.join(dest, 'nested', 'b.txt'), 'utf8')).toBe('B');
  });

  it('zip_dir of a single file stores its base name', () => {
    const f = t.file('single.txt', 'S');
    const zip = path.join(t.dir, 'single.zip');
    expect(call('zipDir', f, zip)).toBe(true);
    const dest = path.join(t.dir, 'single-out');
    expect(call('unzip_dir', zip, dest)).toBe(true);
    expect(fs.readdirSync(dest)).toEqual(['single.txt']);
  });

  it('zip_dir never follows a link out of the source', () => {
    const secret = t.file('secret.txt', 'do not ship');
    t.file('linked/inside.txt', 'in');
    fs.symlinkSync(secret, path.join(t.dir, 'linked', 'leak.txt'));
    fs.symlinkSync(path.join(t.dir, 'linked', 'inside.txt'), path.join(t.dir, 'linked', 'alias.txt'));
    const zip = path.join(t.dir, 'linked.zip');
    expect(call('zip_dir', path.join(t.dir, 'linked'), zip)).toBe(true);
    const dest = path.join(t.dir, 'linked-out');
    expect(call('unzip_dir', zip, dest)).toBe(true);
    expect(fs.readdirSync(dest).sort()).toEqual(['alias.txt', 'inside.txt']);
  });

  it('unzip_dir skips entries escaping dest (zip-slip) and link entries', () => {
    const zip = path.join(t.dir, 'evil.zip');
    fs.writeFileSync(zip, makeZip([
      { name: 'ok.txt', data: 'fine' },
      { name: '../escaped.txt', data: 'x' },
      { name: 'a/../../escaped2.txt', data: 'x' },
      { name: '/abs-escaped.txt', data: 'x' },
      { name: 'link', data: '/etc/passwd', mode: 0o120777 },
    ]));
    const dest = path.join(t.dir, 'slip', 'dest');
    expect(call('unzip_dir', zip, dest)).toBe(true);
    expect(fs.readdirSync(dest)).toEqual(['ok.txt']);
    expect(fs.existsSync(path.join(t.dir, 'slip', 'escaped.txt'))).toBe(false);
    expect(fs.existsSync(path.join(t.dir, 'escaped2.txt'))).toBe(false);
    expect(fs.existsSync('/abs-escaped.txt')).toBe(false);
  });

  it('unzip_dir does not write through a link already inside dest', () => {
    const outside = path.join(t.dir, 'outside-dir');
    fs.mkdirSync(outside);
    const dest = path.join(t.dir, 'pre');
    fs.mkdirSync(dest);
    fs.symlinkSync(outside, path.join(dest, 'sub'));
    const zip = path.join(t.dir, 'through-link.zip');
    fs.writeFileSync(zip, makeZip([{ name: 'sub/owned.txt', data: 'x' }]));
    expect(call('unzip_dir', zip, dest)).toBe(true);
    expect(fs.existsSync(path.join(outside, 'owned.txt'))).toBe(false);
  });

  it('failure values', () => {
    expect(call('zip_dir', path.join(t.dir, 'nothing'), path.join(t.dir, 'x.zip'))).toBe(false);
    expect(call('unzip_dir', path.join(t.dir, 'nothing.zip'), t.dir)).toBe(false);
    expect(call('unzip_dir', t.file('not-a-zip.zip', 'plain text'), path.join(t.dir, 'nz'))).toBe(false);
    expect(call('zip_dir')).toBe(false);
  });

  it('extract_to recreates dest and detects the format (extension or magic bytes)', () => {
    const dest = path.join(t.dir, 'extract');
    t.file('extract/stale.txt', 'old');
    const zip = path.join(t.dir, 'noext');
    fs.writeFileSync(zip, makeZip([{ name: 'z.txt', data: 'zipped' }]));
    expect(call('extract_to', zip, dest)).toBe(true);
    expect(fs.readdirSync(dest)).toEqual(['z.txt']);
    if (call('command_exists', 'tar')) {
      t.file('tsrc/t.txt', 'tarred');
      const tgz = path.join(t.dir, 'x.tgz');
      expect(call('exec_cmd', `tar -czf '${tgz}' -C '${t.dir}' tsrc && echo ok`)).toBe('ok');
      expect(call('extract_to', tgz, dest)).toBe(true);
      expect(fs.readFileSync(path.join(dest, 'tsrc', 't.txt'), 'utf8')).toBe('tarred');
      expect(fs.existsSync(path.join(dest, 'z.txt'))).toBe(false);
    }
    expect(call('extract_to', t.file('plain.bin', 'nothing special'), dest)).toBe(false);
    expect(call('extract_to', zip, '/')).toBe(false);
    expect(call('extract_to', zip, t.dir)).toBe(false);
    expect(fs.existsSync(zip)).toBe(true);
  });
});
