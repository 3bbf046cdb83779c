/** The leases of src/store/leases.ts on PostgreSQL (the same SQL). */
import type { Async } from '../../async.js';
import { LEASE_ACQUIRE_SQL, LEASE_HOLDER_SQL, LEASE_RELEASE_SQL, leaseAcquireParams, type LeasesRepo } from '../../leases.js';
import type { PgDb } from '../db.js';

export function createPgLeasesRepo(db: PgDb): Async<LeasesRepo> {
  return {
    async acquire(name, holder, ttlMs) {
      return (await db.one(LEASE_ACQUIRE_SQL, leaseAcquireParams(name, holder, ttlMs)))?.holder === holder;
    },
    async holder(name) {
      const row = await db.one(LEASE_HOLDER_SQL, [name, new Date().toISOString()]);
      return row ? String(row.holder) : null;
    },
    async release(name, holder) {
      return (await db.query(LEASE_RELEASE_SQL, [name, holder])).rowCount > 0;
    },
  };
}
