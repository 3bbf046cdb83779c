/** PostgreSQL twin of src/store/migrations/017-owner-host-leases.ts (runs.owner_host, leases). */
export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
CREATE TABLE leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL DEFAULT '',
  expires_at  TEXT NOT NULL DEFAULT ''
);
`;
