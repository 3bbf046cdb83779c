/** The schema of a PostgreSQL database in the engine-neutral form of src/store/schema-info.ts. */
import { typeFamily, type IndexInfo, type TableInfo } from '../schema-info.js';
import type { PgPool } from './pool.js';

export async function pgSchemaInfo(pool: PgPool): Promise<TableInfo[]> {
  const tables = (await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  )).rows.map((r) => r.name);
  const cols = (await pool.query<{ t: string; name: string; type: string; nullable: string }>(
    `SELECT table_name AS t, column_name AS name, data_type AS type, is_nullable AS nullable
     FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  )).rows;
  const pks = (await pool.query<{ t: string; cols: string[] }>(
    `SELECT t.relname AS t, array_agg(a.attname::text ORDER BY k.ord) AS cols
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
     CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE c.contype = 'p' AND n.nspname = current_schema() GROUP BY t.relname`,
  )).rows;
  const idx = (await pool.query<{ name: string; t: string; uniq: boolean; primary: boolean; partial: boolean; constraint_unique: boolean; cols: (string | null)[] }>(
    `SELECT i.relname AS name, t.relname AS t, ix.indisunique AS uniq, ix.indisprimary AS primary, ix.indpred IS NOT NULL AS partial,
       EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid AND c.contype = 'u') AS constraint_unique,
       (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
          LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0) AS cols
     FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema()`,
  )).rows;
  return tables.map((table) => {
    const indexes: IndexInfo[] = idx
      .filter((i) => i.t === table && !i.primary)
      .map((i) => {
        const columns = i.cols.map((c) => c ?? '(expr)');
        return { key: i.constraint_unique ? `unique(${columns.join(', ')})` : i.name, columns, unique: i.uniq, partial: i.partial };
      })
      .sort((a, b) => a.key.localeCompare(b.key));
    return {
      name: table,
      columns: cols.filter((c) => c.t === table).map((c) => ({ name: c.name, family: typeFamily(c.type), notnull: c.nullable === 'NO' })),
      primaryKey: pks.find((p) => p.t === table)?.cols ?? [],
      indexes,
    };
  });
}
