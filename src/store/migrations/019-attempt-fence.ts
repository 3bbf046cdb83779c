/**
 * Workers writing straight into a shared database (issue 15): `runs.fence_attempt` is the attempt
 * of a distributed run now allowed to write its rows, and `store_meta` holds this database's
 * random identity (`store_id`), by which a worker recognises the master's database as its own.
 * On SQLite (never shared between machines) the fence is a plain column; the PostgreSQL twin adds
 * the triggers that enforce it (src/store/pg/migrations/019-attempt-fence.ts).
 */
export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN fence_attempt INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS store_meta (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL DEFAULT ''
);
INSERT OR IGNORE INTO store_meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
`;
