/** Type detection functions (reference §10.2 "type_detection"). */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { FnImpl } from './registry.js';
import { argStr, isDirectory, isRegularFile } from './helpers.js';

const CIDR_V4 = /^(\d{1,3}\.){3}\d{1,3}\/(3[0-2]|[12]?\d)$/;
const DOMAIN = /^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}\.?$/i;
const ARCHIVE_EXT = /\.(zip|tar|tar\.gz|tgz|gz|tar\.bz2|tbz2|bz2|tar\.xz|txz|xz|7z|rar|zst|tar\.zst)$/i;

/** True for an IPv4/IPv6 network in CIDR notation. */
function isCidr(s: string): boolean {
  if (CIDR_V4.test(s)) return s.split('/')[0]!.split('.').every((o) => Number(o) <= 255);
  const [addr, len, extra] = s.split('/');
  return extra === undefined && len !== undefined && /^\d{1,3}$/.test(len) && Number(len) <= 128 && isIP(addr ?? '') === 6;
}

/** True for an http(s)/ftp/ws URL with a host. */
function isUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return /^(https?|ftp|wss?):$/.test(u.protocol) && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Classifies an input as file, folder, cidr, ip, url, domain or string. */
export function detectType(input: string): string {
  if (isRegularFile(input)) return 'file';
  if (isDirectory(input)) return 'folder';
  if (isCidr(input)) return 'cidr';
  if (isIP(input.replace(/^\[|\]$/g, ''))) return 'ip';
  if (isUrl(input)) return 'url';
  if (DOMAIN.test(input)) return 'domain';
  return 'string';
}

/** Magic bytes of common compressed formats. */
function hasArchiveMagic(path: string): boolean {
  const buf = Buffer.alloc(8);
  try {
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buf, 0, 8, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  const hex = buf.toString('hex');
  return hex.startsWith('504b0304') || hex.startsWith('1f8b') || hex.startsWith('425a68') || hex.startsWith('fd377a585a00')
    || hex.startsWith('377abcaf271c') || hex.startsWith('526172211a07') || hex.startsWith('28b52ffd');
}

/** The type detection functions, by snake_case name (aliases come from the catalogue). */
export const typeDetectionFunctions: Record<string, FnImpl> = {
  get_types: (_c, v) => {
    const input = argStr(v);
    return input === null ? 'string' : detectType(input.trim());
  },
  is_file: (_c, p) => {
    const path = argStr(p);
    return path !== null && isRegularFile(path);
  },
  is_dir: (_c, p) => {
    const path = argStr(p);
    return path !== null && isDirectory(path);
  },
  // A local working copy, or a remote that names a git repository.
  is_git: (_c, p) => {
    const input = argStr(p);
    if (input === null) return false;
    if (isDirectory(input)) return existsSync(join(input, '.git'));
    if (/^[\w.-]+@[\w.-]+:[\w./~-]+$/.test(input)) return true;
    if (!isUrl(input) && !/^(git|ssh):\/\//.test(input)) return false;
    return /\.git\/?$/.test(input) || /^https?:\/\/(www\.)?(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org|gitea\.com)\/[^/]+\/[^/]+/.test(input);
  },
  is_url: (_c, p) => {
    const input = argStr(p);
    return input !== null && isUrl(input.trim());
  },
  is_compress: (_c, p) => {
    const path = argStr(p);
    if (path === null) return false;
    return ARCHIVE_EXT.test(path) || (isRegularFile(path) && hasArchiveMagic(path));
  },
};
