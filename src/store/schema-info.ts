/**
 * A normalised description of a schema (tables, columns, primary keys, indexes) that reads the
 * same for SQLite and PostgreSQL, so the two engines' migrations can be compared
 * (test/unit/store/pg-schema.test.ts). Column types are reduced to a family (int, real, text,
 * blob); indexes made by a UNIQUE column constraint are described by their columns (their names
 * are engine-made), every other index by its name, columns, uniqueness and whether it is partial.
 * Primary keys are compared as column lists, not as indexes (SQLite has none for a rowid key).
 */
import type { Db } from './sql.js';

export interface ColumnInfo {
  name: string;
  family: 'int' | 'real' | 'text' | 'blob' | string;
  notnull: boolean;
}

export interface IndexInfo {
  /** The index name, or `unique(col, …)` for one backing a UNIQUE column constraint. */
  key: string;
  columns: string[];
  unique: boolean;
  partial: boolean;
}

export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  primaryKey: string[];
  indexes: IndexInfo[];
}

/** Type family of a declared SQLite or PostgreSQL column type. */
export function typeFamily(declared: string): string {
  const t = declared.toLowerCase();
  if (/int|serial/.test(t)) return 'int';
  if (/real|double|float|numeric|decimal/.test(t)) return 'real';
  if (/char|text|clob|uuid|json/.test(t)) return 'text';
  if (/blob|bytea/.test(t)) return 'blob';
  return t;
}

/** Tables the engine keeps for itself and osm never defines. */
const SQLITE_INTERNAL = /^sqlite_/;

/** The schema of a SQLite database, tables sorted by name. */
export function sqliteSchemaInfo(db: Db): TableInfo[] {
  const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[])
    .map((t) => t.name)
    .filter((n) => !SQLITE_INTERNAL.test(n));
  return tables.map((table) => {
    const cols = db.prepare(`SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?) ORDER BY cid`).all(table) as { name: string; type: string; nn: number; pk: number }[];
    const primaryKey = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    const list = db.prepare(`SELECT name, "unique" AS u, origin, partial FROM pragma_index_list(?)`).all(table) as { name: string; u: number; origin: string; partial: number }[];
    const indexes: IndexInfo[] = [];
    for (const ix of list) {
      if (ix.origin === 'pk') continue;
      const columns = (db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).all(ix.name) as { name: string | null }[]).map((c) => c.name ?? '(expr)');
      indexes.push({ key: ix.origin === 'u' ? `unique(${columns.join(', ')})` : ix.name, columns, unique: ix.u === 1, partial: ix.partial === 1 });
    }
    indexes.sort((a, b) => a.key.localeCompare(b.key));
    return {
      name: table,
      // A rowid primary key is NOT NULL in effect though SQLite reports notnull 0.
      columns: cols.map((c) => ({ name: c.name, family: typeFamily(c.type), notnull: c.nn === 1 || c.pk > 0 })),
      primaryKey,
      indexes,
    };
  });
}
