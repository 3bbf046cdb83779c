/**
 * Applies numbered migrations. Each runs in its own IMMEDIATE transaction that re-checks the
 * recorded version first, so two processes opening the same new database cannot both apply it.
 */
import { errors } from '../errors.js';
import { migrations as allMigrations, type Migration } from './migrations/index.js';
import type { Db } from './sql.js';

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version     INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  applied_at  TEXT NOT NULL
)`;

/** The highest applied migration version (0 for an empty database). */
export function schemaVersion(db: Db): number {
  const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
  if (!exists) return 0;
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/** Migrations of `list` not recorded in the database (an empty or new database: all of them). */
export function pendingMigrations(db: Db, list: readonly Migration[] = allMigrations): Migration[] {
  const has = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
  if (!has) return [...list];
  const done = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => Number(r.version)));
  return list.filter((m) => !done.has(m.version));
}

/** The version the given migration list brings a database to. */
export function latestVersion(list: readonly Migration[] = allMigrations): number {
  return list.length > 0 ? list[list.length - 1]!.version : 0;
}

/**
 * Applies every migration not yet recorded in `schema_migrations` (not only those above the highest:
 * migrations written on parallel branches may land out of order); returns the versions applied.
 */
export function applyMigrations(db: Db, list: readonly Migration[] = allMigrations): number[] {
  checkOrder(list);
  const current = schemaVersion(db);
  if (current > latestVersion(list)) {
    throw errors.unavailable(`database schema version ${current} is newer than this osm supports (${latestVersion(list)}); upgrade osm`);
  }
  db.exec(CREATE_TABLE);
  const applied: number[] = [];
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  let scrubbed = false;
  const done = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => Number(r.version)));
  for (const m of list) {
    if (done.has(m.version)) continue;
    // secure_delete zeroes what the migration deletes instead of leaving it in free space.
    const secureBefore = m.scrub ? db.pragma('secure_delete', { simple: true }) : undefined;
    if (m.scrub) db.pragma('secure_delete = ON');
    try {
      const ran = db
        .transaction(() => {
          if (isApplied.get(m.version)) return false;
          db.exec(m.sql);
          m.run?.(db);
          record.run(m.version, m.name, new Date().toISOString());
          return true;
        })
        .immediate();
      if (ran) applied.push(m.version);
      scrubbed ||= Boolean(ran && m.scrub);
    } finally {
      if (m.scrub) db.pragma(`secure_delete = ${Number(secureBefore) ? 'ON' : 'OFF'}`);
    }
  }
  // Older copies of the pages stay in the WAL until it is reset: truncate it (best effort, a
  // reader of another process may hold it; the frames are overwritten as the WAL is reused).
  if (scrubbed) db.pragma('wal_checkpoint(TRUNCATE)');
  return applied;
}

function checkOrder(list: readonly Migration[]): void {
  let previous = 0;
  for (const m of list) {
    if (!Number.isInteger(m.version) || m.version <= previous) {
      throw errors.internal(`migration versions must be increasing integers (got ${m.version} after ${previous})`);
    }
    previous = m.version;
  }
}
