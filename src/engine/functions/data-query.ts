/**
 * Data query functions (reference §10.2 "data_query"): a jq subset, no external binary.
 *
 * Supported: pipelines `a | b`; `.`; field access `.a.b`, `."a-b"`, `.["a"]`; indexes `.[0]`,
 * `.a[-1]`; iteration `.[]`, `.a[]`, `.a[].b`; optional `?` after any step; the builtins `keys`
 * and `length`. Anything else is an invalid query (→ ""). One result → that value; several →
 * an array of them; none → ""; a runtime error → "error: <message>".
 */
import type { FnImpl } from './registry.js';
import { argStr, readText } from './helpers.js';

type Step = { kind: 'field'; name: string; opt: boolean } | { kind: 'index'; index: number; opt: boolean } | { kind: 'iter'; opt: boolean };
type Term = { kind: 'path'; steps: Step[] } | { kind: 'keys' } | { kind: 'length' };

class JqError extends Error {}

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/** Parses one pipeline term, or null when outside the subset. */
function parseTerm(src: string): Term | null {
  const t = src.trim();
  if (t === 'keys') return { kind: 'keys' };
  if (t === 'length') return { kind: 'length' };
  if (!t.startsWith('.')) return null;
  const steps: Step[] = [];
  let i = 1;
  const optional = () => {
    if (t[i] === '?') {
      i++;
      return true;
    }
    return false;
  };
  const ident = /^[A-Za-z_][A-Za-z0-9_]*/;
  const quoted = /^"((?:[^"\\]|\\.)*)"/;
  if (t.length > 1 && t[1] !== '[') {
    const m = ident.exec(t.slice(1)) ?? quoted.exec(t.slice(1));
    if (!m) return null;
    i += m[0].length;
    steps.push({ kind: 'field', name: m[0].startsWith('"') ? (JSON.parse(m[0]) as string) : m[0], opt: optional() });
  }
  while (i < t.length) {
    if (t[i] === '.') {
      const rest = t.slice(i + 1);
      if (rest.startsWith('[')) {
        i++;
        continue;
      }
      const m = ident.exec(rest) ?? quoted.exec(rest);
      if (!m) return null;
      i += 1 + m[0].length;
      steps.push({ kind: 'field', name: m[0].startsWith('"') ? (JSON.parse(m[0]) as string) : m[0], opt: optional() });
    } else if (t[i] === '[') {
      const close = t.indexOf(']', i);
      if (close < 0) return null;
      const inner = t.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '') steps.push({ kind: 'iter', opt: optional() });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner), opt: optional() });
      else if (quoted.test(inner) && quoted.exec(inner)![0] === inner) steps.push({ kind: 'field', name: JSON.parse(inner) as string, opt: optional() });
      else return null;
    } else return null;
  }
  return { kind: 'path', steps };
}

/** Parses a pipeline, or null when any term is outside the subset. */
export function parseJq(query: string): Term[] | null {
  const terms = query.split('|').map(parseTerm);
  return terms.some((t) => t === null) ? null : (terms as Term[]);
}

/** Applies one step to every input. */
function applyStep(inputs: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of inputs) {
    try {
      if (step.kind === 'field') {
        if (v === null) out.push(null);
        else if (typeof v === 'object' && !Array.isArray(v)) out.push(Object.prototype.hasOwnProperty.call(v, step.name) ? (v as Record<string, unknown>)[step.name] : null);
        else throw new JqError(`Cannot index ${typeName(v)} with "${step.name}"`);
      } else if (step.kind === 'index') {
        if (v === null) out.push(null);
        else if (Array.isArray(v)) out.push(v[step.index < 0 ? v.length + step.index : step.index] ?? null);
        else throw new JqError(`Cannot index ${typeName(v)} with number`);
      } else if (Array.isArray(v)) out.push(...v);
      else if (v !== null && typeof v === 'object') out.push(...Object.values(v));
      else throw new JqError(`Cannot iterate over ${typeName(v)}${v === null ? '' : ` (${JSON.stringify(v)})`}`);
    } catch (err) {
      if (!step.opt) throw err;
    }
  }
  return out;
}

/** Runs a parsed pipeline on one input. */
export function runJq(terms: Term[], input: unknown): unknown[] {
  let values = [input];
  for (const term of terms) {
    if (term.kind === 'path') {
      for (const step of term.steps) values = applyStep(values, step);
    } else if (term.kind === 'keys') {
      values = values.map((v) => {
        if (Array.isArray(v)) return v.map((_x, i) => i);
        if (v !== null && typeof v === 'object') return Object.keys(v).sort();
        throw new JqError(`${typeName(v)} has no keys`);
      });
    } else {
      values = values.map((v) => {
        if (v === null) return 0;
        if (typeof v === 'string') return Array.from(v).length;
        if (Array.isArray(v)) return v.length;
        if (typeof v === 'object') return Object.keys(v).length;
        if (typeof v === 'number') return Math.abs(v);
        throw new JqError(`${typeName(v)} (${JSON.stringify(v)}) has no length`);
      });
    }
  }
  return values;
}

/** jq(json, query) semantics shared by both functions. */
function query(data: unknown, q: string): unknown {
  const terms = parseJq(q);
  if (!terms) return '';
  try {
    const results = runJq(terms, data);
    if (results.length === 0) return '';
    return results.length === 1 ? (results[0] ?? null) : results;
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

/** The data query functions, by snake_case name (aliases come from the catalogue). */
export const dataQueryFunctions: Record<string, FnImpl> = {
  jq: (_c, j, q) => {
    const q2 = argStr(q);
    if (q2 === null || j === undefined || j === null || j === '' || j === 'undefined') return '';
    let data: unknown = j;
    if (typeof j === 'string') {
      try {
        data = JSON.parse(j);
      } catch {
        data = j; // not JSON: queried as a raw string, as the reference
      }
    }
    return query(data, q2);
  },
  jq_from_file: (_c, p, q) => {
    const path = argStr(p);
    const q2 = argStr(q);
    if (path === null || q2 === null) return '';
    const text = readText(path);
    if (text === null) return '';
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      return `error: invalid JSON: ${(err as Error).message}`;
    }
    return query(data, q2);
  },
};
