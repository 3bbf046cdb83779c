/**
 * How long database work may wait for a database that blinked (a PostgreSQL restart or
 * failover). API requests wait for nothing: they answer 503 at once. A run in flight waits: every
 * store call made while it executes (its async context) retries, for up to RUN_WRITE_PATIENCE_MS,
 * the work the server is known not to have applied (src/store/pg/db.ts), so no run is marked
 * failed only because the database was away for a moment. SQLite never blinks and ignores it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const patience = new AsyncLocalStorage<number>();

/** Retry window of a run's database writes (ms); OSM_DB_RETRY_MS overrides it. */
export const RUN_WRITE_PATIENCE_MS = Number(process.env.OSM_DB_RETRY_MS) > 0 ? Number(process.env.OSM_DB_RETRY_MS) : 120_000;

/** Runs `fn` with store calls in its async context waiting up to `ms` for the database. */
export function withPatience<T>(ms: number, fn: () => T): T {
  return patience.run(ms, fn);
}

/** The retry window of the current async context (0 outside withPatience). */
export function currentPatience(): number {
  return patience.getStore() ?? 0;
}
