/**
 * The `step_results` table. Like runs, a step's status only changes through `transition`, a
 * conditional UPDATE whose terminal states (completed, failed, skipped) are sticky.
 */
import { randomUUID } from 'node:crypto';
import { errors } from '../errors.js';
import { listPage, nowIso, parseJson, Where, type Db, type Row, type StatementCache } from './sql.js';
import { TERMINAL_STEP_STATUSES, type ListResult, type Page, type StepStatus } from './types.js';
import type { OrgFilter } from './org-constants.js';
import { eventInsertValues, EVENT_INSERT_SQL, type EventInput } from './events.js';
import { runProgress } from './run-sql.js';

export interface StepRecord {
  id: number;
  step_uuid: string;
  run_id: number;
  run_uuid: string;
  workspace: string;
  module_name: string;
  step_name: string;
  step_type: string;
  step_index: number;
  status: StepStatus;
  command: string;
  output: string;
  error_message: string;
  exports: Record<string, unknown>;
  duration_ms: number;
  log_file: string;
  started_at: string | null;
  completed_at: string | null;
  created_at: string;
}

export interface StepCreateInput {
  run_id: number;
  run_uuid: string;
  workspace?: string;
  module_name?: string;
  step_name: string;
  step_type: string;
  step_index?: number;
  status?: 'pending' | 'running' | 'skipped';
  command?: string;
  log_file?: string;
  output?: string;
  error_message?: string;
}

export interface StepPatch {
  output?: string;
  error_message?: string;
  exports?: object;
  /** When absent on a terminal transition, computed from started_at. */
  duration_ms?: number;
  command?: string;
  /** When the change happened (ISO 8601), for a change written later than that; default now. */
  at?: string;
}

/** What is written with a finished step (StepsRepo.finish). */
export interface StepFinishWrites {
  /** The step's event (step.completed / step.failed); written even when the step could not move. */
  event: EventInput;
  /** The step's run (its id): gets one more completed step when `count`, and `pid` as its live process. */
  runId: number;
  count?: boolean;
  pid?: { current_pid: number; current_pid_start: string };
}

/** The arguments of StepsRepo.finish, as one value. */
export interface StepFinish {
  id: number;
  to: StepStatus;
  patch: StepPatch;
  writes: StepFinishWrites;
}

/** A finished step recorded elsewhere (a distributed worker), imported with its own timestamps. */
export type StepImport = Omit<StepRecord, 'id' | 'run_id' | 'run_uuid' | 'step_uuid'> & { step_uuid?: string };

export interface StepListFilter {
  workspace?: string;
  status?: StepStatus;
  step_type?: string;
  run_id?: number;
  /** Only steps of runs of these orgs. */
  org_uuid?: OrgFilter;
}

export interface StepsRepo {
  /** Inserts a step result (default 'pending'; 'running' sets started_at, 'skipped' sets completed_at). */
  create(input: StepCreateInput): StepRecord;
  get(id: number): StepRecord | undefined;
  /** Moves a step to `to` when allowed from its current status; undefined (row untouched) otherwise. */
  transition(id: number, to: StepStatus, patch?: StepPatch): StepRecord | undefined;
  /**
   * A step's transition to `to` written together with its event and its run's progress (see
   * StepFinishWrites): one transaction, one statement on PostgreSQL. Returns the step as
   * `transition` does (undefined when it could not move; the event and progress are written anyway).
   */
  finish(id: number, to: StepStatus, patch: StepPatch, writes: StepFinishWrites): StepRecord | undefined;
  /**
   * `finish` of one step and `create` of the next in one write (one statement on PostgreSQL): a
   * run's next step starts in the statement that ends the step before. Returns the created step.
   */
  finishThenCreate(finish: StepFinish, next: StepCreateInput): StepRecord;
  /** Steps of one run in creation order. */
  listByRun(runId: number): StepRecord[];
  /** Names of the run's steps running now, in start order. */
  runningNames(runId: number): string[];
  /** runningNames of several runs in one query (a job's status): run id → names; runs with none are absent. */
  runningNamesOf(runIds: number[]): Record<number, string[]>;
  /** Filtered page, newest first (id DESC). */
  list(filter: StepListFilter, page: Page): ListResult<StepRecord>;
  /** Marks every pending or running step of a run failed (reconciliation); returns how many. */
  failUnfinished(runId: number, message: string): number;
  /**
   * Imports the steps of a run executed elsewhere, idempotently: a step is keyed by module, name,
   * index and occurrence within the run, so importing the same list twice updates, never duplicates.
   */
  importForRun(runId: number, runUuid: string, steps: StepImport[]): { inserted: number; updated: number };
}

export const STEP_ALLOWED_FROM: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  pending: [],
  running: ['pending'],
  skipped: ['pending'],
  completed: ['running'],
  failed: ['pending', 'running'],
};

/** Maps a step_results row to its record. */
export function mapStep(row: Row): StepRecord {
  return { ...(row as unknown as StepRecord), exports: parseJson<Record<string, unknown>>(row.exports, {}) };
}

/** SQLite: milliseconds from the started_at column to the @now parameter. */
const SQLITE_ELAPSED_MS = 'MAX(0, CAST(ROUND((julianday(@now) - julianday(started_at)) * 86400000) AS INTEGER))';

/** The INSERT of `create` (named parameters from stepInsertValues); dialect-neutral. */
export const STEP_INSERT_SQL = `INSERT INTO step_results (step_uuid, run_id, run_uuid, workspace, module_name, step_name, step_type, step_index,
     status, command, output, error_message, log_file, started_at, completed_at, created_at)
   VALUES (@step_uuid, @run_id, @run_uuid, @workspace, @module_name, @step_name, @step_type, @step_index,
     @status, @command, @output, @error_message, @log_file, @started_at, @completed_at, @now)
   RETURNING *`;

/** The validated, defaulted column values of a new step. */
export function stepInsertValues(input: StepCreateInput): Record<string, unknown> {
  const status = input.status ?? 'pending';
  if (!['pending', 'running', 'skipped'].includes(status)) throw errors.runState(`a step cannot be created as ${status}`);
  const now = nowIso();
  return {
    step_uuid: randomUUID(),
    run_id: input.run_id,
    run_uuid: input.run_uuid,
    workspace: input.workspace ?? '',
    module_name: input.module_name ?? '',
    step_name: input.step_name,
    step_type: input.step_type,
    step_index: input.step_index ?? 0,
    status,
    command: input.command ?? '',
    output: input.output ?? '',
    error_message: input.error_message ?? '',
    log_file: input.log_file ?? '',
    started_at: status === 'running' ? now : null,
    completed_at: status === 'skipped' ? now : null,
    now,
  };
}

/**
 * The conditional UPDATE of a step transition (named parameters), or undefined when `to` has no
 * source state. `elapsedMs` is the engine's expression for the milliseconds from started_at to @now.
 */
export function stepTransition(id: number, to: StepStatus, patch: StepPatch, elapsedMs: string): { sql: string; values: Record<string, unknown> } | undefined {
  const from = STEP_ALLOWED_FROM[to];
  if (!from) throw errors.runState(`unknown step status: ${String(to)}`);
  if (from.length === 0) return undefined;
  const terminal = TERMINAL_STEP_STATUSES.includes(to) ? 1 : 0;
  const sql = `UPDATE step_results SET
       status = @to,
       started_at = CASE WHEN @to = 'running' THEN COALESCE(started_at, @now) ELSE started_at END,
       completed_at = CASE WHEN @terminal = 1 THEN @now ELSE completed_at END,
       duration_ms = COALESCE(@duration_ms,
         CASE WHEN @terminal = 1 AND started_at IS NOT NULL THEN ${elapsedMs} ELSE duration_ms END),
       output = COALESCE(@output, output),
       error_message = COALESCE(@error_message, error_message),
       exports = COALESCE(@exports, exports),
       command = COALESCE(@command, command)
     WHERE id = @id AND status IN (${from.map((s) => `'${s}'`).join(', ')})
     RETURNING *`;
  return {
    sql,
    values: {
      id,
      to,
      now: patch.at ?? nowIso(),
      terminal,
      duration_ms: patch.duration_ms ?? null,
      output: patch.output ?? null,
      error_message: patch.error_message ?? null,
      exports: patch.exports === undefined ? null : JSON.stringify(patch.exports),
      command: patch.command ?? null,
    },
  };
}

export type StepKeyRow = { id: number; module_name: string; step_name: string; step_index: number };

export const STEP_IMPORT_EXISTING_SQL = 'SELECT id, module_name, step_name, step_index FROM step_results WHERE run_id = ? ORDER BY id ASC';
export const STEP_IMPORT_UPDATE_SQL = `UPDATE step_results SET workspace = @workspace, step_type = @step_type, status = @status, command = @command,
     output = @output, error_message = @error_message, exports = @exports, duration_ms = @duration_ms,
     log_file = @log_file, started_at = @started_at, completed_at = @completed_at
   WHERE id = @id`;
export const STEP_IMPORT_INSERT_SQL = `INSERT INTO step_results (step_uuid, run_id, run_uuid, workspace, module_name, step_name, step_type, step_index,
     status, command, output, error_message, exports, duration_ms, log_file, started_at, completed_at, created_at)
   VALUES (@step_uuid, @run_id, @run_uuid, @workspace, @module_name, @step_name, @step_type, @step_index,
     @status, @command, @output, @error_message, @exports, @duration_ms, @log_file, @started_at, @completed_at, @created_at)
   ON CONFLICT (step_uuid) DO NOTHING`;

/**
 * Which imported steps update an existing row and which are new: a step is keyed by module,
 * name, index and occurrence within the run (`existing`: the run's rows in id order).
 */
export function planStepImport(existing: StepKeyRow[], runId: number, runUuid: string, steps: StepImport[]): { updates: Record<string, unknown>[]; inserts: Record<string, unknown>[] } {
  const keyOf = (s: { module_name: string; step_name: string; step_index: number }, seen: Map<string, number>) => {
    const base = JSON.stringify([s.module_name, s.step_name, s.step_index]);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return `${base}#${n}`;
  };
  const ids = new Map<string, number>();
  const seenOld = new Map<string, number>();
  for (const row of existing) ids.set(keyOf(row, seenOld), Number(row.id));
  const seenNew = new Map<string, number>();
  const updates: Record<string, unknown>[] = [];
  const inserts: Record<string, unknown>[] = [];
  for (const s of steps) {
    const values = {
      workspace: s.workspace,
      module_name: s.module_name,
      step_name: s.step_name,
      step_type: s.step_type,
      step_index: s.step_index,
      status: s.status,
      command: s.command,
      output: s.output,
      error_message: s.error_message,
      exports: JSON.stringify(s.exports ?? {}),
      duration_ms: Math.max(0, Math.round(s.duration_ms)),
      log_file: s.log_file,
      started_at: s.started_at,
      completed_at: s.completed_at,
    };
    const id = ids.get(keyOf(s, seenNew));
    if (id !== undefined) updates.push({ ...values, id });
    else inserts.push({ ...values, step_uuid: s.step_uuid || randomUUID(), run_id: runId, run_uuid: runUuid, created_at: s.created_at || nowIso() });
  }
  return { updates, inserts };
}

/** The filters of `list` (dialect-neutral). */
export function stepListWhere(filter: StepListFilter): Where {
  const where = new Where()
    .eq('workspace', filter.workspace)
    .eq('status', filter.status)
    .eq('step_type', filter.step_type)
    .eq('run_id', filter.run_id);
  if (filter.org_uuid !== undefined) {
    const list = typeof filter.org_uuid === 'string' ? [filter.org_uuid] : filter.org_uuid;
    if (list.length === 0) where.add('1 = 0');
    else where.add(`run_id IN (SELECT id FROM runs WHERE org_uuid IN (${list.map(() => '?').join(', ')}))`, ...list);
  }
  return where;
}

/** Step names by run id, in the rows' order (runningNamesOf). */
export function groupNames(rows: Record<string, unknown>[]): Record<number, string[]> {
  const out: Record<number, string[]> = {};
  for (const r of rows) (out[Number(r.run_id)] ??= []).push(String(r.step_name));
  return out;
}

/** Creates the step results repository on one connection. */
export function createStepsRepo(db: Db, q: StatementCache): StepsRepo {
  const get = (id: number): StepRecord | undefined => {
    const row = q('SELECT * FROM step_results WHERE id = ?').get(id) as Row | undefined;
    return row ? mapStep(row) : undefined;
  };

  const transition = (id: number, to: StepStatus, patch: StepPatch = {}): StepRecord | undefined => {
    const t = stepTransition(id, to, patch, SQLITE_ELAPSED_MS);
    if (!t) return undefined;
    const row = q(t.sql).get(t.values) as Row | undefined;
    return row ? mapStep(row) : undefined;
  };

  /** The writes of `finish`, inside the caller's transaction. */
  const finishNow = (id: number, to: StepStatus, patch: StepPatch, writes: StepFinishWrites): StepRecord | undefined => {
    const step = transition(id, to, patch);
    q(EVENT_INSERT_SQL).run(eventInsertValues(writes.event));
    const p = runProgress(writes.runId, { count: writes.count, pid: writes.pid });
    if (p) q(p.sql).run(p.values);
    return step;
  };

  return {
    create(input) {
      return mapStep(q(STEP_INSERT_SQL).get(stepInsertValues(input)) as Row);
    },

    get,

    transition,

    finish(id, to, patch, writes) {
      return db.transaction(() => finishNow(id, to, patch, writes)).immediate();
    },

    finishThenCreate(f, next) {
      return db
        .transaction(() => {
          finishNow(f.id, f.to, f.patch, f.writes);
          return mapStep(q(STEP_INSERT_SQL).get(stepInsertValues(next)) as Row);
        })
        .immediate();
    },

    runningNames(runId) {
      const rows = q("SELECT step_name FROM step_results WHERE run_id = ? AND status = 'running' ORDER BY id").all(runId) as { step_name: string }[];
      return rows.map((r) => r.step_name);
    },

    runningNamesOf(runIds) {
      if (runIds.length === 0) return {};
      const rows = q("SELECT run_id, step_name FROM step_results WHERE run_id IN (SELECT value FROM json_each(?)) AND status = 'running' ORDER BY id").all(JSON.stringify(runIds)) as { run_id: number; step_name: string }[];
      return groupNames(rows);
    },

    listByRun(runId) {
      return (q('SELECT * FROM step_results WHERE run_id = ? ORDER BY id ASC').all(runId) as Row[]).map(mapStep);
    },

    list(filter, page) {
      const where = stepListWhere(filter);
      return listPage(db, q, { table: 'step_results', where, orderBy: 'id DESC', map: mapStep }, page);
    },

    importForRun(runId, runUuid, steps) {
      return db
        .transaction(() => {
          const plan = planStepImport(q(STEP_IMPORT_EXISTING_SQL).all(runId) as StepKeyRow[], runId, runUuid, steps);
          for (const u of plan.updates) q(STEP_IMPORT_UPDATE_SQL).run(u);
          for (const i of plan.inserts) q(STEP_IMPORT_INSERT_SQL).run(i);
          return { inserted: plan.inserts.length, updated: plan.updates.length };
        })
        .immediate();
    },

    failUnfinished(runId, message) {
      const now = nowIso();
      return q(
        `UPDATE step_results SET status = 'failed', completed_at = ?, error_message = ?
         WHERE run_id = ? AND status IN ('pending', 'running')`,
      ).run(now, message, runId).changes;
    },
  };
}
