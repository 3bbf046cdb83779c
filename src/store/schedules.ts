/** The `schedules` table: cron, event and watch triggers that launch workflows. */
import { randomBytes } from 'node:crypto';
import { bit, listPage, nowIso, parseJson, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';
import { DEFAULT_ORG_UUID, type OrgFilter } from './org-constants.js';

export interface ScheduleRecord {
  id: string;
  name: string;
  workflow_name: string;
  workflow_kind: string;
  workflow_path: string;
  trigger_name: string;
  trigger_type: string;
  schedule: string;
  event_topic: string;
  watch_path: string;
  /** Target and parameters of the launched runs. */
  input_config: Record<string, unknown>;
  is_enabled: boolean;
  last_run: string | null;
  next_run: string | null;
  run_count: number;
  created_at: string;
  updated_at: string;
  /** The org the schedule belongs to (migration 012): its runs are created there. */
  org_uuid: string;
}

export interface ScheduleInput {
  name: string;
  workflow_name: string;
  workflow_kind?: string;
  workflow_path?: string;
  /** Defaults to the name. */
  trigger_name?: string;
  trigger_type?: string;
  schedule?: string;
  event_topic?: string;
  watch_path?: string;
  input_config?: Record<string, unknown>;
  /** Defaults to true. */
  is_enabled?: boolean;
  next_run?: string | null;
  /** Default: the default org. */
  org_uuid?: string;
}

export type SchedulePatch = Partial<Omit<ScheduleInput, 'next_run' | 'org_uuid'>>;

export interface SchedulesRepo {
  /** Inserts a schedule with a fresh `sch_…` id. */
  create(input: ScheduleInput): ScheduleRecord;
  get(id: string): ScheduleRecord | undefined;
  /** Page of schedules, newest first (only those of the given orgs when `orgs` is set). */
  list(page: Page, orgs?: OrgFilter): ListResult<ScheduleRecord>;
  /** Applies the given fields; undefined when the schedule does not exist. */
  update(id: string, patch: SchedulePatch): ScheduleRecord | undefined;
  delete(id: string): boolean;
  setEnabled(id: string, enabled: boolean): boolean;
  /** Records a launch: run_count + 1, last_run = at, and next_run when given (null clears it). */
  recordRun(id: string, at: string, nextRun?: string | null): void;
  /** Every enabled schedule, oldest first (what the scheduler registers at start). */
  listEnabled(): ScheduleRecord[];
  /** Stores the next planned fire time (null clears it) without touching updated_at. */
  setNextRun(id: string, nextRun: string | null): boolean;
}

const TEXT_FIELDS = ['name', 'workflow_name', 'workflow_kind', 'workflow_path', 'trigger_name', 'trigger_type', 'schedule', 'event_topic', 'watch_path'] as const;

/** Maps a schedules row to its record. */
export function mapSchedule(row: Row): ScheduleRecord {
  return {
    ...(row as unknown as ScheduleRecord),
    input_config: parseJson<Record<string, unknown>>(row.input_config, {}),
    is_enabled: row.is_enabled === 1,
  };
}

/** A schedule id: time-ordered and unique even when two are created in the same millisecond. */
function newScheduleId(): string {
  return `sch_${Date.now()}${randomBytes(4).toString('hex')}`;
}

/** The INSERT of `create` (named parameters from scheduleInsertValues); dialect-neutral. */
export const SCHEDULE_INSERT_SQL = `INSERT INTO schedules (id, name, workflow_name, workflow_kind, workflow_path, trigger_name, trigger_type, schedule,
     event_topic, watch_path, input_config, is_enabled, next_run, created_at, updated_at, org_uuid)
   VALUES (@id, @name, @workflow_name, @workflow_kind, @workflow_path, @trigger_name, @trigger_type, @schedule,
     @event_topic, @watch_path, @input_config, @is_enabled, @next_run, @now, @now, @org_uuid)
   RETURNING *`;

export function scheduleInsertValues(input: ScheduleInput): Record<string, unknown> {
  return {
    id: newScheduleId(),
    name: input.name,
    workflow_name: input.workflow_name,
    workflow_kind: input.workflow_kind ?? '',
    workflow_path: input.workflow_path ?? '',
    trigger_name: input.trigger_name ?? input.name,
    trigger_type: input.trigger_type ?? 'cron',
    schedule: input.schedule ?? '',
    event_topic: input.event_topic ?? '',
    watch_path: input.watch_path ?? '',
    input_config: JSON.stringify(input.input_config ?? {}),
    is_enabled: bit(input.is_enabled ?? true),
    next_run: input.next_run ?? null,
    org_uuid: input.org_uuid ?? DEFAULT_ORG_UUID,
    now: nowIso(),
  };
}

/** The UPDATE … RETURNING of `update` (positional parameters), or undefined when the patch is empty. */
export function scheduleUpdate(id: string, patch: SchedulePatch): { sql: string; params: unknown[] } | undefined {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const key of TEXT_FIELDS) {
    if (patch[key] !== undefined) {
      sets.push(`${key} = ?`);
      params.push(patch[key]);
    }
  }
  if (patch.input_config !== undefined) {
    sets.push('input_config = ?');
    params.push(JSON.stringify(patch.input_config));
  }
  if (patch.is_enabled !== undefined) {
    sets.push('is_enabled = ?');
    params.push(bit(patch.is_enabled));
  }
  if (sets.length === 0) return undefined;
  return { sql: `UPDATE schedules SET ${sets.join(', ')}, updated_at = ? WHERE id = ? RETURNING *`, params: [...params, nowIso(), id] };
}

/** The UPDATE of recordRun (positional parameters). */
export function scheduleRecordRun(id: string, at: string, nextRun: string | null | undefined): { sql: string; params: unknown[] } {
  return nextRun === undefined
    ? { sql: 'UPDATE schedules SET run_count = run_count + 1, last_run = ?, updated_at = ? WHERE id = ?', params: [at, nowIso(), id] }
    : { sql: 'UPDATE schedules SET run_count = run_count + 1, last_run = ?, next_run = ?, updated_at = ? WHERE id = ?', params: [at, nextRun, nowIso(), id] };
}

/** Creates the schedules repository on one connection. */
export function createSchedulesRepo(db: Db, q: StatementCache): SchedulesRepo {
  const get = (id: string): ScheduleRecord | undefined => {
    const row = q('SELECT * FROM schedules WHERE id = ?').get(id) as Row | undefined;
    return row ? mapSchedule(row) : undefined;
  };

  return {
    create(input) {
      return mapSchedule(q(SCHEDULE_INSERT_SQL).get(scheduleInsertValues(input)) as Row);
    },

    get,

    list(page, orgs) {
      return listPage(db, q, { table: 'schedules', where: new Where().oneOf('org_uuid', orgs), orderBy: 'created_at DESC, rowid DESC', map: mapSchedule }, page);
    },

    update(id, patch) {
      const u = scheduleUpdate(id, patch);
      if (!u) return get(id);
      const row = q(u.sql).get(...u.params) as Row | undefined;
      return row ? mapSchedule(row) : undefined;
    },

    delete(id) {
      return q('DELETE FROM schedules WHERE id = ?').run(id).changes > 0;
    },

    setEnabled(id, enabled) {
      return q('UPDATE schedules SET is_enabled = ?, updated_at = ? WHERE id = ?').run(bit(enabled), nowIso(), id).changes > 0;
    },

    recordRun(id, at, nextRun) {
      const r = scheduleRecordRun(id, at, nextRun);
      q(r.sql).run(...r.params);
    },

    listEnabled() {
      return (q('SELECT * FROM schedules WHERE is_enabled = 1 ORDER BY created_at ASC, rowid ASC').all() as Row[]).map(mapSchedule);
    },

    setNextRun(id, nextRun) {
      // updated_at is the scheduler's change detector; a computed fire time is not a user change.
      return q('UPDATE schedules SET next_run = ? WHERE id = ?').run(nextRun, id).changes > 0;
    },
  };
}
