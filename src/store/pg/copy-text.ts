/**
 * PostgreSQL's COPY text format (`COPY … FROM STDIN` / `TO STDOUT` without options): one row per
 * line, values separated by tabs, NULL as `\N`, and backslash, tab, newline, carriage return,
 * backspace, form feed and vertical tab escaped with a backslash. Used by `osm db copy`
 * (../copy.ts) and by the bulk import's COPY of new rows (./bulk.ts).
 */
import { withoutNulChars } from '../sql.js';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
const UNESCAPES: Record<string, string> = { '\\': '\\', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
const SPECIAL = /[\\\b\f\n\r\t\v]/;
const SPECIALS = /[\\\b\f\n\r\t\v]/g;

/**
 * A text value escaped for the COPY text format (most values have nothing to escape: no copy is
 * made). NUL characters are dropped: PostgreSQL's text cannot hold them (see db.ts withoutNul).
 */
export function copyText(s: string): string {
  const t = withoutNulChars(s);
  return SPECIAL.test(t) ? t.replace(SPECIALS, (c) => ESCAPES[c]!) : t;
}

/** One value as PostgreSQL's COPY text format writes it. */
export function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (Buffer.isBuffer(v)) return `\\\\x${v.toString('hex')}`;
  return copyText(String(v));
}

/** One row as a COPY text line (without the newline). */
export function copyLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i ? '\t' : '') + copyValue(values[i]);
  return line;
}

/** Splits a COPY text line into values (null for \N); `numeric[i]` turns column i into a number. */
export function parseCopyLine(line: string, numeric: readonly boolean[]): unknown[] {
  return line.split('\t').map((field, i) => {
    if (field === '\\N') return null;
    const text = field.includes('\\') ? field.replace(/\\(.)/g, (_, c: string) => UNESCAPES[c] ?? c) : field;
    return numeric[i] ? Number(text) : text;
  });
}
