/** The `step_results` table on PostgreSQL (statements shared with src/store/steps.ts where dialect-neutral). */
import type { Async } from '../../async.js';
import {
  groupNames,
  mapStep,
  planStepImport,
  stepInsertValues,
  stepListWhere,
  stepTransition,
  STEP_IMPORT_EXISTING_SQL,
  STEP_IMPORT_INSERT_SQL,
  STEP_IMPORT_UPDATE_SQL,
  STEP_INSERT_SQL,
  type StepFinishWrites,
  type StepKeyRow,
  type StepPatch,
  type StepsRepo,
} from '../../steps.js';
import type { StepStatus } from '../../types.js';
import { nowIso } from '../../sql.js';
import { runProgress } from '../../run-sql.js';
import { appliedWithEvent, eventPart, prefixed, withParts, type Part } from '../cte.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

/** Milliseconds from the started_at column to the @now parameter (both ISO 8601 text). */
const PG_ELAPSED_MS = 'GREATEST(0, ROUND(EXTRACT(EPOCH FROM (CAST(@now AS timestamptz) - CAST(started_at AS timestamptz))) * 1000))::bigint';

/**
 * The step's INSERT keyed by its new step_uuid: sent again after a connection lost with it in
 * flight, it adds nothing when the first one was applied (its row is then read by that key).
 */
const STEP_INSERT_ONCE_SQL = STEP_INSERT_SQL.replace(/RETURNING \*\s*$/, 'ON CONFLICT (step_uuid) DO NOTHING RETURNING *');

/** The CTE parts of a step's finish: the step (`s`), its event (`e`) and its run's progress (`r`). */
function finishParts(id: number, to: StepStatus, patch: StepPatch, writes: StepFinishWrites): [string, Part | undefined][] {
  const t = stepTransition(id, to, patch, PG_ELAPSED_MS);
  const p = runProgress(writes.runId, { count: writes.count, pid: writes.pid });
  return [
    ['s', t ? prefixed(t, 's_') : { sql: 'SELECT * FROM step_results WHERE false', values: {} }],
    ['e', eventPart(writes.event)],
    ['r', p ? prefixed(p, 'r_') : undefined],
  ];
}

export function createPgStepsRepo(db: PgDb): Async<StepsRepo> {
  return {
    async create(input) {
      const values = stepInsertValues(input);
      const byKey = () => db.query('SELECT * FROM step_results WHERE step_uuid = ?', [values.step_uuid]);
      const verify = async () => {
        const r = await byKey();
        return r.rows.length > 0 ? r : undefined;
      };
      const { rows } = await db.queryNamed(STEP_INSERT_ONCE_SQL, values, { verify });
      return mapStep(rows[0] ?? (await byKey()).rows[0]!);
    },
    async get(id) {
      const row = await db.one('SELECT * FROM step_results WHERE id = ?', [id]);
      return row ? mapStep(row) : undefined;
    },
    async transition(id, to, patch = {}) {
      const t = stepTransition(id, to, patch, PG_ELAPSED_MS);
      if (!t) return undefined;
      const { rows } = await db.queryNamed(t.sql, t.values);
      return rows[0] ? mapStep(rows[0]) : undefined;
    },
    async finish(id, to, patch, writes) {
      // The step, its event and its run's progress in one statement: one round trip, atomic.
      const q = withParts(finishParts(id, to, patch, writes), 's');
      // The event is part of the same statement: it tells whether a cut-off finish was applied.
      const { rows } = await db.queryNamed(q.sql, q.values, { verify: appliedWithEvent(db, q, 'step_results', id, () => db.query('SELECT * FROM step_results WHERE id = ?', [id])) });
      return rows[0] ? mapStep(rows[0]) : undefined;
    },
    async finishThenCreate(f, next) {
      // The next step's INSERT is one more part of the finish's statement, keyed by its step_uuid.
      const values = stepInsertValues(next);
      const n = prefixed({ sql: STEP_INSERT_ONCE_SQL, values }, 'n_');
      const q = withParts([...finishParts(f.id, f.to, f.patch, f.writes), ['n', n]], 'n');
      const byKey = () => db.query('SELECT * FROM step_results WHERE step_uuid = ?', [values.step_uuid]);
      const { rows } = await db.queryNamed(q.sql, q.values, { verify: appliedWithEvent(db, q, 'step_results', f.id, byKey) });
      return mapStep(rows[0] ?? (await byKey()).rows[0]!);
    },
    async runningNames(runId) {
      const rows = await db.all("SELECT step_name FROM step_results WHERE run_id = ? AND status = 'running' ORDER BY id", [runId]);
      return rows.map((r) => r.step_name as string);
    },
    async runningNamesOf(runIds) {
      if (runIds.length === 0) return {};
      return groupNames(await db.all("SELECT run_id, step_name FROM step_results WHERE run_id = ANY(?::bigint[]) AND status = 'running' ORDER BY id", [runIds]));
    },
    async listByRun(runId) {
      return (await db.all('SELECT * FROM step_results WHERE run_id = ? ORDER BY id ASC', [runId])).map(mapStep);
    },
    list(filter, page) {
      return pgListPage(db, { table: 'step_results', where: stepListWhere(filter), orderBy: 'id DESC', map: mapStep }, page);
    },
    importForRun(runId, runUuid, steps) {
      return db.tx(async () => {
        // Lock the run: two imports of the same run serialise like SQLite's IMMEDIATE transactions.
        await db.query('SELECT 1 FROM runs WHERE id = ? FOR UPDATE', [runId]);
        const plan = planStepImport((await db.all(STEP_IMPORT_EXISTING_SQL, [runId])) as StepKeyRow[], runId, runUuid, steps);
        for (const u of plan.updates) await db.queryNamed(STEP_IMPORT_UPDATE_SQL, u);
        for (const i of plan.inserts) await db.queryNamed(STEP_IMPORT_INSERT_SQL, i);
        return { inserted: plan.inserts.length, updated: plan.updates.length };
      });
    },
    async failUnfinished(runId, message) {
      const r = await db.query(
        `UPDATE step_results SET status = 'failed', completed_at = ?, error_message = ?
         WHERE run_id = ? AND status IN ('pending', 'running')`,
        [nowIso(), message, runId],
      );
      return r.rowCount;
    },
  };
}
