/**
 * No SQL above the store: outside src/store nothing reaches into the SQLite handle (`store.db`,
 * `.db.prepare(` …) or carries SQL text; every query is a repository method in src/store, so the
 * store can gain a second engine without hunting dialect through the code base.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/cli.js';

const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Direct use of the SQLite connection. */
const HANDLE = /\bstore\.db\b|\.db\.(prepare|exec|pragma|transaction|inTransaction)\b/;
/** SQL statements inside string literals or templates. */
const SQL = /['"`][^'"`\n]*\b(SELECT\s+[^'"`\n]*\bFROM\b|INSERT\s+(OR\s+\w+\s+)?INTO\b|DELETE\s+FROM\b|UPDATE\s+\w+\s+SET\b|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|TRIGGER)\b|DROP\s+(TABLE|INDEX)\b|ALTER\s+TABLE\b|PRAGMA\s+\w+)/;

/** Lines above the store that use the connection or carry SQL, as `file:line: text`. */
export function offenders(): string[] {
  const out: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(ROOT, file);
    if (rel.startsWith(join('src', 'store'))) continue;
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (HANDLE.test(line) || SQL.test(line)) out.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

describe('no SQL above src/store', () => {
  it('the patterns catch what they are meant to', () => {
    for (const bad of ["app.store.db.prepare('SELECT 1').get()", "x.db.exec('ROLLBACK')", '`SELECT asset_type AS k FROM asset_type_counts`', "'DELETE FROM runs'", "\"INSERT OR IGNORE INTO t\"", "'PRAGMA quick_check'"]) {
      expect(HANDLE.test(bad) || SQL.test(bad), bad).toBe(true);
    }
    for (const ok of ["'select a workflow from the list'", 'paths.db', "'the --where SQL condition'"]) expect(HANDLE.test(ok) || SQL.test(ok), ok).toBe(false);
  });

  it('no file outside src/store uses store.db or holds SQL text', () => {
    expect(offenders()).toEqual([]);
  });
});
