/**
 * Runs record the host of their owning process next to its PID (`owner_host`): several daemons on
 * different machines share one PostgreSQL database, and a PID only means something on its own
 * host, so start-up reconciliation leaves other hosts' runs alone. `leases` holds named,
 * expiring leases (the scheduler's leader lease among daemons sharing a database).
 */
export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL DEFAULT '',
  expires_at  TEXT NOT NULL DEFAULT ''
);
`;
