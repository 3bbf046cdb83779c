/**
 * Small, dependency-free recognisers for target shapes (IP, IP:port, CIDR, domain, repo). Shared
 * by heuristics.ts (workspace naming) and target.ts (input validation) so both agree on what a
 * "domain" or "cidr" is.
 */
import { isIP } from 'node:net';

/** Detection regex of the reference heuristics (internal/heuristics/heuristics.go). */
export const HEURISTIC_DOMAIN_RE = /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?\.)+[a-zA-Z]{2,}$/;
/** Stricter type-check regex (labels ≤ 63 chars) of the reference dependency checks (core). */
export const DOMAIN_RE = /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,}$/;
export const NUMBER_RE = /^-?\d+(\.\d+)?$/;
const SIMPLE_REPO_RE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const HOSTED_REPO_RE = /^(?:(?:https?:\/\/)?(?:www\.)?(github\.com|gitlab\.com)\/)([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/;
const SSH_REPO_RE = /^git@[^:]+:([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(\.git)?$/;

/** True for a bare IPv4 or IPv6 address (no port, no brackets). */
export function isIpAddress(value: string): boolean {
  return isIP(value) !== 0;
}

/**
 * Splits `1.2.3.4`, `1.2.3.4:8080`, `::1` or `[::1]:8080` into IP and port; undefined when the
 * value is not an IP literal (with an optional numeric port).
 */
export function splitIpPort(value: string): { ip: string; port?: string } | undefined {
  if (isIP(value)) return { ip: value };
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  if (bracketed && isIP(bracketed[1]!) === 6) return bracketed[2] ? { ip: bracketed[1]!, port: bracketed[2] } : { ip: bracketed[1]! };
  const v4port = /^([^:]+):(\d{1,5})$/.exec(value);
  if (v4port && isIP(v4port[1]!) === 4) return { ip: v4port[1]!, port: v4port[2]! };
  return undefined;
}

/** True for `address/prefix` with a valid IPv4 (0–32) or IPv6 (0–128) prefix. */
export function isCidr(value: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  if (!m) return false;
  const family = isIP(m[1]!);
  const prefix = Number(m[2]);
  return (family === 4 && prefix <= 32) || (family === 6 && prefix <= 128);
}

/** True for `owner/name`, github/gitlab URLs, `git@host:o/r(.git)` or http/ssh/git URLs with ≥2 path segments. */
export function isRepo(value: string): boolean {
  if (SIMPLE_REPO_RE.test(value) || HOSTED_REPO_RE.test(value) || SSH_REPO_RE.test(value)) return true;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ssh:', 'git:'].includes(url.protocol)) return false;
  const parts = url.pathname.replace(/^\/+|\/+$/g, '').split('/');
  return parts.length >= 2 && parts[0] !== '' && parts[1]!.replace(/\.git$/, '') !== '';
}

/** True for an absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, as Go's hash/crc32.ChecksumIEEE) of the UTF-8 bytes of `text`. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
