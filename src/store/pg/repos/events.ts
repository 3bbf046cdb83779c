/** The `event_logs` table on PostgreSQL (statements shared with src/store/events.ts). */
import type { Async } from '../../async.js';
import { eventImportValues, eventInsertManyParams, eventInsertManySql, eventInsertValues, eventListWhere, EVENT_IMPORT_SQL, EVENT_INSERT_SQL, mapEvent, type EventsRepo } from '../../events.js';
import { nowIso } from '../../sql.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

/** Events per multi-row INSERT of insertMany (14 parameters each; PostgreSQL allows 65535 per statement). */
const MANY_CHUNK = 1000;
/** Arbitrary constant: the advisory lock (with the run's hash) serialising imports of one run's events. */
const EVENT_IMPORT_LOCK = 0x6f736d02;

export function createPgEventsRepo(db: PgDb): Async<EventsRepo> {
  return {
    async insert(input) {
      const { rows } = await db.queryNamed(EVENT_INSERT_SQL, eventInsertValues(input));
      return mapEvent(rows[0]!);
    },
    async insertMany(inputs) {
      for (let i = 0; i < inputs.length; i += MANY_CHUNK) {
        const chunk = inputs.slice(i, i + MANY_CHUNK);
        await db.query(eventInsertManySql(chunk.length), eventInsertManyParams(chunk));
      }
      return inputs.length;
    },
    async get(id) {
      const row = await db.one('SELECT * FROM event_logs WHERE id = ?', [id]);
      return row ? mapEvent(row) : undefined;
    },
    list(filter, page) {
      return pgListPage(db, { table: 'event_logs', where: eventListWhere(filter), orderBy: 'id DESC', map: mapEvent }, page);
    },
    async markProcessed(id, error) {
      await db.query('UPDATE event_logs SET processed = 1, processed_at = ?, error = ? WHERE id = ?', [nowIso(), error ?? '', id]);
    },
    async listUnprocessed(limit) {
      return (await db.all('SELECT * FROM event_logs WHERE processed = 0 ORDER BY id ASC LIMIT ?', [Math.max(0, Math.trunc(limit))])).map(mapEvent);
    },
    async listAfter(afterId, limit) {
      return (await db.all('SELECT * FROM event_logs WHERE id > ? ORDER BY id ASC LIMIT ?', [Math.trunc(afterId), Math.max(0, Math.trunc(limit))])).map(mapEvent);
    },
    importForRun(runUuid, events) {
      return db.tx(async () => {
        // event_id carries no unique index: two imports of one run serialise on an advisory lock.
        await db.query('SELECT pg_advisory_xact_lock(?, hashtext(?))', [EVENT_IMPORT_LOCK, runUuid]);
        const known = new Set((await db.all('SELECT event_id FROM event_logs WHERE run_id = ?', [runUuid])).map((r) => r.event_id as string));
        const fresh = events.filter((e) => {
          if (!e.event_id || known.has(e.event_id)) return false;
          known.add(e.event_id);
          return true;
        });
        for (const e of fresh) await db.queryNamed(EVENT_IMPORT_SQL, eventImportValues(runUuid, e));
        return fresh.length;
      });
    },
    async maxId() {
      return Number((await db.one('SELECT MAX(id) AS m FROM event_logs'))?.m ?? 0);
    },
  };
}
