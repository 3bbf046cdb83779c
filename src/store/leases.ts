/**
 * Named, expiring leases (migration 017): one holder at a time, taken when free or expired,
 * renewed by its holder, released by its holder. The scheduler's leader lease among daemons that
 * share one database uses it (src/distributed/scheduler-leader.ts). Expiry times are ISO strings
 * of the writers' clocks: the hosts sharing a database are assumed to keep their clocks in sync
 * (NTP) to well under a lease's length. The SQL is the same on both engines.
 */
import type { Db, StatementCache } from './sql.js';

export interface LeasesRepo {
  /** Takes `name` for `holder` (or renews it when `holder` has it) until now + ttlMs; true when held. */
  acquire(name: string, holder: string, ttlMs: number): boolean;
  /** The current holder of an unexpired lease, or null. */
  holder(name: string): string | null;
  /** Gives `name` up when `holder` has it; true when it did. */
  release(name: string, holder: string): boolean;
}

export const LEASE_ACQUIRE_SQL = `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE leases.holder = excluded.holder OR leases.expires_at < ?
  RETURNING holder`;
export const LEASE_HOLDER_SQL = 'SELECT holder FROM leases WHERE name = ? AND expires_at >= ?';
export const LEASE_RELEASE_SQL = 'DELETE FROM leases WHERE name = ? AND holder = ?';

/** The parameters of an acquire at `now`. */
export function leaseAcquireParams(name: string, holder: string, ttlMs: number, now = Date.now()): unknown[] {
  return [name, holder, new Date(now + ttlMs).toISOString(), new Date(now).toISOString()];
}

export function createLeasesRepo(_db: Db, q: StatementCache): LeasesRepo {
  return {
    acquire(name, holder, ttlMs) {
      const row = q(LEASE_ACQUIRE_SQL).get(...leaseAcquireParams(name, holder, ttlMs)) as { holder: string } | undefined;
      return row?.holder === holder;
    },
    holder(name) {
      const row = q(LEASE_HOLDER_SQL).get(name, new Date().toISOString()) as { holder: string } | undefined;
      return row?.holder ?? null;
    },
    release(name, holder) {
      return q(LEASE_RELEASE_SQL).run(name, holder).changes > 0;
    },
  };
}
