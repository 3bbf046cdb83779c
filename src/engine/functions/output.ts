/**
 * Output functions (reference §10.2 "output"; workflow-engine §2.7 for the jsonl_* rules).
 * JSONL and CSV files are streamed line by line; invalid JSON lines are skipped.
 */
import type { FnImpl } from './registry.js';
import { argList, argStr, asText, forEachLine, isMissing, LineWriter, readText, writeText } from './helpers.js';

/** Parses CSV text (RFC 4180: quotes, doubled quotes, embedded newlines). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** One CSV line with quoting where needed. */
export function csvLine(values: string[]): string {
  return values.map((v) => (/[",\r\n]/.test(v) || /^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',');
}

/** Parses a JSONL line into a plain object, or null. */
export function parseObjectLine(line: string): Record<string, unknown> | null {
  const t = line.trim();
  if (!t.startsWith('{')) return null;
  try {
    const v = JSON.parse(t) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Value at a dot path (`hash.body_sha256`); a literal key with dots wins when present. */
export function getPath(obj: unknown, path: string): unknown {
  if (obj && typeof obj === 'object' && !Array.isArray(obj) && Object.prototype.hasOwnProperty.call(obj, path)) {
    return (obj as Record<string, unknown>)[path];
  }
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** A cell for CSV/markdown: strings raw, nested values JSON, null as empty. */
export function cellText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Runs `body` with a writer on dest; false (and nothing half-claimed) on any error. */
function withWriter(dest: string, body: (w: LineWriter) => boolean): boolean {
  let w: LineWriter;
  try {
    w = new LineWriter(dest);
  } catch {
    return false;
  }
  try {
    return body(w);
  } catch {
    return false;
  } finally {
    try {
      w.close();
    } catch {
      // already reported through the return value
    }
  }
}

/** The output functions, by snake_case name (aliases come from the catalogue). */
export const outputFunctions: Record<string, FnImpl> = {
  save_content: (_c, content, p) => {
    const path = argStr(p);
    if (path === null || content === undefined || content === null) return false;
    return writeText(path, typeof content === 'string' ? content : cellText(content));
  },
  jsonl_to_csv: (_c, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null) return false;
    const header: string[] = [];
    const known = new Set<string>();
    const readable = forEachLine(src, (line) => {
      const obj = parseObjectLine(line);
      if (!obj) return;
      for (const k of Object.keys(obj)) {
        if (known.has(k)) continue;
        known.add(k);
        header.push(k);
      }
    });
    if (!readable) return false;
    return withWriter(dest, (w) => {
      if (header.length) w.write(csvLine(header));
      return forEachLine(src, (line) => {
        const obj = parseObjectLine(line);
        if (obj) w.write(csvLine(header.map((k) => cellText(obj[k]))));
      });
    });
  },
  csv_to_jsonl: (_c, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null) return false;
    const text = readText(src);
    if (text === null) return false;
    const [header, ...rows] = parseCsv(text);
    return withWriter(dest, (w) => {
      if (!header) return true;
      for (const r of rows) w.write(JSON.stringify(Object.fromEntries(header.map((h, i) => [h, r[i] ?? '']))));
      return true;
    });
  },
  jsonl_unique: (_c, s, d, f) => {
    const src = argStr(s);
    const dest = argStr(d);
    const fields = argList(f);
    if (src === null || dest === null || fields.length === 0) return false;
    const seen = new Set<string>();
    return withWriter(dest, (w) =>
      forEachLine(src, (line) => {
        const obj = parseObjectLine(line);
        if (!obj) return;
        const key = JSON.stringify(fields.map((k) => getPath(obj, k) ?? null));
        if (seen.has(key)) return;
        seen.add(key);
        w.write(line.trim());
      }),
    );
  },
  jsonl_filter: (_c, s, d, f) => {
    const src = argStr(s);
    const dest = argStr(d);
    const fields = argList(f);
    if (src === null || dest === null || fields.length === 0) return false;
    return withWriter(dest, (w) =>
      forEachLine(src, (line) => {
        const obj = parseObjectLine(line);
        if (!obj) return;
        const out: Record<string, unknown> = {};
        for (const k of fields) {
          const v = getPath(obj, k);
          if (v !== undefined) out[k] = v;
        }
        w.write(JSON.stringify(out));
      }),
    );
  },
  jsonl_rename_key: (_c, s, d, m) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || isMissing(m)) return false;
    const renames = new Map<string, string>();
    for (const pair of asText(m).split(',')) {
      const [from, to] = pair.split(':').map((x) => x.trim());
      if (from && to) renames.set(from, to);
    }
    if (renames.size === 0) return false;
    return withWriter(dest, (w) =>
      forEachLine(src, (line) => {
        const obj = parseObjectLine(line);
        if (!obj) return;
        // Rebuilt in the original key order so a renamed key keeps its position.
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(obj)) out[renames.get(k) ?? k] = v;
        w.write(JSON.stringify(out));
      }),
    );
  },
};
