/** String functions (reference §10.2 "string"). Missing first arguments answer "" / false / []. */
import { randomBytes } from 'node:crypto';
import type { FnImpl } from './registry.js';
import { argInt, argStr, asText, displayValue, isMissing, linesText, nonBlankLines, tryRegex, writeText } from './helpers.js';

/** Go strings.Trim/TrimLeft/TrimRight: `cutset` is a set of characters, not a substring. */
function trimSet(input: string, cutset: string, left: boolean, right: boolean): string {
  const set = new Set(Array.from(cutset));
  const chars = Array.from(input);
  let start = 0;
  let end = chars.length;
  if (left) while (start < end && set.has(chars[start]!)) start++;
  if (right) while (end > start && set.has(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

/** Random characters from `alphabet` (rejection-free modulo is fine for non-secret names). */
export function randomFrom(alphabet: string, n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[bytes[i]! % alphabet.length];
  return out;
}

/** The workspace-name rule of the reference (`{{TargetSpace}}` step 1). */
export function targetSpaceName(input: string): string {
  const cleaned = input.replace(/[/\\:*?"<>|]/g, '_');
  if (Buffer.byteLength(cleaned) <= 30) return cleaned;
  return `${cleaned.slice(0, 6)}-${randomFrom('abcdefghijklmnopqrstuvwxyz', 6)}-${Math.floor(Date.now() / 1000)}`;
}

const ESCAPE_PREFIX = /^(u00[0-9a-f]{2}|20|22|25|2b|2f|3d|3a|40)/;
const HOST_TOKEN = /[a-z0-9*_-]+(?:\.[a-z0-9*_-]+)+/;
const IP_LIKE = /^\d{1,3}(\.\d{1,3}){3}$/;

/** One line of subdomain-tool output → a clean hostname, or '' to drop it. */
function cleanHost(line: string): string {
  const m = HOST_TOKEN.exec(line.toLowerCase());
  if (!m) return '';
  let host = m[0];
  const star = host.lastIndexOf('*.');
  if (star >= 0) host = host.slice(star + 2);
  host = host.replace(/^[-.]+|[-.]+$/g, '');
  // URL-escaped separators glued to the name (e.g. "2fwww.example.com" from "%2Fwww.example.com").
  for (let m2 = ESCAPE_PREFIX.exec(host); m2 && host.slice(m2[0].length).includes('.'); m2 = ESCAPE_PREFIX.exec(host)) {
    host = host.slice(m2[0].length).replace(/^[-.]+/, '');
  }
  if (IP_LIKE.test(host) || !host.includes('.')) return '';
  return host;
}

/** Splits on runs of whitespace like Go strings.Fields. */
const fields = (s: string) => s.trim().split(/\s+/).filter((x) => x !== '');

/** The string functions, by snake_case name (aliases come from the catalogue). */
export const stringFunctions: Record<string, FnImpl> = {
  trim: (_c, s) => (isMissing(s) ? '' : asText(s).trim()),
  trim_string: (_c, s, set) => (isMissing(s) ? '' : trimSet(asText(s), isMissing(set) ? '' : asText(set), true, true)),
  trim_left: (_c, s, set) => (isMissing(s) ? '' : trimSet(asText(s), isMissing(set) ? '' : asText(set), true, false)),
  trim_right: (_c, s, set) => (isMissing(s) ? '' : trimSet(asText(s), isMissing(set) ? '' : asText(set), false, true)),
  split: (_c, s, d) => {
    if (isMissing(s)) return [];
    const str = asText(s);
    if (d === '') return Array.from(str);
    if (isMissing(d)) return [str];
    return str.split(asText(d));
  },
  join: (_c, arr, d) => {
    if (!Array.isArray(arr)) return '';
    const delim = isMissing(d) ? '' : asText(d);
    return arr.map((x) => (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? String(x) : displayValue(x))).join(delim);
  },
  replace: (_c, s, o, n) => {
    if (isMissing(s)) return '';
    const str = asText(s);
    if (o === undefined || o === null) return str;
    return str.split(asText(o)).join(isMissing(n) ? '' : asText(n));
  },
  contains: (_c, s, sub) => !isMissing(s) && sub !== undefined && sub !== null && asText(s).includes(asText(sub)),
  starts_with: (_c, s, p) => !isMissing(s) && p !== undefined && p !== null && asText(s).startsWith(asText(p)),
  ends_with: (_c, s, p) => !isMissing(s) && p !== undefined && p !== null && asText(s).endsWith(asText(p)),
  to_lower_case: (_c, s) => (isMissing(s) ? '' : asText(s).toLowerCase()),
  to_upper_case: (_c, s) => (isMissing(s) ? '' : asText(s).toUpperCase()),
  match: (_c, s, p) => {
    const pattern = argStr(p);
    if (isMissing(s) || pattern === null) return false;
    return tryRegex(pattern)?.test(asText(s)) ?? false;
  },
  regex_match: (_c, p, s) => {
    const pattern = argStr(p);
    if (isMissing(s) || pattern === null) return false;
    return tryRegex(pattern)?.test(asText(s)) ?? false;
  },
  cut_with_delim: (_c, s, d, f) => {
    const delim = argStr(d);
    const field = argInt(f, 0);
    if (isMissing(s) || delim === null || field < 1) return '';
    return asText(s).split(delim)[field - 1] ?? '';
  },
  cut_space: (_c, s, f) => {
    const field = argInt(f, 0);
    if (isMissing(s) || field < 1) return '';
    return fields(asText(s))[field - 1] ?? '';
  },
  normalize_path: (_c, s) => (isMissing(s) ? '' : asText(s).replace(/[/|:\\*?"<>]/g, '_')),
  get_target_space: (_c, s) => (isMissing(s) ? '' : targetSpaceName(asText(s))),
  normal_path: (_c, s) => (isMissing(s) ? '' : targetSpaceName(asText(s))),
  clean_sub: (_c, p, t) => {
    const path = argStr(p);
    if (path === null) return false;
    const lines = nonBlankLines(path);
    if (lines === null) return false;
    const target = (argStr(t) ?? '').toLowerCase().replace(/^\*\./, '');
    const seen = new Set<string>();
    for (const line of lines) {
      const host = cleanHost(line);
      if (!host) continue;
      if (target && host !== target && !host.endsWith(`.${target}`)) continue;
      seen.add(host);
    }
    return writeText(path, linesText([...seen]));
  },
};
