/**
 * The `run_attempts` table (migration 016): one row per execution of a distributed run. The
 * attempt number is the fencing token handed out by Redis; the master writes these rows from the
 * workers' durable start/end records, idempotently (UNIQUE run_uuid + attempt).
 */
import { inTransaction, nowIso, type Db, type StatementCache } from './sql.js';

export type AttemptOutcome = 'running' | 'completed' | 'failed' | 'cancelled' | 'error' | 'stalled' | 'worker lost' | 'refused' | 'handed back';
export type AttemptCause = 'first' | 'stalled' | 'worker lost' | 'retry' | 'handed back';

export interface AttemptRecord {
  run_uuid: string;
  attempt: number;
  worker_id: string;
  started_at: string;
  ended_at: string | null;
  outcome: AttemptOutcome;
  cause: AttemptCause;
  error: string;
}

export interface AttemptsRepo {
  /** Records the start of an attempt (no-op when it is already recorded); true when inserted. */
  start(a: { run_uuid: string; attempt: number; worker_id: string; started_at?: string; cause: AttemptCause }): boolean;
  /** Ends an attempt still open; true when it changed. */
  end(runUuid: string, attempt: number, outcome: AttemptOutcome, opts?: { at?: string; error?: string }): boolean;
  /** Ends every open attempt of a run numbered below `attempt` (superseded by a newer one). */
  endOlder(runUuid: string, attempt: number, outcome: AttemptOutcome, error?: string): number;
  get(runUuid: string, attempt: number): AttemptRecord | undefined;
  listByRun(runUuid: string): AttemptRecord[];
  /** Highest attempt number recorded for a run (0 when none). */
  latest(runUuid: string): number;
  /** Counts per worker and outcome (worker totals that survive restarts). */
  totalsByWorker(): Record<string, Record<string, number>>;
  /** Counts of attempts by cause (stalls, retries…). */
  countByCause(): Record<string, number>;
  /** running → queued for a distributed run waiting for a worker again (after a stall or hand-back). */
  requeueRun(runUuid: string): boolean;
  /**
   * A worker writing straight into the shared database takes the run for `attempt`: raises the
   * run's fence (`runs.fence_attempt`, migration 019) so every write of an older attempt is
   * refused from now on, and clears what an earlier attempt left (steps, artifacts, progress).
   * `superseded` when a newer attempt holds the fence, `finished` when the run already ended.
   */
  claimRun(runUuid: string, attempt: number): ClaimOutcome;
  /**
   * The worker holding `attempt` gives the run up (it stops, or lost its lease): the fence moves
   * one past it, so nothing of this attempt is written any more, and a run still open waits in
   * `queued` for the next attempt. False when the attempt no longer holds the run.
   */
  releaseRun(runUuid: string, attempt: number): boolean;
}

export type ClaimOutcome = 'claimed' | 'superseded' | 'finished' | 'missing';

/** Terminal run statuses (a finished run is never executed again). */
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** The writes of claimRun once the run's row is held (positional parameters, both engines). */
export const CLAIM_SQL = {
  raise: `UPDATE runs SET fence_attempt = ?, completed_steps = 0, error_message = '', current_pid = 0, updated_at = ? WHERE id = ?`,
  clearSteps: 'DELETE FROM step_results WHERE run_id = ?',
  clearArtifacts: 'DELETE FROM artifacts WHERE run_id = ?',
  release: `UPDATE runs SET fence_attempt = ?, current_pid = 0, updated_at = ?,
     status = CASE WHEN status IN ('running', 'pending') THEN 'queued' ELSE status END WHERE id = ?`,
} as const;

/** What claimRun does with the run's row (read under the engine's lock): the outcome, and whether to write. */
export function claimDecision(row: { status: string; fence_attempt: number } | undefined, attempt: number): ClaimOutcome {
  if (!row) return 'missing';
  if (Number(row.fence_attempt) > attempt) return 'superseded';
  if (FINISHED.has(row.status)) return 'finished';
  return 'claimed';
}

/** The statements of the attempts repository (positional parameters; dialect-neutral, shared with PostgreSQL). */
export const ATTEMPT_SQL = {
  start: `INSERT INTO run_attempts (run_uuid, attempt, worker_id, started_at, cause) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (run_uuid, attempt) DO NOTHING`,
  end: 'UPDATE run_attempts SET ended_at = ?, outcome = ?, error = ? WHERE run_uuid = ? AND attempt = ? AND ended_at IS NULL',
  endOlder: 'UPDATE run_attempts SET ended_at = ?, outcome = ?, error = ? WHERE run_uuid = ? AND attempt < ? AND ended_at IS NULL',
  get: 'SELECT run_uuid, attempt, worker_id, started_at, ended_at, outcome, cause, error FROM run_attempts WHERE run_uuid = ? AND attempt = ?',
  listByRun: 'SELECT run_uuid, attempt, worker_id, started_at, ended_at, outcome, cause, error FROM run_attempts WHERE run_uuid = ? ORDER BY attempt',
  latest: 'SELECT MAX(attempt) AS n FROM run_attempts WHERE run_uuid = ?',
  totalsByWorker: 'SELECT worker_id, outcome, COUNT(*) AS n FROM run_attempts GROUP BY worker_id, outcome',
  countByCause: 'SELECT cause, COUNT(*) AS n FROM run_attempts GROUP BY cause',
  requeueRun: `UPDATE runs SET status = 'queued', updated_at = ?, current_pid = 0 WHERE run_uuid = ? AND status = 'running' AND run_mode = 'distributed'`,
} as const;

/** Per-worker, per-outcome counts from the totalsByWorker rows. */
export function workerTotals(rows: { worker_id: unknown; outcome: unknown; n: unknown }[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) (out[String(r.worker_id)] ??= {})[String(r.outcome)] = Number(r.n);
  return out;
}

export function createAttemptsRepo(db: Db, q: StatementCache): AttemptsRepo {
  return {
    start(a) {
      return q(ATTEMPT_SQL.start).run(a.run_uuid, a.attempt, a.worker_id, a.started_at ?? nowIso(), a.cause).changes > 0;
    },
    end(runUuid, attempt, outcome, opts = {}) {
      return q(ATTEMPT_SQL.end).run(opts.at ?? nowIso(), outcome, opts.error ?? '', runUuid, attempt).changes > 0;
    },
    endOlder(runUuid, attempt, outcome, error = '') {
      return q(ATTEMPT_SQL.endOlder).run(nowIso(), outcome, error, runUuid, attempt).changes;
    },
    get(runUuid, attempt) {
      return q(ATTEMPT_SQL.get).get(runUuid, attempt) as AttemptRecord | undefined;
    },
    listByRun(runUuid) {
      return q(ATTEMPT_SQL.listByRun).all(runUuid) as AttemptRecord[];
    },
    latest(runUuid) {
      const row = q(ATTEMPT_SQL.latest).get(runUuid) as { n: number | null };
      return row.n ?? 0;
    },
    totalsByWorker() {
      return workerTotals(q(ATTEMPT_SQL.totalsByWorker).all() as { worker_id: string; outcome: string; n: number }[]);
    },
    countByCause() {
      const rows = q(ATTEMPT_SQL.countByCause).all() as { cause: string; n: number }[];
      return Object.fromEntries(rows.map((r) => [r.cause, r.n]));
    },
    requeueRun(runUuid) {
      return q(ATTEMPT_SQL.requeueRun).run(nowIso(), runUuid).changes > 0;
    },
    claimRun(runUuid, attempt) {
      return inTransaction(db, () => {
        const row = q('SELECT id, status, fence_attempt FROM runs WHERE run_uuid = ?').get(runUuid) as { id: number; status: string; fence_attempt: number } | undefined;
        const outcome = claimDecision(row, attempt);
        if (outcome !== 'claimed' || !row) return outcome;
        q(CLAIM_SQL.raise).run(attempt, nowIso(), row.id);
        q(CLAIM_SQL.clearSteps).run(row.id);
        q(CLAIM_SQL.clearArtifacts).run(row.id);
        return outcome;
      });
    },
    releaseRun(runUuid, attempt) {
      return inTransaction(db, () => {
        const row = q('SELECT id, fence_attempt FROM runs WHERE run_uuid = ?').get(runUuid) as { id: number; fence_attempt: number } | undefined;
        if (!row || Number(row.fence_attempt) !== attempt) return false;
        q(CLAIM_SQL.release).run(attempt + 1, nowIso(), row.id);
        return true;
      });
    },
  };
}
