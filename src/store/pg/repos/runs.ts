/**
 * The `runs` table on PostgreSQL: the statements of src/store/runs.ts (shared where the SQL is
 * dialect-neutral), and the queue claim as one `FOR UPDATE SKIP LOCKED` UPDATE in a transaction,
 * so concurrent claimers (other daemons on the same database) never get the same run.
 */
import { workspaceUpsert } from '../../workspaces.js';
import { ownerHostOf } from '../../owner.js';
import type { Async } from '../../async.js';
import { claimQueuedPlan, inClaimOrder, inOrder, mapQueued, mapRun, QUEUED_COLUMNS, type RunsRepo } from '../../runs.js';
import { finishEventHead, mapScope, runInsertValues, runListWhere, runRef, runStart, runTransition, runUpdate, RUN_INSERT_SQL, SCOPE_DROPS_SQL, scopeDropsValues } from '../../run-sql.js';
import { appliedWithEvent, eventPart, prefixed, withParts } from '../cte.js';
import { nowIso } from '../../sql.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';
import { artifactUpsertMany } from '../../artifacts.js';
import { createPgArtifactsRepo } from './artifacts.js';

/** How long PID writes wait for others to share their statement. */
const PID_BATCH_MS = 10;

/**
 * `current_pid` writes of many runs in one statement. Every running step shows its process
 * group once it has lived 25 ms (steps/bash.ts): with 20 runs in step, that was one UPDATE per
 * step of each, a fifth of all the statements of a day of short runs. Writes arriving within
 * PID_BATCH_MS go together (the last one per run wins); batches go one at a time, in order.
 */
function pidWriter(db: PgDb) {
  let queued = new Map<number, { pid: number; start: string; waiters: [() => void, (err: unknown) => void][] }>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  const flush = () => {
    timer = undefined;
    const batch = queued;
    queued = new Map();
    chain = chain.then(async () => {
      const rows = [...batch.entries()];
      try {
        // A finished run never gets a PID back (as in runUpdate). Plain assignments: sent again after a cut, they change nothing more.
        await db.query(
          `UPDATE runs SET current_pid = CASE WHEN runs.status IN ('completed', 'failed', 'cancelled') THEN 0 ELSE v.pid END,
             current_pid_start = CASE WHEN runs.status IN ('completed', 'failed', 'cancelled') THEN '' ELSE v.pid_start END,
             updated_at = ?
           FROM unnest(?::bigint[], ?::bigint[], ?::text[]) AS v(id, pid, pid_start)
           WHERE runs.id = v.id`,
          [nowIso(), rows.map(([id]) => id), rows.map(([, w]) => w.pid), rows.map(([, w]) => w.start)],
          { idempotent: true },
        );
        for (const [, w] of rows) for (const [ok] of w.waiters) ok();
      } catch (err) {
        for (const [, w] of rows) for (const [, fail] of w.waiters) fail(err);
      }
    });
  };
  return {
    show(id: number, pid: number, start: string): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const w = queued.get(id);
        if (w) {
          w.pid = pid;
          w.start = start;
          w.waiters.push([resolve, reject]);
        } else queued.set(id, { pid, start, waiters: [[resolve, reject]] });
        // Outside the caller's transaction, if any: the batch is not a part of it.
        timer ??= db.outsideTx(() => setTimeout(flush, PID_BATCH_MS));
      });
    },
  };
}

export function createPgRunsRepo(db: PgDb): Async<RunsRepo> {
  const pids = pidWriter(db);
  const artifactsRepo = createPgArtifactsRepo(db);
  const get = async (id: number) => {
    const row = await db.one('SELECT * FROM runs WHERE id = ?', [id]);
    return row ? mapRun(row) : undefined;
  };
  const getByUuid = async (uuid: string) => {
    const row = await db.one('SELECT * FROM runs WHERE run_uuid = ?', [uuid]);
    return row ? mapRun(row) : undefined;
  };

  return {
    async create(input) {
      const { rows } = await db.queryNamed(RUN_INSERT_SQL, runInsertValues(input));
      return mapRun(rows[0]!);
    },
    get,
    getByUuid,
    async find(idOrUuid) {
      const ref = runRef(idOrUuid);
      return ref === undefined ? undefined : 'id' in ref ? get(ref.id) : getByUuid(ref.uuid);
    },
    list(filter, page) {
      return pgListPage(db, { table: 'runs', where: runListWhere(filter, 'ILIKE'), orderBy: 'created_at DESC, id DESC', map: mapRun }, page);
    },
    async byGroup(groupId) {
      return (await db.all('SELECT * FROM runs WHERE run_group_id = ? ORDER BY created_at ASC, id ASC', [groupId])).map(mapRun);
    },
    async transition(id, to, patch) {
      const t = runTransition(id, to, patch);
      if (!t) return undefined;
      const { rows } = await db.queryNamed(t.sql, t.values);
      return rows[0] ? mapRun(rows[0]) : undefined;
    },
    async update(id, patch) {
      const u = runUpdate(id, patch);
      // Plain assignments: sending them twice changes nothing more.
      if (u) await db.query(u.sql, u.params, { idempotent: true });
    },
    async incrementCompletedSteps(id) {
      await db.query('UPDATE runs SET completed_steps = completed_steps + 1, updated_at = ? WHERE id = ?', [nowIso(), id]);
    },
    showPid(id, pid, pidStart) {
      return pids.show(id, pid, pidStart);
    },
    claimNext(ownerPid) {
      return db.tx(async () => {
        const now = nowIso();
        const row = await db.one(
          `UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?, started_at = COALESCE(started_at, ?), updated_at = ?
           WHERE id = (SELECT id FROM runs WHERE status = 'queued' AND run_mode <> 'distributed'
                       ORDER BY priority_rank DESC, id ASC LIMIT 1 FOR UPDATE SKIP LOCKED)
             AND status = 'queued'
           RETURNING *`,
          [ownerPid, ownerHostOf(ownerPid), now, now],
        );
        return row ? mapRun(row) : undefined;
      });
    },
    async claimQueued(o) {
      if (!(o.free > 0)) return [];
      // One statement: the plan, then the conditional claim of its runs (locked in id order, SKIP
      // LOCKED passing over those another claimer holds).
      const groups = Object.keys(o.caps);
      const { rows } = await db.queryNamed(
        `${claimQueuedPlan('run_group_id <> ALL(CAST(@exclude AS text[]))', 'unnest(CAST(@groups AS text[]), CAST(@caps AS int[])) AS cap(g, n)')}
         UPDATE runs SET status = 'running', owner_pid = @owner, owner_host = @host, started_at = COALESCE(started_at, @now), updated_at = @now
         WHERE id IN (SELECT id FROM runs WHERE id IN (SELECT id FROM picked) AND status = 'queued' ORDER BY id FOR UPDATE SKIP LOCKED)
           AND status = 'queued'
         RETURNING *`,
        { owner: o.ownerPid, host: ownerHostOf(o.ownerPid), now: o.at, scan: o.scan, free: o.free, exclude: o.exclude, groups, caps: groups.map((g) => o.caps[g]) },
      );
      return inClaimOrder(rows.map(mapRun));
    },
    async claim(ids, ownerPid) {
      if (ids.length === 0) return [];
      const now = nowIso();
      // One statement, no transaction: the rows are locked in id order and SKIP LOCKED passes over
      // those another claimer holds, so concurrent claims neither wait on nor deadlock each other.
      const { rows } = await db.query(
        `UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?, started_at = COALESCE(started_at, ?), updated_at = ?
         WHERE id IN (SELECT id FROM runs WHERE id = ANY(?::bigint[]) AND status = 'queued' ORDER BY id FOR UPDATE SKIP LOCKED)
           AND status = 'queued'
         RETURNING *`,
        [ownerPid, ownerHostOf(ownerPid), now, now, ids],
      );
      return inOrder(ids, rows.map(mapRun));
    },
    async start(id, ownerPid, event, patch) {
      // The run's change and its event in one statement (atomic without BEGIN/COMMIT).
      // With the workspace's row: its upsert is a part of the same statement, read back by the run's.
      const w = patch?.workspaceRow ? prefixed(workspaceUpsert(patch.workspaceRow), 'w_') : undefined;
      const s = runStart(id, ownerPid, patch, w ? 'w' : undefined);
      const q = withParts([['w', w], ['r', s], ['e', eventPart(event, { name: 'r' })]], 'r');
      // Its event is written only with the run's change: it tells whether a cut-off start was applied.
      const { rows } = await db.queryNamed(q.sql, q.values, { verify: appliedWithEvent(db, q, 'runs', id, () => db.query('SELECT * FROM runs WHERE id = ?', [id])) });
      return rows[0] ? mapRun(rows[0]) : undefined;
    },
    async finish(id, to, patch, event, artifacts = []) {
      const t = runTransition(id, to, patch);
      // The artifacts' upsert is a part of the same statement (rows sharing a key, which one
      // statement cannot both write, go first on their own).
      const a = artifacts.length > 0 ? artifactUpsertMany(artifacts) : undefined;
      if (!t || (artifacts.length > 0 && !a)) {
        if (artifacts.length > 0) await artifactsRepo.upsertMany(artifacts);
        if (!t) return undefined;
      }
      const e = eventPart(event, { name: 'r', data: "CAST(@head AS TEXT) || r.completed_steps || '}'", values: { head: finishEventHead(event.data) } });
      const q = withParts([['a', a], ['r', t], ['e', e]], 'r');
      const { rows } = await db.queryNamed(q.sql, q.values, { verify: appliedWithEvent(db, q, 'runs', id, () => db.query('SELECT * FROM runs WHERE id = ?', [id])) });
      return rows[0] ? mapRun(rows[0]) : undefined;
    },
    async listQueued(limit, excludeGroups) {
      const n = Number.isFinite(limit) && limit > 0 ? Math.trunc(limit) : 0;
      if (n === 0) return [];
      const rows = await db.all(
        `SELECT ${QUEUED_COLUMNS} FROM runs
         WHERE status = 'queued' AND run_mode <> 'distributed' AND run_group_id <> ALL(?::text[])
         ORDER BY priority_rank DESC, id ASC
         LIMIT ?`,
        [excludeGroups ?? [], n],
      );
      return rows.map(mapQueued);
    },
    async listActive() {
      const rows = await db.all(`SELECT * FROM runs WHERE (status = 'running' OR current_pid > 0) AND run_mode <> 'distributed' ORDER BY id`);
      return rows.map(mapRun);
    },
    async listUnfinishedByMode(mode) {
      const rows = await db.all(`SELECT * FROM runs WHERE status IN ('queued', 'running') AND run_mode = ? ORDER BY id`, [mode]);
      return rows.map(mapRun);
    },
    async countByStatus() {
      const rows = await db.all('SELECT status, COUNT(*) AS n FROM runs GROUP BY status');
      return Object.fromEntries(rows.map((r) => [r.status as string, Number(r.n)]));
    },
    async initScope(id, layers) {
      await db.query(
        `INSERT INTO run_scope (run_id, layers, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(run_id) DO UPDATE SET layers = excluded.layers, updated_at = excluded.updated_at`,
        [id, JSON.stringify(layers), nowIso()],
        { idempotent: true },
      );
    },
    async addScopeDrops(id, bySource, samples) {
      const add = Object.values(bySource).reduce((a, b) => a + b, 0);
      if (add === 0) return;
      await db.tx(async () => {
        // Lock the run row (and so serialise merges of one run's scope row across processes).
        if (!(await db.one('SELECT 1 FROM runs WHERE id = ? FOR UPDATE', [id]))) return;
        const row = await db.one('SELECT by_source, samples FROM run_scope WHERE run_id = ?', [id]);
        await db.queryNamed(SCOPE_DROPS_SQL, scopeDropsValues(id, add, row, bySource, samples));
      });
    },
    async scopeStats(id) {
      const row = await db.one('SELECT * FROM run_scope WHERE run_id = ?', [id]);
      return row ? mapScope(row) : undefined;
    },
    async delete(id) {
      await db.tx(async () => {
        await db.query('DELETE FROM artifacts WHERE run_id = ?', [id]);
        await db.query('DELETE FROM runs WHERE id = ?', [id]);
      });
    },
  };
}
