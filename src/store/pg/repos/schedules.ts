/**
 * The `schedules` table on PostgreSQL (statements shared with src/store/schedules.ts). Lists
 * break created_at ties by id (time-ordered `sch_…` ids) where SQLite uses its rowid.
 */
import type { Async } from '../../async.js';
import { mapSchedule, scheduleInsertValues, scheduleRecordRun, scheduleUpdate, SCHEDULE_INSERT_SQL, type SchedulesRepo } from '../../schedules.js';
import { bit, nowIso, Where } from '../../sql.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

export function createPgSchedulesRepo(db: PgDb): Async<SchedulesRepo> {
  const get = async (id: string) => {
    const row = await db.one('SELECT * FROM schedules WHERE id = ?', [id]);
    return row ? mapSchedule(row) : undefined;
  };
  const changed = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount > 0;
  return {
    async create(input) {
      return mapSchedule((await db.queryNamed(SCHEDULE_INSERT_SQL, scheduleInsertValues(input))).rows[0]!);
    },
    get,
    list(page, orgs) {
      return pgListPage(db, { table: 'schedules', where: new Where().oneOf('org_uuid', orgs), orderBy: 'created_at DESC, id COLLATE "C" DESC', map: mapSchedule }, page);
    },
    async update(id, patch) {
      const u = scheduleUpdate(id, patch);
      if (!u) return get(id);
      const row = await db.one(u.sql, u.params);
      return row ? mapSchedule(row) : undefined;
    },
    delete: (id) => changed('DELETE FROM schedules WHERE id = ?', [id]),
    setEnabled: (id, enabled) => changed('UPDATE schedules SET is_enabled = ?, updated_at = ? WHERE id = ?', [bit(enabled), nowIso(), id]),
    async recordRun(id, at, nextRun) {
      const r = scheduleRecordRun(id, at, nextRun);
      await db.query(r.sql, r.params);
    },
    async listEnabled() {
      return (await db.all('SELECT * FROM schedules WHERE is_enabled = 1 ORDER BY created_at ASC, id COLLATE "C" ASC')).map(mapSchedule);
    },
    // updated_at is the scheduler's change detector; a computed fire time is not a user change.
    setNextRun: (id, nextRun) => changed('UPDATE schedules SET next_run = ? WHERE id = ?', [nextRun, id]),
  };
}
