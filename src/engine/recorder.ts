import type { ArtifactInput, AsyncStore, Store, RunRecord, RunStatus, StepRecord, StepStatus } from '../store/index.js';
import type { StepFinish } from '../store/steps.js';
import type { RunStartPatch } from '../store/run-sql.js';
import { processStartTime } from './process-registry.js';
import type { StepState } from './live/journal.js';

export type RunSource = 'cli' | 'api' | 'scheduler' | 'executor';

export interface StepStartInfo {
  moduleName: string;
  stepName: string;
  stepType: string;
  stepIndex: number;
  command: string;
  logFile: string;
}

export interface StepFinishInfo {
  output: string;
  error?: string;
  exports?: Record<string, unknown>;
  durationMs: number;
  outputLines: number;
  command?: string;
  /** The run's live process group after this step (written in the same transaction). */
  currentPid?: number;
  /** Exit code of the step's (last or failing) command; null when no process ran or it was killed. */
  exitCode?: number | null;
}

const OUTPUT_LIMIT = 64 * 1024;

/** Keeps the stored step output bounded (the log file has everything). */
export function trimOutput(output: string): string {
  const t = output.trim();
  return t.length > OUTPUT_LIMIT ? `${t.slice(0, OUTPUT_LIMIT)}\n[output truncated; full output in the step log file]` : t;
}

/**
 * The one place where a run's and its steps' state changes are written, each together with its
 * event in one transaction. Every change is written before the engine acts on it.
 */
export class RunRecorder {
  private readonly counted = new Set<string>();
  private readonly stepInfo = new Map<number, { type: string; module: string }>();
  private observer?: (state: StepState) => void;
  run: RunRecord;

  constructor(
    private readonly repos: AsyncStore,
    run: RunRecord,
    private readonly source: RunSource,
  ) {
    this.run = run;
  }

  private async refresh(): Promise<RunRecord> {
    this.run = (await this.repos.runs.get(this.run.id)) ?? this.run;
    return this.run;
  }

  /**
   * queued|pending → running (or still running after the queue's claim), owned by this process,
   * with the run.started event: one write (one statement on PostgreSQL). False when the run was
   * cancelled or finished meanwhile. `patch` (the run's workspace and step count) is written in
   * the same statement; a run that did not start gets it written on its own.
   */
  async started(patch?: RunStartPatch): Promise<boolean> {
    const data = { scan_id: this.run.run_uuid, run_uuid: this.run.run_uuid, target: this.run.target, params: this.run.params, workflow: this.run.workflow_name };
    const event = { ...this.event('run.started', 'run.started', this.source, 'scan', data), ...(patch?.workspace !== undefined ? { workspace: patch.workspace } : {}) };
    const next = await this.repos.runs.start(this.run.id, process.pid, event, patch);
    if (!next && patch) {
      // The workspace's row was written with the attempt; the run's own fields are written alone.
      const { workspaceRow: _row, ...own } = patch;
      await this.update(own);
    }
    return this.adopt(next);
  }

  /** An event of this run: the fields its run and step events share. */
  private event<D>(topic: string, name: string, source: string, dataType: 'scan' | 'step', data: D) {
    return { topic, name, source, source_type: 'run', data_type: dataType, data, workspace: this.run.workspace, run_id: this.run.run_uuid, workflow_name: this.run.workflow_name, processed: true };
  }

  /** Takes the row a run write returned; reads it back when the write changed nothing. True when it changed. */
  private async adopt(next: RunRecord | undefined): Promise<boolean> {
    if (next) this.run = next;
    else await this.refresh();
    return next !== undefined;
  }

  /** Hears every step state change written here (the run's live output journals them). */
  observe(observer: (state: StepState) => void): void {
    this.observer = observer;
  }

  private tell(state: StepState): void {
    try {
      this.observer?.(state);
    } catch {
      // Showing a change must never fail recording it.
    }
  }

  /**
   * Updates non-status run fields (workspace, total_steps …). The row is not read back: started()
   * (which follows) returns the whole row; until then only the patched columns are known here.
   */
  async update(patch: Parameters<Store['runs']['update']>[1]): Promise<void> {
    await this.settle();
    await this.repos.runs.update(this.run.id, patch);
    this.run = { ...this.run, ...patch } as RunRecord;
  }

  /** The PID last written to `runs.current_pid` by this recorder (0 when cleared). */
  shownPid = 0;

  /** Writes the live PID (0 clears it). */
  async setPid(pid: number): Promise<void> {
    if (pid === this.shownPid) return;
    // Shown at once, so a later change decided before this write resolves compares with it.
    this.shownPid = pid;
    const write = this.writePid(pid);
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.pidWriting = settled;
    void settled.then(() => {
      if (this.pidWriting === settled) this.pidWriting = undefined;
    });
    await write;
  }

  private async writePid(pid: number): Promise<void> {
    await this.repos.runs.showPid(this.run.id, pid, pid ? (processStartTime(pid) ?? '') : '');
  }

  /** The PID write in flight (showPid may hold it a few milliseconds to share a statement). */
  private pidWriting?: Promise<void>;

  /** Current status in the database (another process may have cancelled the run). */
  async currentStatus(): Promise<RunStatus> {
    return ((await this.repos.runs.get(this.run.id))?.status ?? this.run.status) as RunStatus;
  }

  /** Records a step as running (with the held finish of the step before, if any); returns its id. */
  async stepStarted(info: StepStartInfo): Promise<number> {
    const input = {
      run_id: this.run.id,
      run_uuid: this.run.run_uuid,
      workspace: this.run.workspace,
      module_name: info.moduleName,
      step_name: info.stepName,
      step_type: info.stepType,
      step_index: info.stepIndex,
      status: 'running' as const,
      command: info.command,
      log_file: info.logFile,
    };
    const held = this.takeHeld();
    let row: StepRecord;
    if (held) {
      row = await this.repos.steps.finishThenCreate(held.finish, input);
      held.written();
    } else {
      await this.settle();
      row = await this.repos.steps.create(input);
    }
    this.openSteps.add(row.id);
    this.stepInfo.set(row.id, { type: info.stepType, module: info.moduleName });
    this.tell({ step: info.stepName, status: 'running', exit_code: null, duration_ms: 0, step_type: info.stepType, module: info.moduleName });
    return row.id;
  }

  /** Records a skipped step (no process ran). */
  async stepSkipped(info: Omit<StepStartInfo, 'logFile'>, reason: string, countKey?: string): Promise<void> {
    await this.settle();
    await this.repos.tx(async () => {
      await this.repos.steps.create({
        run_id: this.run.id,
        run_uuid: this.run.run_uuid,
        workspace: this.run.workspace,
        module_name: info.moduleName,
        step_name: info.stepName,
        step_type: info.stepType,
        step_index: info.stepIndex,
        status: 'skipped',
        command: info.command,
        output: '',
        error_message: reason,
      });
      if (countKey) await this.countOnce(countKey);
    });
    this.tell({ step: info.stepName, status: 'skipped', exit_code: null, duration_ms: 0, step_type: info.stepType, module: info.moduleName });
  }

  /**
   * Finishes a step with its event; counts it once toward completed_steps when `countKey` is new.
   * On PostgreSQL, when no other step of the run is open, the finish is held and written in the
   * statement that starts the run's next step (see `held`); what the engine does next either
   * starts that step or calls settle() first.
   */
  async stepFinished(stepId: number, stepName: string, status: Extract<StepStatus, 'completed' | 'failed'>, info: StepFinishInfo, countKey?: string): Promise<void> {
    const count = countKey !== undefined && status === 'completed' && !this.counted.has(countKey);
    if (count) this.counted.add(countKey);
    const pid = info.currentPid !== undefined && info.currentPid !== this.shownPid ? info.currentPid : undefined;
    // A PID this finish changes must land after the one still being written, not under it.
    if (pid !== undefined && this.pidWriting) await this.pidWriting;
    this.openSteps.delete(stepId);
    // A finish held earlier (another step of the run) goes first.
    await this.settle();
    // The step, its event, the run's count and its live PID: one write (one statement on PostgreSQL).
    const finish: StepFinish = {
      id: stepId,
      to: status,
      patch: {
        output: trimOutput(info.output),
        error_message: info.error ?? '',
        exports: info.exports ?? {},
        duration_ms: Math.round(info.durationMs),
        ...(info.command !== undefined ? { command: info.command } : {}),
        // Its time, not the time of the statement that carries it.
        at: new Date().toISOString(),
      },
      writes: {
        event: this.event(status === 'completed' ? 'step.completed' : 'step.failed', stepName, 'executor', 'step', {
          scan_id: this.run.run_uuid,
          step_name: stepName,
          duration_ms: Math.round(info.durationMs),
          output_lines: info.outputLines,
          ...(info.exitCode !== undefined ? { exit_code: info.exitCode } : {}),
          ...(info.error ? { error: info.error } : {}),
        }),
        runId: this.run.id,
        count,
        ...(pid !== undefined ? { pid: { current_pid: pid, current_pid_start: pid ? (processStartTime(pid) ?? '') : '' } } : {}),
      },
    };
    const written = () => {
      if (pid !== undefined) this.shownPid = pid;
      if (count) this.counted1();
      const known = this.stepInfo.get(stepId);
      this.stepInfo.delete(stepId);
      this.tell({ step: stepName, status, exit_code: info.exitCode ?? null, duration_ms: Math.round(info.durationMs), ...(known ? { step_type: known.type, module: known.module } : {}) });
    };
    if (this.repos.engine === 'postgresql' && this.openSteps.size === 0) {
      this.held = { finish, written };
      // Nothing else to carry it within this turn of the event loop: written alone.
      this.heldTimer = setImmediate(() => void this.flushHeld().catch(() => undefined));
      return;
    }
    await this.repos.steps.finish(finish.id, finish.to, finish.patch, finish.writes);
    written();
  }

  /** Steps of the run started and not finished yet (a finish is held only when none is left). */
  private readonly openSteps = new Set<number>();
  /**
   * A step's finish not written yet (PostgreSQL): the run's next step start writes it in its own
   * statement (one round trip instead of two per step), unless something else comes first —
   * settle() writes it alone, and so does the next turn of the event loop at the latest.
   */
  private held?: { finish: StepFinish; written: () => void };
  private heldTimer?: NodeJS.Immediate;
  /** The held finish's write when it was written alone: awaited (and its failure thrown) by settle(). */
  private heldWrite?: Promise<void>;

  /** Starts writing the held finish alone; the write settle() waits for. */
  private flushHeld(): Promise<void> {
    const h = this.takeHeld();
    if (h) {
      const w = (async () => {
        await this.repos.steps.finish(h.finish.id, h.finish.to, h.finish.patch, h.finish.writes);
        h.written();
      })();
      this.heldWrite = w;
    }
    return this.heldWrite ?? Promise.resolve();
  }

  private takeHeld(): { finish: StepFinish; written: () => void } | undefined {
    if (this.heldTimer) clearImmediate(this.heldTimer);
    this.heldTimer = undefined;
    const h = this.held;
    this.held = undefined;
    return h;
  }

  /**
   * Writes a held step finish now and waits for it (throwing its failure). The engine calls it
   * before it acts on a step's end in any other way than starting the next step: a condition, an
   * action, a decision, any step work, the run's end.
   */
  async settle(): Promise<void> {
    const w = this.flushHeld();
    try {
      await w;
    } finally {
      if (this.heldWrite === w) this.heldWrite = undefined;
    }
  }

  private async countOnce(key: string): Promise<void> {
    if (this.counted.has(key)) return;
    this.counted.add(key);
    await this.repos.runs.incrementCompletedSteps(this.run.id);
    this.counted1();
  }

  /**
   * One more completed step written: `run` follows the row's completed_steps, so the run's state
   * file (written before the terminal write) needs no read of the row. Only this run's executor
   * counts its steps.
   */
  private counted1(): void {
    this.run = { ...this.run, completed_steps: this.run.completed_steps + 1 };
  }

  /**
   * Terminal transition with its run.completed / run.failed / run.cancelled event: one write (one
   * statement on PostgreSQL). Returns false when already terminal. `run` is the row afterwards.
   */
  async finished(status: 'completed' | 'failed' | 'cancelled', info: { error?: string; durationMs: number; assetsFound?: number; artifacts?: ArtifactInput[] }): Promise<boolean> {
    await this.settle();
    const topic = status === 'completed' ? 'run.completed' : status === 'failed' ? 'run.failed' : 'run.cancelled';
    // A terminal transition clears current_pid itself (runTransition).
    this.shownPid = 0;
    // steps_completed (the row's completed_steps) is added to the data by the store.
    const data = { scan_id: this.run.run_uuid, target: this.run.target, duration_ms: Math.round(info.durationMs), assets_found: info.assetsFound ?? 0, ...(info.error ? { error: info.error } : {}) };
    // The run's artifacts are upserted in the same write (one statement on PostgreSQL).
    return this.adopt(await this.repos.runs.finish(this.run.id, status, info.error ? { error_message: info.error } : {}, this.event(topic, topic, 'executor', 'scan', data), info.artifacts));
  }
}
