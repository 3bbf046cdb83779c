/**
 * The statements of the runs repository shared by both engines (src/store/runs.ts on SQLite,
 * src/store/pg/repos/runs.ts on PostgreSQL): the run state machine, input validation and
 * defaults, and the dialect-neutral SQL of create, transition, update and the scope rows.
 */
import type { WorkspaceRunInfo } from './workspaces.js';
import { ownerHostOf } from './owner.js';
import { randomUUID } from 'node:crypto';
import { errors } from '../errors.js';
import { bit, likeContains, nowIso, parseJson, Where, type Row } from './sql.js';
import { orgOfWorkspaceSql } from './org-constants.js';
import { PRIORITY_RANK, TERMINAL_RUN_STATUSES, type RunStatus } from './types.js';
import type { RunCreateInput, RunListFilter, RunPatch, RunScopeLayer, RunScopeStats } from './runs.js';

/** Allowed source states for each target state: the whole run state machine. */
export const RUN_ALLOWED_FROM: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  pending: [],
  queued: ['pending'],
  running: ['pending', 'queued'],
  completed: ['running'],
  failed: ['pending', 'queued', 'running'],
  cancelled: ['pending', 'queued', 'running'],
};


const MAX_SCOPE_SAMPLES = 20;

/** What `find` looks up: a numeric id (a number or an all-digits string) or a run_uuid; undefined for an unsafe integer. */
export function runRef(idOrUuid: string | number): { id: number } | { uuid: string } | undefined {
  if (typeof idOrUuid === 'number') return Number.isSafeInteger(idOrUuid) ? { id: idOrUuid } : undefined;
  if (/^\d+$/.test(idOrUuid)) {
    const id = Number(idOrUuid);
    return Number.isSafeInteger(id) ? { id } : undefined;
  }
  return { uuid: idOrUuid };
}

/** The filters of `list`; `like` is the engine's case-insensitive LIKE (SQLite LIKE, PostgreSQL ILIKE). */
export function runListWhere(filter: RunListFilter, like: 'LIKE' | 'ILIKE'): Where {
  const where = new Where()
    .eq('status', filter.status)
    .eq('workflow_name', filter.workflow_name)
    .eq('workspace', filter.workspace)
    .eq('run_group_id', filter.run_group_id)
    .oneOf('org_uuid', filter.org_uuid);
  if (filter.target) where.add(`target ${like} ? ESCAPE '\\'`, likeContains(filter.target));
  return where;
}

/** The INSERT of `create` (named parameters from runInsertValues); dialect-neutral. */
export const RUN_INSERT_SQL = `INSERT INTO runs (run_uuid, workflow_name, workflow_kind, target, params, status, workspace, started_at,
     schedule_id, trigger_type, trigger_name, run_group_id, priority, priority_rank, run_mode, total_steps,
     hooks_enabled, timeout_seconds, runner_type, options, owner_pid, owner_host, created_at, updated_at, org_uuid)
   VALUES (@run_uuid, @workflow_name, @workflow_kind, @target, @params, @status, @workspace, @started_at,
     @schedule_id, @trigger_type, @trigger_name, @run_group_id, @priority, @priority_rank, @run_mode, @total_steps,
     @hooks_enabled, @timeout_seconds, @runner_type, @options, @owner_pid, @owner_host, @now, @now, COALESCE(@org_uuid, ${orgOfWorkspaceSql('@workspace')}))
   RETURNING *`;

/** The validated, defaulted column values of a new run. */
export function runInsertValues(input: RunCreateInput): Record<string, unknown> {
  const priority = input.priority ?? 'normal';
  const rank = PRIORITY_RANK[priority];
  if (rank === undefined) throw errors.validation(`priority: must be one of ${Object.keys(PRIORITY_RANK).join(', ')}`);
  const status = input.status ?? 'queued';
  if (!['pending', 'queued', 'running'].includes(status)) throw errors.runState(`a run cannot be created as ${status}`);
  const now = nowIso();
  return {
    run_uuid: input.run_uuid ?? randomUUID(),
    workflow_name: input.workflow_name,
    workflow_kind: input.workflow_kind,
    target: input.target,
    params: JSON.stringify(input.params ?? {}),
    status,
    workspace: input.workspace ?? '',
    started_at: status === 'running' ? now : null,
    schedule_id: input.schedule_id ?? '',
    trigger_type: input.trigger_type ?? 'manual',
    trigger_name: input.trigger_name ?? '',
    run_group_id: input.run_group_id ?? '',
    priority,
    priority_rank: rank,
    run_mode: input.run_mode ?? 'local',
    total_steps: input.total_steps ?? 0,
    hooks_enabled: bit(input.hooks_enabled),
    timeout_seconds: input.timeout_seconds ?? 0,
    runner_type: input.runner_type ?? 'host',
    options: JSON.stringify(input.options ?? {}),
    owner_pid: input.owner_pid ?? 0,
    owner_host: ownerHostOf(input.owner_pid),
    org_uuid: input.org_uuid ?? null,
    now,
  };
}

/** The conditional UPDATE of a run transition (named parameters), or undefined when `to` has no source state. */
export function runTransition(id: number, to: RunStatus, patch: { error_message?: string; at?: string } = {}): { sql: string; values: Record<string, unknown> } | undefined {
  const from = RUN_ALLOWED_FROM[to];
  if (!from) throw errors.runState(`unknown run status: ${String(to)}`);
  if (from.length === 0) return undefined;
  const terminal = TERMINAL_RUN_STATUSES.includes(to) ? 1 : 0;
  const sql = `UPDATE runs SET
       status = @to,
       updated_at = @now,
       started_at = CASE WHEN @to = 'running' THEN COALESCE(started_at, @at) ELSE started_at END,
       completed_at = CASE WHEN @terminal = 1 THEN @at ELSE completed_at END,
       current_pid = CASE WHEN @terminal = 1 THEN 0 ELSE current_pid END,
       current_pid_start = CASE WHEN @terminal = 1 THEN '' ELSE current_pid_start END,
       error_message = COALESCE(@error_message, error_message)
     WHERE id = @id AND status IN (${from.map((s) => `'${s}'`).join(', ')})
     RETURNING *`;
  return { sql, values: { id, to, now: nowIso(), at: patch.at ?? nowIso(), terminal, error_message: patch.error_message ?? null } };
}

/** The UPDATE of `update` (positional parameters), or undefined when the patch is empty. */
export function runUpdate(id: number, patch: RunPatch): { sql: string; params: unknown[] } | undefined {
  const sets: string[] = [];
  const params: unknown[] = [];
  const numeric = ['total_steps', 'completed_steps', 'owner_pid'] as const;
  for (const key of numeric) {
    if (patch[key] !== undefined) {
      sets.push(`${key} = ?`);
      params.push(patch[key]);
    }
  }
  // The owner's host goes with its PID (src/store/owner.ts).
  if (patch.owner_pid !== undefined) {
    sets.push('owner_host = ?');
    params.push(ownerHostOf(patch.owner_pid));
  }
  // A finished run has no live process: a PID write racing with the terminal transition (a
  // step finishing after Ctrl-C, a delayed PID timer) must not leave one behind.
  const terminal = "status IN ('completed', 'failed', 'cancelled')";
  if (patch.current_pid !== undefined) {
    sets.push(`current_pid = CASE WHEN ${terminal} THEN 0 ELSE ? END`);
    params.push(patch.current_pid);
  }
  if (patch.current_pid_start !== undefined) {
    sets.push(`current_pid_start = CASE WHEN ${terminal} THEN '' ELSE ? END`);
    params.push(patch.current_pid_start);
  }
  for (const key of ['workspace', 'run_group_id'] as const) {
    if (patch[key] !== undefined) {
      sets.push(`${key} = ?`);
      params.push(patch[key]);
    }
  }
  // A run moved to another workspace follows that workspace's org when it has a row.
  if (patch.workspace !== undefined) {
    sets.push('org_uuid = COALESCE((SELECT org_uuid FROM workspaces WHERE name = ?), org_uuid)');
    params.push(patch.workspace);
  }
  for (const key of ['params', 'options'] as const) {
    if (patch[key] !== undefined) {
      sets.push(`${key} = ?`);
      params.push(JSON.stringify(patch[key]));
    }
  }
  if (sets.length === 0) return undefined;
  return { sql: `UPDATE runs SET ${sets.join(', ')}, updated_at = ? WHERE id = ?`, params: [...params, nowIso(), id] };
}

/** The upsert of addScopeDrops (named parameters from scopeDropsValues). */
export const SCOPE_DROPS_SQL = `INSERT INTO run_scope (run_id, dropped, by_source, samples, updated_at) VALUES (@id, @add, @by, @samples, @now)
   ON CONFLICT(run_id) DO UPDATE SET dropped = run_scope.dropped + @add, by_source = @by, samples = @samples, updated_at = @now`;

/** The merged by-source counts and kept samples of a scope row (`row`: its current by_source and samples). */
export function scopeDropsValues(
  id: number,
  add: number,
  row: Row | undefined,
  bySource: Record<string, number>,
  samples: { source: string; value: string }[],
): Record<string, unknown> {
  const by = parseJson<Record<string, number>>(row?.by_source, {});
  for (const [k, n] of Object.entries(bySource)) by[k] = (by[k] ?? 0) + n;
  const kept = [...parseJson<{ source: string; value: string }[]>(row?.samples, []), ...samples].slice(0, MAX_SCOPE_SAMPLES);
  return { id, add, by: JSON.stringify(by), samples: JSON.stringify(kept), now: nowIso() };
}

/** Maps a run_scope row to its record. */
export function mapScope(row: Row): RunScopeStats {
  return {
    dropped: Number(row.dropped),
    by_source: parseJson<Record<string, number>>(row.by_source, {}),
    samples: parseJson<{ source: string; value: string }[]>(row.samples, []),
    layers: parseJson<RunScopeLayer[]>(row.layers, []),
  };
}


/** The statuses whose runs hold no live process (current_pid is cleared, never set, in them). */
const TERMINAL_SQL = "status IN ('completed', 'failed', 'cancelled')";

/**
 * The UPDATE of `start` (named parameters): pending|queued → running, a run already running (the
 * queue's claim leaves it so) stays running; the owner is written with it. Finished runs do not match.
 */
export function runStart(id: number, ownerPid: number, patch: RunStartPatch = {}, orgFrom?: string): { sql: string; values: Record<string, unknown> } {
  const values: Record<string, unknown> = { id, now: nowIso(), owner_pid: ownerPid, owner_host: ownerHostOf(ownerPid) };
  let sets = '';
  if (patch.workspace !== undefined) {
    // As in runUpdate: the run follows its (new) workspace's org when that workspace has a row.
    // `orgFrom` names a part of the same statement that wrote that row (PostgreSQL's CTE, whose
    // UPDATE does not see the row another part inserted).
    const org = orgFrom ? `SELECT org_uuid FROM ${orgFrom}` : 'SELECT org_uuid FROM workspaces WHERE name = @workspace';
    sets += `, workspace = @workspace, org_uuid = COALESCE((${org}), org_uuid)`;
    values.workspace = patch.workspace;
  }
  if (patch.total_steps !== undefined) {
    sets += ', total_steps = @total_steps';
    values.total_steps = patch.total_steps;
  }
  const sql = `UPDATE runs SET status = 'running', started_at = COALESCE(started_at, @now), owner_pid = @owner_pid, owner_host = @owner_host, updated_at = @now${sets}
     WHERE id = @id AND status IN ('pending', 'queued', 'running')
     RETURNING *`;
  return { sql, values };
}

/** What `start` may write with the status: the run's workspace and its step count. */
export interface RunStartPatch {
  workspace?: string;
  total_steps?: number;
  /** The workspace's row, inserted or updated first in the same write (`workspaces.upsertRunInfo`); written even when the run does not start. */
  workspaceRow?: WorkspaceRunInfo;
}

/**
 * The UPDATE a finished step makes to its run (named parameters): one more completed step and/or
 * the run's live process group; undefined when there is nothing to write. A finished run never
 * gets a PID back (as in runUpdate).
 */
export function runProgress(id: number, opts: { count?: boolean; pid?: { current_pid: number; current_pid_start: string } }): { sql: string; values: Record<string, unknown> } | undefined {
  const sets: string[] = [];
  if (opts.count) sets.push('completed_steps = completed_steps + 1');
  if (opts.pid) sets.push(`current_pid = CASE WHEN ${TERMINAL_SQL} THEN 0 ELSE @pid END`, `current_pid_start = CASE WHEN ${TERMINAL_SQL} THEN '' ELSE @pid_start END`);
  if (sets.length === 0) return undefined;
  return {
    sql: `UPDATE runs SET ${sets.join(', ')}, updated_at = @now WHERE id = @id`,
    values: { id, now: nowIso(), ...(opts.pid ? { pid: opts.pid.current_pid, pid_start: opts.pid.current_pid_start } : {}) },
  };
}

/**
 * The data of a run's terminal event with `steps_completed` (the row's completed_steps) as its
 * last key: `head` + the number + `}` is the JSON text, so PostgreSQL can append the number it
 * reads in the same statement and both engines store the same text.
 */
export function finishEventHead(data: Record<string, unknown>): string {
  const { steps_completed: _ignored, ...rest } = data;
  const json = JSON.stringify(rest);
  return `${json.slice(0, -1)}${json === '{}' ? '' : ','}"steps_completed":`;
}
