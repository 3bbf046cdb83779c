/**
 * The `runs` table. `transition` is the one place a run's status changes: a conditional UPDATE
 * that only matches rows in an allowed source state, so concurrent writers cannot both win and
 * terminal states (completed, failed, cancelled) are never overwritten.
 */
import { workspaceUpsert } from './workspaces.js';
import { ownerHostOf } from './owner.js';
import { listPage, nowIso, parseJson, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page, Priority, RunStatus } from './types.js';
import type { OrgFilter } from './org-constants.js';
import { finishEventHead, mapScope, runInsertValues, runListWhere, runRef, runStart, runTransition, runUpdate, RUN_INSERT_SQL, SCOPE_DROPS_SQL, scopeDropsValues, type RunStartPatch } from './run-sql.js';
import { eventInsertValues, EVENT_INSERT_SQL, type EventInput } from './events.js';
import { artifactValues, ARTIFACT_UPSERT_SQL, type ArtifactInput } from './artifacts.js';


export interface RunRecord {
  id: number;
  run_uuid: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params: Record<string, string>;
  status: RunStatus;
  workspace: string;
  started_at: string | null;
  completed_at: string | null;
  error_message: string;
  schedule_id: string;
  trigger_type: string;
  trigger_name: string;
  run_group_id: string;
  priority: Priority;
  priority_rank: number;
  run_mode: string;
  total_steps: number;
  completed_steps: number;
  current_pid: number;
  /** Start time of `current_pid` (see migration 005); '' when unknown. */
  current_pid_start: string;
  hooks_enabled: boolean;
  timeout_seconds: number;
  runner_type: string;
  options: Record<string, unknown>;
  owner_pid: number;
  /** Host of `owner_pid` (migration 017; '' for older rows and runs without an owner). */
  owner_host: string;
  /** Attempt of a distributed run allowed to write it (migration 019; 0 for runs never claimed by a worker). */
  fence_attempt?: number;
  created_at: string;
  updated_at: string;
  /** The org the run belongs to (migration 007); not part of the API's run JSON. */
  org_uuid?: string;
}

export interface RunCreateInput {
  run_uuid?: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params?: Record<string, string>;
  status?: 'pending' | 'queued' | 'running';
  workspace?: string;
  schedule_id?: string;
  trigger_type?: string;
  trigger_name?: string;
  run_group_id?: string;
  priority?: Priority;
  run_mode?: string;
  total_steps?: number;
  hooks_enabled?: boolean;
  timeout_seconds?: number;
  runner_type?: string;
  options?: object;
  owner_pid?: number;
  /** The run's org; default: the org of its workspace's row, else the default org. */
  org_uuid?: string;
}

export interface RunListFilter {
  status?: RunStatus;
  workflow_name?: string;
  /** Substring of the target. */
  target?: string;
  workspace?: string;
  run_group_id?: string;
  /** Only runs of this org (uuid). */
  org_uuid?: OrgFilter;
}

export type RunPatch = Partial<{
  total_steps: number;
  completed_steps: number;
  workspace: string;
  current_pid: number;
  /** Start time of `current_pid` (see migration 005); '' when unknown. */
  current_pid_start: string;
  params: Record<string, string>;
  options: object;
  owner_pid: number;
  run_group_id: string;
}>;

export interface RunsRepo {
  /** Inserts a run (default status 'queued'); 'running' also sets started_at. */
  create(input: RunCreateInput): RunRecord;
  get(id: number): RunRecord | undefined;
  getByUuid(uuid: string): RunRecord | undefined;
  /** Looks a run up by numeric id (a number or an all-digits string) or by run_uuid. */
  find(idOrUuid: string | number): RunRecord | undefined;
  /** Filtered page, newest first (created_at DESC, id DESC). */
  list(filter: RunListFilter, page: Page): ListResult<RunRecord>;
  /** Every run of a job, oldest first. */
  byGroup(groupId: string): RunRecord[];
  /**
   * Moves a run to `to` when allowed from its current status; undefined (row untouched) otherwise.
   * `at` is when the change happened elsewhere (a distributed worker); default now.
   */
  transition(id: number, to: RunStatus, patch?: { error_message?: string; at?: string }): RunRecord | undefined;
  /** Updates progress and bookkeeping columns; never the status. */
  update(id: number, patch: RunPatch): void;
  /** Adds one finished step to completed_steps. */
  incrementCompletedSteps(id: number): void;
  /**
   * Shows the run's live process group (`current_pid`, and its start time; 0 and '' clear it) —
   * never on a finished run. In order per store: a later call for a run is never overtaken by an
   * earlier one. On PostgreSQL the calls of a few milliseconds go in one statement.
   */
  showPid(id: number, pid: number, pidStart: string): void;
  /** Claims the next queued run (highest priority, then oldest) for `ownerPid`, moving it to running. */
  claimNext(ownerPid: number): RunRecord | undefined;
  /**
   * Claims the runs `ids` that are still queued for `ownerPid` (queued → running, owner written in
   * the same statement), skipping any another claimer took or holds; returns them in the order of `ids`.
   */
  claim(ids: number[], ownerPid: number): RunRecord[];
  /**
   * Lists and claims in one write (one statement on PostgreSQL): up to `free` queued runs in claim
   * order (priority, then FIFO; no distributed run, no job of `exclude`), at most `caps[job]` of
   * each job, stopping at the first run of a job `caps` does not name (the caller plans those).
   * Claimed as `claim` does, with `updated_at` = `at`; returned in claim order.
   */
  claimQueued(opts: ClaimQueuedOptions): RunRecord[];
  /**
   * Starts executing a run: pending|queued → running (one already running stays so), owned by
   * `ownerPid`, with `event` (run.started) in the same transaction. Undefined, and nothing
   * written, when the run is missing or finished. `patch` writes the run's workspace (its org
   * follows the workspace's row, as in `update`) and step count in the same statement.
   */
  start(id: number, ownerPid: number, event: EventInput, patch?: RunStartPatch): RunRecord | undefined;
  /**
   * The terminal transition with its event in one transaction; the event's data gets
   * `steps_completed` (the row's completed_steps) as its last key. Undefined, and no event, when
   * the run cannot move to `to` (already finished). `artifacts` (the run's reports and state
   * files) are upserted in the same transaction, whether or not the run moved.
   */
  finish(id: number, to: 'completed' | 'failed' | 'cancelled', patch: { error_message?: string }, event: RunFinishEvent, artifacts?: ArtifactInput[]): RunRecord | undefined;
  /**
   * Queued runs in claim order (priority, then FIFO), skipping jobs in `excludeGroups` (served by
   * idx_runs_queue): only what the queue plans a claim with; the claim returns the whole rows.
   */
  listQueued(limit: number, excludeGroups: string[]): QueuedRun[];
  /** Runs that are running or still record a live process id (for reconciliation after a crash). */
  listActive(): RunRecord[];
  /** Queued or running runs of one run_mode, oldest first (the distributed master's reconciliation). */
  listUnfinishedByMode(mode: string): RunRecord[];
  /** Number of runs per status (statuses without runs are absent). */
  countByStatus(): Record<string, number>;
  /** Deletes a run with its steps and artifacts. */
  delete(id: number): void;
  /** Records that a run has a target scope (its layers as entry texts); keeps existing counts. */
  initScope(id: number, layers: RunScopeLayer[]): void;
  /** Adds dropped-value counts (by source) and samples to a run's scope row (created when missing). */
  addScopeDrops(id: number, bySource: Record<string, number>, samples: { source: string; value: string }[]): void;
  /** The scope row of a run (undefined when the run had no scope). */
  scopeStats(id: number): RunScopeStats | undefined;
}

/** A run's terminal event: its data object gets `steps_completed` from the finished row. */
export type RunFinishEvent = EventInput & { data: Record<string, unknown> };

/** One layer of a run's target scope, as recorded (docs/scope.md). */
export interface RunScopeLayer {
  name: string;
  include: string[];
  exclude: string[];
}

/** Out-of-scope values dropped during a run (migration 015). */
export interface RunScopeStats {
  dropped: number;
  by_source: Record<string, number>;
  samples: { source: string; value: string }[];
  layers: RunScopeLayer[];
}

/** What the queue plans a claim with: the run, its job (group) and the job's options (its concurrency). */
/** What RunsRepo.claimQueued claims. */
export interface ClaimQueuedOptions {
  free: number;
  /** Runs looked at (in claim order) at most. */
  scan: number;
  exclude: string[];
  /** Runs each job (run_group_id) may still start. */
  caps: Record<string, number>;
  ownerPid: number;
  /** The claim's time (ISO 8601): started_at of a run not started before, and updated_at. */
  at: string;
}

/**
 * The candidates and the plan of claimQueued (named parameters scan, free, and the engine's
 * `exclude` and `caps` relations): runs in claim order, each numbered in its job, cut at the first
 * run of a job without a cap.
 */
export function claimQueuedPlan(excludeSql: string, capsSql: string): string {
  return `WITH c AS (
       SELECT id, run_group_id AS g, priority_rank FROM runs
       WHERE status = 'queued' AND run_mode <> 'distributed' AND ${excludeSql}
       ORDER BY priority_rank DESC, id ASC
       LIMIT @scan
     ), o AS (
       SELECT c.*, row_number() OVER (ORDER BY priority_rank DESC, id ASC) AS pos,
         row_number() OVER (PARTITION BY g ORDER BY priority_rank DESC, id ASC) AS rn
       FROM c
     ), k AS (
       SELECT o.*, cap.n AS cap FROM o LEFT JOIN ${capsSql} ON cap.g = o.g
     ), picked AS (
       SELECT id FROM k
       WHERE pos < COALESCE((SELECT MIN(pos) FROM k WHERE g <> '' AND cap IS NULL), 2147483647)
         AND (g = '' OR rn <= cap)
       ORDER BY pos
       LIMIT @free
     )`;
}

/** Claimed rows in claim order (RETURNING gives them in no particular order). */
export function inClaimOrder(rows: RunRecord[]): RunRecord[] {
  return rows.sort((a, b) => b.priority_rank - a.priority_rank || a.id - b.id);
}

export interface QueuedRun {
  id: number;
  run_group_id: string;
  options: Record<string, unknown>;
}

/** The columns of a QueuedRun (both engines). */
export const QUEUED_COLUMNS = 'id, run_group_id, options';

/** Maps a row of QUEUED_COLUMNS. */
export function mapQueued(row: Row): QueuedRun {
  return { id: Number(row.id), run_group_id: String(row.run_group_id ?? ''), options: parseJson<Record<string, unknown>>(row.options, {}) };
}

/** Maps a runs row to its record (JSON parsed, booleans restored). */
export function mapRun(row: Row): RunRecord {
  return {
    ...(row as unknown as RunRecord),
    params: parseJson<Record<string, string>>(row.params, {}),
    options: parseJson<Record<string, unknown>>(row.options, {}),
    hooks_enabled: row.hooks_enabled === 1,
  };
}

/** `runs` in the order of `ids` (a claim's RETURNING rows come in no particular order). */
export function inOrder(ids: number[], runs: RunRecord[]): RunRecord[] {
  const at = new Map(ids.map((id, i) => [id, i]));
  return runs.sort((a, b) => (at.get(a.id) ?? 0) - (at.get(b.id) ?? 0));
}

/** Creates the runs repository on one connection. */
export function createRunsRepo(db: Db, q: StatementCache): RunsRepo {
  const get = (id: number): RunRecord | undefined => {
    const row = q('SELECT * FROM runs WHERE id = ?').get(id) as Row | undefined;
    return row ? mapRun(row) : undefined;
  };
  const getByUuid = (uuid: string): RunRecord | undefined => {
    const row = q('SELECT * FROM runs WHERE run_uuid = ?').get(uuid) as Row | undefined;
    return row ? mapRun(row) : undefined;
  };

  const transition = (id: number, to: RunStatus, patch: { error_message?: string; at?: string } = {}): RunRecord | undefined => {
    const t = runTransition(id, to, patch);
    if (!t) return undefined;
    const row = q(t.sql).get(t.values) as Row | undefined;
    return row ? mapRun(row) : undefined;
  };

  return {
    create(input) {
      return mapRun(q(RUN_INSERT_SQL).get(runInsertValues(input)) as Row);
    },

    get,
    getByUuid,

    find(idOrUuid) {
      const ref = runRef(idOrUuid);
      return ref === undefined ? undefined : 'id' in ref ? get(ref.id) : getByUuid(ref.uuid);
    },

    list(filter, page) {
      return listPage(db, q, { table: 'runs', where: runListWhere(filter, 'LIKE'), orderBy: 'created_at DESC, id DESC', map: mapRun }, page);
    },

    byGroup(groupId) {
      return (q('SELECT * FROM runs WHERE run_group_id = ? ORDER BY created_at ASC, id ASC').all(groupId) as Row[]).map(mapRun);
    },

    transition,

    update(id, patch) {
      const u = runUpdate(id, patch);
      if (u) q(u.sql).run(...u.params);
    },

    incrementCompletedSteps(id) {
      q('UPDATE runs SET completed_steps = completed_steps + 1, updated_at = ? WHERE id = ?').run(nowIso(), id);
    },

    claimNext(ownerPid) {
      return db
        .transaction(() => {
          const now = nowIso();
          const row = q(
            `UPDATE runs SET status = 'running', owner_pid = @owner, owner_host = @host, started_at = COALESCE(started_at, @now), updated_at = @now
             WHERE id = (SELECT id FROM runs WHERE status = 'queued' AND run_mode <> 'distributed' ORDER BY priority_rank DESC, id ASC LIMIT 1)
               AND status = 'queued'
             RETURNING *`,
          ).get({ owner: ownerPid, host: ownerHostOf(ownerPid), now }) as Row | undefined;
          return row ? mapRun(row) : undefined;
        })
        .immediate();
    },

    claimQueued(o) {
      if (!(o.free > 0)) return [];
      const rows = db
        .transaction(
          () =>
            q(
              `${claimQueuedPlan('run_group_id NOT IN (SELECT value FROM json_each(@exclude))', '(SELECT key AS g, value AS n FROM json_each(@caps)) AS cap')}
               UPDATE runs SET status = 'running', owner_pid = @owner, owner_host = @host, started_at = COALESCE(started_at, @now), updated_at = @now
               WHERE id IN (SELECT id FROM picked) AND status = 'queued'
               RETURNING *`,
            ).all({ owner: o.ownerPid, host: ownerHostOf(o.ownerPid), now: o.at, scan: o.scan, free: o.free, exclude: JSON.stringify(o.exclude), caps: JSON.stringify(o.caps) }) as Row[],
        )
        .immediate();
      return inClaimOrder(rows.map(mapRun));
    },

    claim(ids, ownerPid) {
      if (ids.length === 0) return [];
      const now = nowIso();
      const rows = db
        .transaction(
          () =>
            q(
              `UPDATE runs SET status = 'running', owner_pid = @owner, owner_host = @host, started_at = COALESCE(started_at, @now), updated_at = @now
               WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'queued'
               RETURNING *`,
            ).all({ owner: ownerPid, host: ownerHostOf(ownerPid), now, ids: JSON.stringify(ids) }) as Row[],
        )
        .immediate();
      return inOrder(ids, rows.map(mapRun));
    },

    start(id, ownerPid, event, patch) {
      return db
        .transaction(() => {
          if (patch?.workspaceRow) {
            const w = workspaceUpsert(patch.workspaceRow);
            q(w.sql).get(w.values);
          }
          const s = runStart(id, ownerPid, patch);
          const row = q(s.sql).get(s.values) as Row | undefined;
          if (!row) return undefined;
          q(EVENT_INSERT_SQL).run(eventInsertValues(event));
          return mapRun(row);
        })
        .immediate();
    },

    finish(id, to, patch, event, artifacts = []) {
      return db
        .transaction(() => {
          for (const a of artifacts) q(ARTIFACT_UPSERT_SQL).run(artifactValues(a));
          const next = transition(id, to, patch);
          if (!next) return undefined;
          q(EVENT_INSERT_SQL).run(eventInsertValues({ ...event, data: `${finishEventHead(event.data)}${next.completed_steps}}` }));
          return next;
        })
        .immediate();
    },

    showPid(id, pid, pidStart) {
      const u = runUpdate(id, { current_pid: pid, current_pid_start: pidStart })!;
      q(u.sql).run(...u.params);
    },

    listQueued(limit, excludeGroups) {
      const n = Number.isFinite(limit) && limit > 0 ? Math.trunc(limit) : 0;
      if (n === 0) return [];
      const rows = q(
        `SELECT ${QUEUED_COLUMNS} FROM runs
         WHERE status = 'queued' AND run_mode <> 'distributed' AND run_group_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY priority_rank DESC, id ASC
         LIMIT ?`,
      ).all(JSON.stringify(excludeGroups ?? []), n) as Row[];
      return rows.map(mapQueued);
    },

    listActive() {
      // No ORDER BY: it would make the planner trade the two index lookups for a table scan.
      // Distributed runs execute on workers: the master reconciles them against the task queue.
      const rows = q(`SELECT * FROM runs WHERE (status = 'running' OR current_pid > 0) AND run_mode <> 'distributed'`).all() as Row[];
      return rows.map(mapRun).sort((x, y) => x.id - y.id);
    },

    listUnfinishedByMode(mode) {
      const rows = q(`SELECT * FROM runs WHERE status IN ('queued', 'running') AND run_mode = ?`).all(mode) as Row[];
      return rows.map(mapRun).sort((x, y) => x.id - y.id);
    },

    countByStatus() {
      const rows = q('SELECT status, COUNT(*) AS n FROM runs GROUP BY status').all() as { status: string; n: number }[];
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },

    initScope(id, layers) {
      q(`INSERT INTO run_scope (run_id, layers, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(run_id) DO UPDATE SET layers = excluded.layers, updated_at = excluded.updated_at`).run(id, JSON.stringify(layers), nowIso());
    },

    addScopeDrops(id, bySource, samples) {
      const add = Object.values(bySource).reduce((a, b) => a + b, 0);
      if (add === 0) return;
      db.transaction(() => {
        if (!q('SELECT 1 FROM runs WHERE id = ?').get(id)) return;
        const row = q('SELECT by_source, samples FROM run_scope WHERE run_id = ?').get(id) as Row | undefined;
        q(SCOPE_DROPS_SQL).run(scopeDropsValues(id, add, row, bySource, samples));
      }).immediate();
    },

    scopeStats(id) {
      const row = q('SELECT * FROM run_scope WHERE run_id = ?').get(id) as Row | undefined;
      return row ? mapScope(row) : undefined;
    },

    delete(id) {
      db.transaction(() => {
        // step_results go with the run through ON DELETE CASCADE; artifacts carry no foreign key.
        q('DELETE FROM artifacts WHERE run_id = ?').run(id);
        q('DELETE FROM runs WHERE id = ?').run(id);
      }).immediate();
    },
  };
}
