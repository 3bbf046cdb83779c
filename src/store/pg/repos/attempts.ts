/** The `run_attempts` table on PostgreSQL (the statements of src/store/attempts.ts). */
import type { Async } from '../../async.js';
import { ATTEMPT_SQL, CLAIM_SQL, claimDecision, workerTotals, type AttemptRecord, type AttemptsRepo } from '../../attempts.js';
import { nowIso } from '../../sql.js';
import type { PgDb } from '../db.js';

export function createPgAttemptsRepo(db: PgDb): Async<AttemptsRepo> {
  const changed = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount;
  return {
    async start(a) {
      return (await changed(ATTEMPT_SQL.start, [a.run_uuid, a.attempt, a.worker_id, a.started_at ?? nowIso(), a.cause])) > 0;
    },
    async end(runUuid, attempt, outcome, opts = {}) {
      return (await changed(ATTEMPT_SQL.end, [opts.at ?? nowIso(), outcome, opts.error ?? '', runUuid, attempt])) > 0;
    },
    endOlder(runUuid, attempt, outcome, error = '') {
      return changed(ATTEMPT_SQL.endOlder, [nowIso(), outcome, error, runUuid, attempt]);
    },
    async get(runUuid, attempt) {
      return (await db.one(ATTEMPT_SQL.get, [runUuid, attempt])) as AttemptRecord | undefined;
    },
    async listByRun(runUuid) {
      return (await db.all(ATTEMPT_SQL.listByRun, [runUuid])) as unknown as AttemptRecord[];
    },
    async latest(runUuid) {
      return Number((await db.one(ATTEMPT_SQL.latest, [runUuid]))?.n ?? 0);
    },
    async totalsByWorker() {
      return workerTotals((await db.all(ATTEMPT_SQL.totalsByWorker)) as { worker_id: unknown; outcome: unknown; n: unknown }[]);
    },
    async countByCause() {
      return Object.fromEntries((await db.all(ATTEMPT_SQL.countByCause)).map((r) => [String(r.cause), Number(r.n)]));
    },
    async requeueRun(runUuid) {
      return (await changed(ATTEMPT_SQL.requeueRun, [nowIso(), runUuid])) > 0;
    },
    claimRun(runUuid, attempt) {
      return db.tx(async () => {
        // FOR UPDATE waits for every fenced statement already past its check (they hold FOR KEY SHARE).
        const row = (await db.one('SELECT id, status, fence_attempt FROM runs WHERE run_uuid = ? FOR UPDATE', [runUuid])) as { id: number; status: string; fence_attempt: number } | undefined;
        const outcome = claimDecision(row, attempt);
        if (outcome !== 'claimed' || !row) return outcome;
        await db.query(CLAIM_SQL.raise, [attempt, nowIso(), row.id]);
        await db.query(CLAIM_SQL.clearSteps, [row.id]);
        await db.query(CLAIM_SQL.clearArtifacts, [row.id]);
        return outcome;
      });
    },
    releaseRun(runUuid, attempt) {
      return db.tx(async () => {
        const row = (await db.one('SELECT id, fence_attempt FROM runs WHERE run_uuid = ? FOR UPDATE', [runUuid])) as { id: number; fence_attempt: number } | undefined;
        if (!row || Number(row.fence_attempt) !== attempt) return false;
        await db.query(CLAIM_SQL.release, [attempt + 1, nowIso(), row.id]);
        return true;
      });
    },
  };
}
