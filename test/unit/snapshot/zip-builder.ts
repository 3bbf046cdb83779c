/**
 * A tiny zip writer for hostile test archives: any entry name (`../evil`, absolute, NUL),
 * any external attributes (symlinks, devices), lying sizes and CRCs, raw deflate data.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';

export interface TestEntry {
  name: string | Buffer;
  data?: Buffer;
  /** Already-deflated data (method 8) with its real uncompressed size and CRC given separately. */
  raw?: { deflated: Buffer; size: number; crc: number };
  /** Unix mode including type bits, e.g. 0o100644, 0o120777 (symlink), 0o020644 (char device). */
  mode?: number;
  deflate?: boolean;
  /** Overrides of what the headers declare. */
  declaredSize?: number;
  declaredCrc?: number;
  flags?: number;
  method?: number;
}

/** Builds the archive bytes. */
export function buildZip(entries: TestEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name, 'utf8');
    let data: Buffer;
    let size: number;
    let crc: number;
    let method = 0;
    if (e.raw) {
      data = e.raw.deflated;
      size = e.raw.size;
      crc = e.raw.crc;
      method = 8;
    } else {
      const plain = e.data ?? Buffer.alloc(0);
      size = plain.length;
      crc = zlib.crc32(plain);
      data = e.deflate ? zlib.deflateRawSync(plain) : plain;
      method = e.deflate ? 8 : 0;
    }
    method = e.method ?? method;
    size = e.declaredSize ?? size;
    crc = (e.declaredCrc ?? crc) >>> 0;
    const flags = (e.flags ?? 0) | 0x800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, data);
    const mode = e.mode ?? (name.at(-1) === 0x2f ? 0o040755 : 0o100644);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((mode & 0xffff) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
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

/** Writes the archive to `file`. */
export function writeZip(file: string, entries: TestEntry[]): string {
  fs.writeFileSync(file, buildZip(entries));
  return file;
}

/**
 * Raw deflate data of `mib` MiB of zeros, built from one full-flushed 1 MiB block repeated (each
 * full flush resets the dictionary, so the copies concatenate into one valid stream) and a final
 * empty block: about 1 KiB per MiB, and no large buffer or file is ever created.
 */
export function zeroBomb(mib: number): { deflated: Buffer; size: number; crc: number } {
  const zeros = Buffer.alloc(1 << 20);
  const block = zlib.deflateRawSync(zeros, { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const final = zlib.deflateRawSync(Buffer.alloc(0));
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = zlib.crc32(zeros, crc);
  return { deflated: Buffer.concat([...Array<Buffer>(mib).fill(block), final]), size: mib * (1 << 20), crc: crc >>> 0 };
}
