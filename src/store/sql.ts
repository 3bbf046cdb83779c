/**
 * Small helpers every repository shares: a per-store statement cache, JSON/boolean column
 * conversion, LIKE escaping and the list-with-total query.
 */
import type Database from 'better-sqlite3';
import type { ListResult, Page } from './types.js';
import { errors } from '../errors.js';

export type Db = Database.Database;
export type Row = Record<string, unknown>;

/** Returns the prepared statement for `sql`, preparing it on first use only. */
export type StatementCache = (sql: string) => Database.Statement;

/** A statement cache bound to one connection, so each distinct SQL text is prepared once per store. */
export function statementCache(db: Db): StatementCache {
  const cache = new Map<string, Database.Statement>();
  return (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

/** The current time as stored in every timestamp column. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** Parses a JSON column, falling back when the text is empty or corrupt (rows may come from imports). */
export function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string' || text === '') return fallback;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(fallback)) return (Array.isArray(value) ? value : fallback) as T;
    if (fallback !== null && typeof fallback === 'object') {
      return (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : fallback) as T;
    }
    return value as T;
  } catch {
    return fallback;
  }
}

/** A string array from a JSON column; non-string items are dropped. */
export function parseStringArray(text: unknown): string[] {
  return parseJson<unknown[]>(text, []).filter((v): v is string => typeof v === 'string');
}

/** SQLite has no boolean type and better-sqlite3 refuses JS booleans as parameters. */
export function bit(value: boolean | undefined | null): 0 | 1 {
  return value ? 1 : 0;
}

/** Longest text a substring filter takes (SQLite refuses LIKE patterns over 50 000 bytes). */
export const MAX_FILTER_TEXT = 1000;

/**
 * A `%substring%` LIKE pattern with the wildcards of `text` escaped (use with `ESCAPE '\'`).
 * Text longer than MAX_FILTER_TEXT characters is a 400 (it would be a database error otherwise).
 */
export function likeContains(text: string): string {
  if (text.length > MAX_FILTER_TEXT) throw errors.validation(`Filter text is too long: ${text.length} characters (at most ${MAX_FILTER_TEXT})`);
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Offset and limit as non-negative integers (SQLite treats a negative LIMIT as "no limit"). */
export function normalizePage(page: Page): Page {
  const clean = (n: number) => (Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0);
  return { offset: clean(page.offset), limit: clean(page.limit) };
}

/** A WHERE clause being built from optional filters, with positional parameters. */
export class Where {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Adds `clause` (with `?` placeholders) and its parameters. */
  add(clause: string, ...params: unknown[]): this {
    this.clauses.push(clause);
    this.params.push(...params);
    return this;
  }

  /** Adds `column = ?` when `value` is defined. */
  eq(column: string, value: unknown): this {
    if (value !== undefined && value !== null) this.add(`${column} = ?`, value);
    return this;
  }

  /** Adds `column IN (…)` when `values` is non-empty. */
  in(column: string, values: readonly unknown[] | undefined): this {
    if (values && values.length > 0) this.add(`${column} IN (${values.map(() => '?').join(', ')})`, ...values);
    return this;
  }

  /**
   * Adds `column = ?` for one value or `column IN (…)` for a list; unlike `in`, an empty list
   * matches nothing (it is a set of allowed values, not an absent filter). Nothing for undefined.
   */
  oneOf(column: string, value: string | readonly string[] | undefined): this {
    if (value === undefined) return this;
    if (typeof value === 'string') return this.add(`${column} = ?`, value);
    if (value.length === 0) return this.add('1 = 0');
    return value.length === 1 ? this.add(`${column} = ?`, value[0]) : this.add(`${column} IN (${value.map(() => '?').join(', ')})`, ...value);
  }

  /** The `WHERE …` text, or '' when there is no filter. */
  toString(): string {
    return this.clauses.length > 0 ? `WHERE ${this.clauses.join(' AND ')}` : '';
  }

  get empty(): boolean {
    return this.clauses.length === 0;
  }
}

/**
 * Runs `fn` inside the caller's transaction when there is one, else in a new IMMEDIATE one.
 * Deliberately not a savepoint: inserting many rows under a SAVEPOINT gets slower as the table
 * grows (bench/03-ingest measured 100,000 nuclei findings in 616 s nested vs 10 s without).
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.inTransaction ? fn() : db.transaction(fn).immediate();
}

export interface ListSpec<T> {
  table: string;
  where: Where;
  orderBy: string;
  map: (row: Row) => T;
  /** A cheaper exact total (e.g. from the counters table); used when given. */
  total?: () => number;
}

/** From this offset on, pages are read with a deferred join (see listPage). */
export const DEFERRED_JOIN_OFFSET = 200;

/** Runs the page query and its COUNT in one read transaction, so both see the same snapshot. */
export function listPage<T>(db: Db, q: StatementCache, spec: ListSpec<T>, page: Page): ListResult<T> {
  const { offset, limit } = normalizePage(page);
  const where = spec.where.toString();
  return db.transaction(() => {
    const total = spec.total
      ? spec.total()
      : Number((q(`SELECT COUNT(*) AS n FROM ${spec.table} ${where}`).get(...spec.where.params) as { n: number }).n);
    // Deep pages skip rows in the index only (the inner SELECT reads no table rows), then fetch
    // just the page: OFFSET 20000 costs an index walk instead of 20000 row reads.
    const sql =
      offset >= DEFERRED_JOIN_OFFSET
        ? `SELECT * FROM ${spec.table} WHERE rowid IN (SELECT rowid FROM ${spec.table} ${where} ORDER BY ${spec.orderBy} LIMIT ? OFFSET ?) ORDER BY ${spec.orderBy}`
        : `SELECT * FROM ${spec.table} ${where} ORDER BY ${spec.orderBy} LIMIT ? OFFSET ?`;
    const rows = limit === 0 ? [] : (q(sql).all(...spec.where.params, limit, offset) as Row[]);
    return { data: rows.map(spec.map), total };
  })();
}

/**
 * An integer from untrusted input (tool output), 0 when it is not a finite number. Held within
 * ±(2^53 − 1): beyond that an integer is not exact in JavaScript, and PostgreSQL's BIGINT refuses
 * a value such as 1e308 (the whole import would fail, on either engine's copy of the rows).
 */
export function toInt(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return 0;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(Number.MIN_SAFE_INTEGER, Math.trunc(n)));
}

/**
 * A string from untrusted input: objects become JSON text, null/undefined become ''. NUL
 * characters are dropped: PostgreSQL's text cannot hold them, and both engines keep the same
 * values.
 */
export function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return withoutNulChars(typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** `s` without NUL characters, which PostgreSQL's text cannot hold (the same string when it has none). */
export function withoutNulChars(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/** A string array from untrusted input: arrays keep their string items, a comma list is split. */
export function toStringArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined && v !== '').map((v) => toText(v));
  if (typeof value === 'string' && value.trim() !== '') return value.split(',').map((s) => s.trim()).filter(Boolean);
  return [];
}
