/**
 * The runtime store (daemon, runs, queue, scheduler) is SQLite-only for now. With
 * `database.db_engine: postgresql` the commands that would run on it refuse to start instead of
 * silently using the SQLite base, naming the PostgreSQL server, whether it answers (and why not)
 * and what to do.
 */
import { errors } from '../../errors.js';
import { dbEngineOf, pgTargetFromSettings, type DatabaseSettings } from './config.js';
import { probePg } from './pool.js';

/** Throws (exit non-zero) when the settings select PostgreSQL; `what` names the command. */
export async function refuseUnsupportedEngine(db: DatabaseSettings, what: string): Promise<void> {
  if (dbEngineOf(db) !== 'postgresql') return;
  const target = pgTargetFromSettings(db);
  const probe = await probePg(target);
  const state = probe.reachable ? `reachable (server ${probe.version})` : `not reachable: ${probe.cause}`;
  throw errors.unavailable(
    `${what} cannot start: database.db_engine is postgresql (PostgreSQL at ${probe.address}, ${target.display}, ${state}), ` +
      'but the runtime store on PostgreSQL is not available yet and osm will not silently use SQLite instead. ' +
      'Set database.db_engine to sqlite (and unset OSM_DATABASE_URL) to run on the SQLite base; ' +
      'use `osm db copy --to <postgres url>` / `--from <postgres url>` to move the data between the engines (docs/database.md).',
  );
}
