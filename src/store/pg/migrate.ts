/**
 * Applies the PostgreSQL migrations. Each runs in its own transaction holding a transaction-level
 * advisory lock, and re-checks `schema_migrations` under it, so two processes migrating the same
 * new database cannot both apply a version.
 */
import { errors } from '../../errors.js';
import { pgMigrations, type PgMigration } from './migrations/index.js';
import { checkout, type PgPool } from './pool.js';

/** Arbitrary constant: the advisory lock key osm's migrations take. */
const MIGRATION_LOCK = 0x6f736d01;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     BIGINT PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  TEXT NOT NULL
)`;

/** The highest applied version (0 for an empty database). */
export async function pgSchemaVersion(pool: PgPool): Promise<number> {
  const exists = await pool.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`);
  if (exists.rowCount === 0) return 0;
  const r = await pool.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
  return Number(r.rows[0]?.v ?? 0);
}

/** Migrations of `list` not recorded in the PostgreSQL database. */
export async function pgPendingMigrations(pool: PgPool, list: readonly PgMigration[] = pgMigrations): Promise<PgMigration[]> {
  const exists = await pool.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`);
  if (exists.rowCount === 0) return [...list];
  const r = await pool.query<{ version: string | number }>('SELECT version FROM schema_migrations');
  const done = new Set(r.rows.map((x) => Number(x.version)));
  return list.filter((m) => !done.has(m.version));
}

export function pgLatestVersion(list: readonly PgMigration[] = pgMigrations): number {
  return list.length > 0 ? list[list.length - 1]!.version : 0;
}

/** Applies every migration not yet recorded (as the SQLite runner does); returns the versions applied. */
export async function applyPgMigrations(pool: PgPool, list: readonly PgMigration[] = pgMigrations): Promise<number[]> {
  const current = await pgSchemaVersion(pool);
  if (current > pgLatestVersion(list)) {
    throw errors.unavailable(`PostgreSQL schema version ${current} is newer than this osm supports (${pgLatestVersion(list)}); upgrade osm`);
  }
  const applied: number[] = [];
  const { client, release } = await checkout(pool);
  try {
    await client.query(CREATE_TABLE);
    const recorded = await client.query<{ version: string | number }>('SELECT version FROM schema_migrations');
    const done = new Set(recorded.rows.map((r) => Number(r.version)));
    for (const m of list) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
        await client.query(CREATE_TABLE);
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
        if (done.rowCount === 0) {
          await client.query(m.sql);
          await m.run?.(client);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
          applied.push(m.version);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw errors.internal(`PostgreSQL migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
      }
    }
  } finally {
    release();
  }
  return applied;
}
