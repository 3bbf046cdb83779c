/**
 * The master's side of a finished task: the worker's record of the run (status, timestamps,
 * steps, events, artifact metadata) written into the master's database in one transaction.
 * Idempotent — steps are keyed by run + module/name/index, events by their event_id, artifacts by
 * run + workspace/name/path — so a result seen twice (queue event and reconciliation sweep, or a
 * master restart) never duplicates rows. Terminal statuses stay sticky: a run cancelled on the
 * master stays cancelled even when the worker finished it first.
 */
import type { AppContext } from '../services/context.js';
import type { RunRecord } from '../store/index.js';
import { notifyRunFinished } from '../events/webhooks.js';
import { recordRunDiff } from '../services/diffs.js';
import type { TaskResult } from './protocol.js';
import { appendExecutionLog, forgetShippedFiles, shippedFilePath, workspaceRoot, type FileApplyCache } from './files-apply.js';
import { isSafeName } from '../util/fs-safe.js';
import { isAbsolute } from 'node:path';

export interface PersistOutcome {
  /** The run changed status (false when it was already terminal). */
  transitioned: boolean;
  run: RunRecord;
  steps: { inserted: number; updated: number };
  events: number;
}

/**
 * Takes work to do once the caller's transaction committed (the master applies a batch of records
 * in one): the webhooks of a run's end are not sent for a write that may still roll back.
 */
export type Defer = (fn: () => Promise<void>) => void;

/** Runs `fn` now, or hands it to `defer`. */
async function later(defer: Defer | undefined, fn: () => Promise<void>): Promise<void> {
  if (defer) defer(fn);
  else await fn();
}

async function notify(app: AppContext, run: RunRecord): Promise<void> {
  if ((run.options as { disableNotification?: boolean })?.disableNotification) return;
  // No webhooks to send: the artifacts are not read.
  if (!app.settings().settings.notification?.enabled) return;
  const artifacts = await app.repos.artifacts.listByRun(run.id);
  // Delivered in the background with its own retries; failures are recorded as events, never thrown.
  void notifyRunFinished(app, run, artifacts).catch(() => undefined);
}

/**
 * Writes a worker's result for `run`. A `direct` result (the worker wrote the run, its steps and
 * events straight into this database) only has its artifact rows replaced by ones naming the
 * master's copies of the shipped files; `firstSight` (the attempt's end is being recorded for the
 * first time) then decides the webhooks, since the worker already wrote the terminal status.
 */
export async function applyTaskResult(app: AppContext, run: RunRecord, result: TaskResult, opts: { firstSight?: boolean; defer?: Defer; files?: FileApplyCache } = {}): Promise<PersistOutcome> {
  const repos = app.repos;
  const out = await repos.tx(async () => {
    const cur = await repos.runs.get(run.id);
    if (!cur) return undefined;
    if (cur.status === 'queued' || cur.status === 'pending') await repos.runs.transition(run.id, 'running', { at: result.run.started_at ?? undefined });
    const steps = result.direct ? { inserted: 0, updated: 0 } : await repos.steps.importForRun(run.id, run.run_uuid, result.steps);
    const events = result.direct ? 0 : await repos.events.importForRun(run.run_uuid, result.events);
    // The worker's rows name its own paths: replaced by the master's (a replay writes the same rows).
    if (result.direct) await repos.artifacts.deleteByRun(run.id);
    // A file the worker shipped names its workspace-relative path: it is now the master's file.
    const ws = result.run.workspace || run.workspace;
    // The workspace's folder is read once for all of them.
    const root = result.artifacts.some((a) => !isAbsolute(a.artifact_path)) && isSafeName(ws) ? await workspaceRoot(app, ws) : undefined;
    const rows = result.artifacts.map((a) => {
      const path = (root !== undefined && !isAbsolute(a.artifact_path) ? shippedFilePath(root, ws, a.artifact_path) : undefined) ?? a.artifact_path;
      return { ...a, artifact_path: path, run_id: run.id };
    });
    if (rows.length > 0) await repos.artifacts.upsertMany(rows);
    await repos.runs.update(run.id, {
      total_steps: result.run.total_steps,
      completed_steps: result.run.completed_steps,
      ...(result.run.workspace ? { workspace: result.run.workspace } : {}),
    });
    const done = await repos.runs.transition(run.id, result.run.status, {
      ...(result.run.error_message ? { error_message: result.run.error_message } : {}),
      ...(result.run.completed_at ? { at: result.run.completed_at } : {}),
    });
    return { transitioned: Boolean(done), steps, events, row: done };
  });
  forgetShippedFiles(app, run.run_uuid);
  // The terminal update returned the row as the transaction left it.
  const final = out?.row ?? (await repos.runs.get(run.id)) ?? run;
  if (!out) return { transitioned: false, run: final, steps: { inserted: 0, updated: 0 }, events: 0 };
  // The run's execution-log lines join the master's workspace file once: when this attempt's end
  // is recorded for the first time, or the result ends the run (a late result after the attempt
  // was marked stalled); a replayed record appends nothing. After the commit, like the webhooks:
  // a master that dies in between has the lines in the worker's file only (at most once).
  const lines = result.execution_log;
  if (lines && (opts.firstSight || out.transitioned)) await later(opts.defer, () => appendExecutionLog(app, final, final.workspace, lines, opts.files));
  // The diff snapshots of a completed run, as a local run gets them: from this database, which
  // holds the workspace's rows from every worker; the window ends now, when its rows arrived.
  // (A worker writing into a shared database recorded them there.)
  if (out.transitioned && !result.direct && final.status === 'completed') {
    await later(opts.defer, async () => {
      await recordRunDiff(app, final.id, final, new Date().toISOString());
    });
  }
  if (out.transitioned || (result.direct && opts.firstSight && final.status === result.run.status)) await later(opts.defer, () => notify(app, final));
  return { transitioned: out.transitioned, steps: out.steps, events: out.events, run: final };
}

/**
 * Marks a run failed when its task failed without a result (workflow missing on the worker,
 * attempts exhausted, stalled too often, lost from the queue), with the run.failed event the
 * worker could not write. False when the run was already terminal.
 */
export async function failRemoteRun(app: AppContext, run: RunRecord, message: string, at?: string, defer?: Defer): Promise<boolean> {
  const repos = app.repos;
  const ok = await repos.tx(async () => {
    const next = await repos.runs.transition(run.id, 'failed', { error_message: message, ...(at ? { at } : {}) });
    if (!next) return false;
    await repos.steps.failUnfinished(run.id, message);
    await repos.events.insert({
      topic: 'run.failed', name: 'run.failed', source: 'distributed', source_type: 'run', data_type: 'scan',
      data: { scan_id: run.run_uuid, target: run.target, error: message },
      workspace: run.workspace, run_id: run.run_uuid, workflow_name: run.workflow_name, processed: true,
    });
    return true;
  });
  forgetShippedFiles(app, run.run_uuid);
  if (ok) await later(defer, async () => notify(app, (await repos.runs.get(run.id)) ?? run));
  return ok;
}

/** The run's task started on a worker: queued → running at the worker's start time. */
export async function markRemoteStarted(app: AppContext, run: RunRecord, at?: string): Promise<boolean> {
  if (run.status !== 'queued' && run.status !== 'pending') return false;
  return Boolean(await app.repos.runs.transition(run.id, 'running', at ? { at } : {}));
}

/** Progress reported by the worker (only while the run is running on the master). */
export async function applyProgress(app: AppContext, run: RunRecord, progress: { completed_steps: number; total_steps: number }): Promise<void> {
  if (run.status !== 'running') return;
  if (run.completed_steps === progress.completed_steps && run.total_steps === progress.total_steps) return;
  await app.repos.runs.update(run.id, { completed_steps: progress.completed_steps, total_steps: progress.total_steps });
}
