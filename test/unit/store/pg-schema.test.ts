/**
 * The PostgreSQL migrations (src/store/pg/migrations) build the same schema as the SQLite ones:
 * every SQLite version has a twin of the same name, and after applying both lists the two
 * databases have the same tables, columns (name, type family, NOT NULL), primary keys and indexes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../../src/store/migrations/index.js';
import { pgMigrations } from '../../../src/store/pg/migrations/index.js';
import { applyPgMigrations, pgSchemaVersion } from '../../../src/store/pg/migrate.js';
import { openPgPool, type PgPool } from '../../../src/store/pg/pool.js';
import { pgTarget } from '../../../src/store/pg/config.js';
import { pgSchemaInfo } from '../../../src/store/pg/schema-info.js';
import { sqliteSchemaInfo, type TableInfo } from '../../../src/store/schema-info.js';
import { fileStore } from './helpers.js';
import { createPgDatabase, pgAvailable, type PgDatabase } from '../../helpers/pg.js';

const available = await pgAvailable('pg-schema tests');

/** Every difference between two schemas, as readable lines (empty when they match). */
function schemaDiff(a: TableInfo[], b: TableInfo[]): string[] {
  const out: string[] = [];
  const byName = (l: TableInfo[]) => new Map(l.map((t) => [t.name, t]));
  const A = byName(a);
  const B = byName(b);
  for (const name of new Set([...A.keys(), ...B.keys()])) {
    const x = A.get(name);
    const y = B.get(name);
    if (!x || !y) {
      out.push(`table ${name}: only in ${x ? 'sqlite' : 'postgresql'}`);
      continue;
    }
    const cx = new Map(x.columns.map((c) => [c.name, c]));
    const cy = new Map(y.columns.map((c) => [c.name, c]));
    for (const c of new Set([...cx.keys(), ...cy.keys()])) {
      const l = cx.get(c);
      const r = cy.get(c);
      if (!l || !r) out.push(`${name}.${c}: only in ${l ? 'sqlite' : 'postgresql'}`);
      else if (l.family !== r.family || l.notnull !== r.notnull) out.push(`${name}.${c}: sqlite ${l.family}${l.notnull ? ' not null' : ''} vs postgresql ${r.family}${r.notnull ? ' not null' : ''}`);
    }
    if (x.primaryKey.join(',') !== y.primaryKey.join(',')) out.push(`${name} primary key: sqlite (${x.primaryKey}) vs postgresql (${y.primaryKey})`);
    const ix = new Map(x.indexes.map((i) => [i.key, i]));
    const iy = new Map(y.indexes.map((i) => [i.key, i]));
    for (const k of new Set([...ix.keys(), ...iy.keys()])) {
      const l = ix.get(k);
      const r = iy.get(k);
      if (!l || !r) out.push(`${name} index ${k}: only in ${l ? 'sqlite' : 'postgresql'}`);
      else if (JSON.stringify(l) !== JSON.stringify(r)) out.push(`${name} index ${k}: sqlite ${JSON.stringify(l)} vs postgresql ${JSON.stringify(r)}`);
    }
  }
  return out;
}

describe('PostgreSQL migrations mirror the SQLite ones', () => {
  it('every SQLite migration has a PostgreSQL twin with the same version and name', () => {
    expect(pgMigrations.map((m) => `${m.version}-${m.name}`)).toEqual(migrations.map((m) => `${m.version}-${m.name}`));
  });

  it('schemaDiff reports a missing column, a type change and a missing index', () => {
    const base: TableInfo = { name: 't', columns: [{ name: 'a', family: 'int', notnull: true }], primaryKey: ['a'], indexes: [{ key: 'idx_t', columns: ['a'], unique: false, partial: false }] };
    expect(schemaDiff([base], [base])).toEqual([]);
    expect(schemaDiff([base], [{ ...base, columns: [...base.columns, { name: 'b', family: 'text', notnull: false }] }])).toEqual(['t.b: only in postgresql']);
    expect(schemaDiff([base], [{ ...base, columns: [{ name: 'a', family: 'text', notnull: true }] }])).toHaveLength(1);
    expect(schemaDiff([base], [{ ...base, indexes: [] }])).toEqual(['t index idx_t: only in sqlite']);
  });

  describe.skipIf(!available)('applied to real databases', () => {
    let db: PgDatabase;
    let pool: PgPool;
    beforeAll(async () => {
      db = await createPgDatabase();
      pool = openPgPool(pgTarget(db.url));
    });
    afterAll(async () => {
      await pool?.end();
      await db?.drop();
    });

    it('gives the same tables, columns, primary keys and indexes', async () => {
      const applied = await applyPgMigrations(pool);
      expect(applied).toEqual(pgMigrations.map((m) => m.version));
      expect(await pgSchemaVersion(pool)).toBe(migrations[migrations.length - 1]!.version);
      expect(await applyPgMigrations(pool)).toEqual([]);
      const { store } = fileStore();
      const sqlite = sqliteSchemaInfo(store.db).filter((t) => t.name !== 'sqlite_sequence');
      const postgres = await pgSchemaInfo(pool);
      expect(sqlite.length).toBeGreaterThan(20);
      expect(schemaDiff(sqlite, postgres)).toEqual([]);
    });

    it('the PostgreSQL triggers keep the counters exact', async () => {
      await pool.query(`INSERT INTO assets (workspace, asset_value, status_code, asset_type, created_at, updated_at, last_seen_at) VALUES ('w1', 'a.example', 200, 'subdomain', 'x', 'x', 'x'), ('w1', 'b.example', 404, 'subdomain', 'x', 'x', 'x')`);
      await pool.query(`INSERT INTO vulnerabilities (workspace, severity, created_at, updated_at, last_seen_at) VALUES ('w1', 'high', 'x', 'x', 'x')`);
      await pool.query(`UPDATE vulnerabilities SET severity = 'low'`);
      await pool.query(`DELETE FROM assets WHERE asset_value = 'b.example'`);
      const ws = (await pool.query(`SELECT total_assets, total_vulns, vuln_high, vuln_low FROM workspaces WHERE name = 'w1'`)).rows[0];
      expect(ws).toEqual({ total_assets: 1, total_vulns: 1, vuln_high: 0, vuln_low: 1 });
      const counters = Object.fromEntries((await pool.query<{ name: string; value: number }>('SELECT name, value FROM counters')).rows.map((r) => [r.name, r.value]));
      expect(counters).toMatchObject({ 'assets.total': 1, 'vulns.total': 1, 'vulns.high': 0, 'vulns.low': 1 });
      const facets = (await pool.query('SELECT status_code, n FROM asset_status_counts ORDER BY status_code')).rows;
      expect(facets).toEqual([{ status_code: 200, n: 1 }, { status_code: 404, n: 0 }]);
      // Multi-row statements of every kind (statement triggers, migration 018): moves between
      // workspaces, status and type changes, severity changes, updates that change nothing
      // counted, bulk deletes — the counters equal COUNT(*) after each.
      const exact = async () => {
        const c = Object.fromEntries((await pool.query<{ name: string; value: number }>('SELECT name, value FROM counters')).rows.map((r) => [r.name, Number(r.value)]));
        expect(c['assets.total']).toBe(Number((await pool.query('SELECT COUNT(*) AS n FROM assets')).rows[0].n));
        expect(c['vulns.total']).toBe(Number((await pool.query('SELECT COUNT(*) AS n FROM vulnerabilities')).rows[0].n));
        for (const sev of ['critical', 'high', 'medium', 'low', 'info']) expect(c[`vulns.${sev}`], sev).toBe(Number((await pool.query('SELECT COUNT(*) AS n FROM vulnerabilities WHERE severity = $1', [sev])).rows[0].n));
        const wsRows = (await pool.query('SELECT name, total_assets, total_vulns, vuln_high, vuln_low FROM workspaces ORDER BY name')).rows;
        for (const w of wsRows) {
          expect(Number(w.total_assets), w.name).toBe(Number((await pool.query('SELECT COUNT(*) AS n FROM assets WHERE workspace = $1', [w.name])).rows[0].n));
          expect(Number(w.total_vulns), w.name).toBe(Number((await pool.query('SELECT COUNT(*) AS n FROM vulnerabilities WHERE workspace = $1', [w.name])).rows[0].n));
          expect(Number(w.vuln_high), w.name).toBe(Number((await pool.query(`SELECT COUNT(*) AS n FROM vulnerabilities WHERE workspace = $1 AND severity = 'high'`, [w.name])).rows[0].n));
        }
        const bad = await pool.query(`SELECT c.workspace, c.status_code, c.n, (SELECT COUNT(*) FROM assets a WHERE a.workspace = c.workspace AND a.status_code = c.status_code) AS real
          FROM asset_status_counts c WHERE c.n <> (SELECT COUNT(*) FROM assets a WHERE a.workspace = c.workspace AND a.status_code = c.status_code)`);
        expect(bad.rows).toEqual([]);
        const missing = await pool.query(`SELECT workspace, asset_type FROM assets a GROUP BY workspace, asset_type
          HAVING COUNT(*) <> COALESCE((SELECT n FROM asset_type_counts t WHERE t.workspace = a.workspace AND t.asset_type = a.asset_type), -1)`);
        expect(missing.rows).toEqual([]);
      };
      const many = Array.from({ length: 300 }, (_, i) => `('w${i % 3}', 'h${i}.example', ${[200, 301, 404][i % 3]}, '${['subdomain', 'url'][i % 2]}', 'x', 'x', 'x')`).join(', ');
      await pool.query(`INSERT INTO assets (workspace, asset_value, status_code, asset_type, created_at, updated_at, last_seen_at) VALUES ${many}`);
      const vulns = Array.from({ length: 120 }, (_, i) => `('w${i % 4}', '${['critical', 'high', 'medium', 'low', 'info'][i % 5]}', 'x', 'x', 'x')`).join(', ');
      await pool.query(`INSERT INTO vulnerabilities (workspace, severity, created_at, updated_at, last_seen_at) VALUES ${vulns}`);
      await exact();
      await pool.query(`UPDATE assets SET workspace = 'w9' WHERE asset_value LIKE 'h1%'`);
      await exact();
      await pool.query(`UPDATE assets SET status_code = 500, asset_type = 'ip' WHERE asset_value LIKE 'h2%'`);
      await pool.query(`UPDATE assets SET last_seen_at = 'y'`);
      await exact();
      await pool.query(`UPDATE vulnerabilities SET severity = 'high', workspace = 'w7' WHERE id % 3 = 0`);
      await pool.query(`UPDATE vulnerabilities SET last_seen_at = 'y'`);
      await exact();
      await pool.query(`DELETE FROM assets WHERE asset_value LIKE 'h3%'`);
      await pool.query(`DELETE FROM vulnerabilities WHERE severity = 'info'`);
      await exact();
      // Case-insensitive uniqueness, as COLLATE NOCASE in SQLite.
      await expect(pool.query(`INSERT INTO orgs (uuid, name, created_at, updated_at) VALUES ('u2', 'DEFAULT', 'x', 'x')`)).rejects.toThrow(/duplicate key/);
    });
  });
});
