/**
 * Reads the entry count a zip declares in its end-of-central-directory record (zip64 included),
 * before any library parses the directory: a zip declaring millions of entries is refused without
 * allocating anything for them.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EOCD_SIG = 0x06064b50;
const MAX_TAIL = 22 + 0xffff;

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = readSync(fd, buf, 0, length, position);
  return buf.subarray(0, n);
}

/** The number of entries the archive declares, or undefined when it has no valid end record. */
export function declaredEntryCount(file: string): number | undefined {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < 22) return undefined;
    const tailStart = Math.max(0, size - MAX_TAIL);
    const tail = readAt(fd, tailStart, size - tailStart);
    // The record whose comment length reaches exactly to the end of the file is the real one.
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) !== EOCD_SIG || tail.readUInt16LE(i + 20) !== tail.length - i - 22) continue;
      const count = tail.readUInt16LE(i + 10);
      const cdOffset = tail.readUInt32LE(i + 16);
      if (count !== 0xffff && cdOffset !== 0xffffffff) return count;
      const locAt = tailStart + i - 20;
      if (locAt < 0) return undefined;
      const loc = readAt(fd, locAt, 20);
      if (loc.length < 20 || loc.readUInt32LE(0) !== ZIP64_LOCATOR_SIG) return count;
      const recAt = Number(loc.readBigUInt64LE(8));
      const rec = readAt(fd, recAt, 56);
      if (rec.length < 56 || rec.readUInt32LE(0) !== ZIP64_EOCD_SIG) return undefined;
      return Number(rec.readBigUInt64LE(32));
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
