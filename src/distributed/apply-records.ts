/**
 * The master's side of the durable attempt records (src/distributed/records.ts) a worker writes
 * for each attempt of a run: `start` opens the attempt (with its cause, and a run.reattempt event
 * when the run is executed again), `rows` and `file` bring the assets, findings and files of the
 * attempt still holding the run, and `end` records its outcome — a result, an error (retried or
 * final) or a hand-back — and refuses a superseded attempt's late result (fencing).
 */
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import type { AttemptCause } from '../store/attempts.js';
import type { AssetInput } from '../store/assets.js';
import type { VulnInput } from '../store/vulns.js';
import { isSafeName } from '../util/fs-safe.js';
import { applyTaskResult, failRemoteRun } from './persist.js';
import { applyFileRecord, ensureWorkspace, newFileApplyCache, type FileApplyCache } from './files-apply.js';
import type { AttemptRecordMsg } from './records.js';

/** Attempt outcomes that ended the run itself (the run's terminal status, as a result records it). */
const RUN_END_OUTCOMES = new Set(['completed', 'failed', 'cancelled']);

/** What applying a record needs from the master. */
export interface RecordContext {
  app: AppContext;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /** Whether the worker is gone (no entry, or offline): a lost worker rather than a stalled task. */
  workerOffline: (workerId: string) => Promise<boolean>;
  /** The run's end was recorded: its task is no longer the master's to watch. */
  settled: (uuid: string) => void;
}

/**
 * What one pass over a batch of records keeps between them: the latest attempt of each run (only
 * start and end records add attempts, and they are applied in this pass) and the folders its file
 * records found or made.
 */
export interface RecordPass {
  latest: Map<string, number>;
  files: FileApplyCache;
  /** Work for after the pass's transaction committed (a run's webhooks); see runAfter. */
  after: (() => Promise<void>)[];
}

export function newRecordPass(): RecordPass {
  return { latest: new Map(), files: newFileApplyCache(), after: [] };
}

/** Runs the pass's deferred work (once its writes are committed); a failure is logged, never thrown. */
export async function runAfter(pass: Pick<RecordPass, 'after'>, log: RecordContext['log']): Promise<void> {
  for (const fn of pass.after.splice(0)) {
    try {
      await fn();
    } catch (err) {
      log('distributed: cannot finish a recorded run end (webhooks, execution log, diff snapshots)', { error: (err as Error).message });
    }
  }
}

/** Applies one attempt record of `run` (the run as the master has it); `pass` is the batch's. */
export async function applyAttemptRecord(ctx: RecordContext, run: RunRecord, rec: AttemptRecordMsg, pass: RecordPass = newRecordPass()): Promise<void> {
  const repos = ctx.app.repos;
  const uuid = rec.run_uuid;
  if (rec.kind === 'start') {
    // A first attempt has nothing before it to read or close.
    const prev = rec.attempt > 1 ? (await repos.attempts.listByRun(uuid)).filter((a) => a.attempt < rec.attempt) : [];
    const last = prev[prev.length - 1];
    let cause: AttemptCause = 'first';
    if (last) {
      if (last.outcome === 'error') cause = 'retry';
      else if (last.outcome === 'handed back') cause = 'handed back';
      else if (last.outcome === 'worker lost') cause = 'worker lost';
      else if (last.outcome === 'stalled') cause = 'stalled';
      else if (last.ended_at === null) cause = (await ctx.workerOffline(last.worker_id)) ? 'worker lost' : 'stalled';
      else cause = 'retry';
    }
    await repos.tx(async () => {
      if (rec.attempt > 1) await repos.attempts.endOlder(uuid, rec.attempt, cause === 'worker lost' ? 'worker lost' : 'stalled', `superseded by attempt ${rec.attempt}`);
      const inserted = await repos.attempts.start({ run_uuid: uuid, attempt: rec.attempt, worker_id: rec.worker_id, started_at: rec.at, cause });
      // `run` was read for this record: a run that waits moves to running (the update itself
      // checks the status again, so a run cancelled meanwhile stays cancelled).
      if (run.status === 'queued' || run.status === 'pending') await repos.runs.transition(run.id, 'running', { at: rec.at });
      if (inserted && rec.attempt > 1) {
        await repos.events.insert({
          topic: 'run.reattempt', name: 'run.reattempt', source: 'distributed', source_type: 'run', data_type: 'scan',
          data: { scan_id: uuid, target: run.target, attempt: rec.attempt, cause, worker_id: rec.worker_id, previous_worker: last?.worker_id ?? '' },
          workspace: run.workspace, run_id: uuid, workflow_name: run.workflow_name, processed: true,
        });
      }
    });
    pass.latest.delete(uuid);
    if (rec.attempt > 1) ctx.log('distributed run re-executed', { run_uuid: uuid, attempt: rec.attempt, cause, worker: rec.worker_id });
    return;
  }
  const latest = pass.latest.get(uuid) ?? (await repos.attempts.latest(uuid));
  // An end record may add its attempt (below): read afresh after it.
  if (rec.kind === 'end') pass.latest.delete(uuid);
  else pass.latest.set(uuid, latest);
  if (rec.kind === 'rows') {
    // Rows of a superseded attempt are dropped; replays are harmless (upserts merge by value).
    if (rec.attempt < latest || !isSafeName(rec.workspace)) return;
    await repos.tx(async () => {
      await ensureWorkspace(ctx.app, rec.workspace, rec.at, run.workflow_name);
      if (rec.table === 'assets') await repos.assets.upsertMany(rec.workspace, rec.rows as AssetInput[]);
      else await repos.vulns.upsertMany(rec.workspace, rec.rows as VulnInput[]);
    });
    return;
  }
  if (rec.kind === 'file') {
    const refused = await applyFileRecord(ctx.app, run, rec, latest, pass.files);
    if (refused) ctx.log('distributed: shipped file refused', { run_uuid: uuid, attempt: rec.attempt, path: rec.path, reason: refused });
    return;
  }
  if (rec.attempt < latest) {
    await repos.attempts.end(uuid, rec.attempt, 'refused', { at: rec.at, error: `result of attempt ${rec.attempt} refused: attempt ${latest} started since` });
    ctx.log('late result refused (fencing)', { run_uuid: uuid, attempt: rec.attempt, latest });
    return;
  }
  // The attempt's row, made here when its start record never arrived.
  const attempts = await repos.attempts.listByRun(uuid);
  const own = attempts.find((a) => a.attempt === rec.attempt);
  if (!own) await repos.attempts.start({ run_uuid: uuid, attempt: rec.attempt, worker_id: rec.worker_id, started_at: rec.at, cause: 'first' });
  if (rec.outcome === 'result' && rec.result) {
    // The run's end is seen for the first time: this attempt's end is not recorded yet, and no
    // other attempt ended the run (a worker that wrote the end into the shared database and
    // died before its end record is followed by one that finds the run ended and records it).
    const firstSight = (!own || own.ended_at === null) && !attempts.some((a) => a.attempt !== rec.attempt && RUN_END_OUTCOMES.has(a.outcome ?? ''));
    const r = await applyTaskResult(ctx.app, run, rec.result, { firstSight, defer: (fn) => pass.after.push(fn), files: pass.files });
    await repos.attempts.end(uuid, rec.attempt, rec.result.run.status, { at: rec.at, error: rec.result.run.error_message });
    ctx.settled(uuid);
    ctx.log('distributed run recorded', { run_uuid: uuid, status: r.run.status, worker: rec.worker_id, attempt: rec.attempt, steps: rec.result.steps.length });
  } else if (rec.outcome === 'error') {
    await repos.attempts.end(uuid, rec.attempt, 'error', { at: rec.at, error: rec.error });
    if (rec.final) {
      await failRemoteRun(ctx.app, run, rec.error || 'task failed', rec.at, (fn) => pass.after.push(fn));
      ctx.settled(uuid);
    } else {
      await repos.attempts.requeueRun(uuid);
    }
  } else {
    await repos.attempts.end(uuid, rec.attempt, rec.outcome === 'stalled' ? 'stalled' : 'handed back', { at: rec.at, error: rec.error });
    await repos.attempts.requeueRun(uuid);
  }
}
