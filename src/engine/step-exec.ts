import { join } from 'node:path';
import type { Step } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { parseDuration } from '../util/duration.js';
import { sanitizeName } from '../util/fs-safe.js';
import { messageOf } from '../errors.js';
import { livePid, renderCommands } from './steps/bash.js';
import { parseThreads } from './steps/foreach.js';
import { renderJs } from './safe-render.js';
import { runConditionAsync } from './scripts.js';
import { dispatch } from './dispatch.js';
import { evaluateExports } from './exports.js';
import { runActions } from './actions.js';
import { evaluateDecision } from './decision.js';
import { ModuleSkip, RunAborted, StepFailure, type Scope } from './types.js';

export interface StepSummary {
  module: string;
  name: string;
  type: string;
  status: 'completed' | 'failed' | 'skipped';
  durationMs: number;
  error?: string;
}

export interface StepOutcome {
  status: 'completed' | 'failed' | 'skipped';
  error?: string;
  continueOnError: boolean;
  abort: boolean;
  goto?: string;
}

export interface StepRunOptions {
  index: number;
  /** Write step_results rows (false for hooks). */
  record: boolean;
  /** Evaluate `decision` (sequential mode only). */
  decisions: boolean;
  /** Key counting the step once toward runs.completed_steps (also the resume key). */
  countKey?: string;
  /** DAG mode: on resume, reuse any completed step, not only a leading prefix. */
  resumeAny?: boolean;
  results: StepSummary[];
}

/** The command lines shown when a step starts (rendered where possible). */
export function describeStep(step: Step, scope: Scope): string[] {
  try {
    switch (step.type) {
      case 'bash':
      case 'remote-bash':
        return renderCommands(step, scope);
      case 'function': {
        const list = step.parallel_functions?.length ? step.parallel_functions : step.functions?.length ? step.functions : step.function ? [step.function] : [];
        return list.map((f) => renderJs(f, scope.vars, scope.tainted));
      }
      case 'foreach': {
        const input = Array.isArray(step.input) ? `[${step.input.length} items]` : render(String(step.input ?? ''), scope.vars);
        const head = `foreach [[${step.variable}]] in ${input} | threads: ${parseThreads(step.parallel ?? step.threads, scope.vars)}`;
        const inner = step.step ? [step.step.command, ...(step.step.commands ?? []), step.step.function, ...(step.step.functions ?? [])].filter(Boolean) as string[] : [];
        return [head, ...inner.map((c) => `  ${c}`)];
      }
      case 'http':
        return [`${(step.method ?? 'GET').toUpperCase()} ${render(step.url ?? '', scope.vars)}`];
      case 'llm':
        return [step.is_embedding ? 'embeddings' : `chat completion (${step.messages?.length ?? 0} messages)`];
      case 'parallel-steps':
        return (step.parallel_steps ?? []).map((c) => `${c.name} (${c.type})`);
      default:
        return [];
    }
  } catch (err) {
    return [`<render error: ${messageOf(err)}>`];
  }
}

function stepTimeout(step: Step, scope: Scope): number | undefined {
  if (step.timeout === undefined || step.timeout === null || step.timeout === '') return undefined;
  const raw = typeof step.timeout === 'string' ? render(step.timeout, scope.vars) : step.timeout;
  return parseDuration(raw);
}

const STORED_EXPORT_LIMIT = 64 * 1024;

/** Exports kept with the step record (auto exports included when small): what a resume restores. */
function storableExports(auto: Record<string, unknown>, user: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...auto, ...user })) {
    const size = typeof v === 'string' ? v.length : JSON.stringify(v ?? null).length;
    if (size <= STORED_EXPORT_LIMIT) out[k] = v;
  }
  return out;
}

/** Merges values into the scope as variables, tracking taint. */
export function mergeVars(scope: Scope, values: Record<string, unknown>, tainted: Iterable<string>): void {
  Object.assign(scope.vars, values);
  for (const t of tainted) scope.tainted.add(t);
}

/**
 * One step (reference §3.3): pre_condition, log, start line, dispatch, exports, actions, decision.
 * The step row is written `running` before the step acts, and finished with its event after.
 */
export async function executeStep(step: Step, scope: Scope, opts: StepRunOptions): Promise<StepOutcome> {
  const exec = scope.exec;
  const { printer, recorder } = exec;
  if (exec.signal.aborted) throw new RunAborted(exec.abortReason() ?? 'cancelled');
  const base = { moduleName: scope.moduleName, stepName: step.name, stepType: step.type, stepIndex: opts.index };
  const started = Date.now();
  let stepId = 0;
  // Assigned once the step starts; fail() may run before (a pre_condition that throws).
  let logFile = '';

  // Resume: a step that completed in the source run is reused, not executed again.
  const resume = exec.resume;
  if (resume && opts.record && opts.countKey && (resume.active || opts.resumeAny)) {
    const done = resume.steps.get(opts.countKey);
    if (done) return reuseStep(step, scope, opts, done, resume.sourceRunUuid);
    if (!opts.resumeAny) resume.active = false;
  }

  // 1. pre_condition: false → skipped; error → failed; skip() → module skip.
  if (step.pre_condition && step.pre_condition.trim() !== '') {
    let ok: boolean;
    try {
      ok = await runConditionAsync(step.pre_condition, scope);
    } catch (err) {
      if (err instanceof ModuleSkip) {
        if (opts.record) await recorder.stepSkipped({ ...base, command: '' }, err.message, opts.countKey);
        printer.stepSkipped(step.name, err.message);
        opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'skipped', durationMs: 0 });
        throw err;
      }
      return fail(`pre-condition evaluation failed: ${messageOf(err)}`, '', []);
    }
    if (!ok) {
      if (opts.record) await recorder.stepSkipped({ ...base, command: '' }, 'pre_condition is false', opts.countKey);
      printer.stepSkipped(step.name);
      exec.log.write('INFO', 'Step skipped', { step_name: step.name, step_type: step.type, reason: 'pre_condition' });
      opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'skipped', durationMs: 0 });
      return { status: 'skipped', continueOnError: false, abort: false };
    }
  }

  // 2. log message and start line.
  if (step.log) {
    try {
      printer.stepLog(render(step.log, scope.vars));
    } catch {
      printer.stepLog(step.log);
    }
  }
  const shown = describeStep(step, scope);
  logFile = join(exec.logDir, `${String(exec.nextLogIndex()).padStart(4, '0')}-${sanitizeName(step.name)}.log`);
  exec.output.openStep(logFile, step.name);
  stepId = opts.record ? await recorder.stepStarted({ ...base, command: shown.join('\n'), logFile }) : 0;
  printer.stepStart(step.name, step.type, shown, step.suppress_details);
  exec.log.write('INFO', 'Executing step', { step_name: step.name, step_type: step.type, command: shown.join('\n') });

  let timeoutMs: number | undefined;
  try {
    timeoutMs = stepTimeout(step, scope);
  } catch (err) {
    return fail(messageOf(err), '', shown);
  }

  // 3. dispatch.
  let result;
  try {
    result = await dispatch(step, scope, { logFile, timeoutMs });
  } catch (err) {
    if (err instanceof ModuleSkip) {
      if (opts.record) await recorder.stepFinished(stepId, step.name, 'completed', { output: err.message, durationMs: Date.now() - started, outputLines: 0 }, opts.countKey);
      printer.stepSkipped(step.name, err.message);
      opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'skipped', durationMs: Date.now() - started });
      throw err;
    }
    if (exec.signal.aborted) {
      if (opts.record) await recorder.stepFinished(stepId, step.name, 'failed', { output: (err as StepFailure).output ?? '', error: exec.abortReason() === 'timeout' ? 'run timed out' : 'run cancelled', durationMs: Date.now() - started, outputLines: 0, exitCode: null });
      opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'failed', durationMs: Date.now() - started, error: 'cancelled' });
      throw new RunAborted(exec.abortReason() ?? 'cancelled');
    }
    const f = err instanceof StepFailure ? err : new StepFailure(messageOf(err));
    return fail(f.message, f.output, f.commands.length ? f.commands : shown, f.exitCode);
  }

  // 4. exports (auto exports first, so user exports can read them).
  const auto = { ...(result.autoExports ?? {}), ...(result.childExports ?? {}) };
  const autoTainted = [...Object.keys(result.autoExports ?? {}), ...(result.childTainted ?? [])];
  let exported: { values: Record<string, unknown>; tainted: string[] };
  try {
    const tempScope: Scope = { ...scope, vars: { ...scope.vars, ...auto }, tainted: new Set([...scope.tainted, ...autoTainted]) };
    exported = await evaluateExports(step, tempScope);
  } catch (err) {
    if (err instanceof ModuleSkip) throw err;
    return fail(messageOf(err), result.output, result.commands);
  }
  mergeVars(scope, auto, autoTainted);
  mergeVars(scope, exported.values, exported.tainted);
  const durationMs = Date.now() - started;
  if (opts.record) {
    await recorder.stepFinished(stepId, step.name, 'completed', { output: result.output, exports: storableExports(auto, exported.values), durationMs, outputLines: result.lines, command: result.commands.join('\n'), currentPid: livePid(scope), exitCode: result.exitCode ?? null }, opts.countKey);
  }
  printer.stepSuccess(step.name, step.type, durationMs, result.output, exec.output.streamedLines(logFile));
  exec.log.write('INFO', 'Step completed', { step_name: step.name, step_type: step.type, command: result.commands.join('\n'), status: 'success', duration: durationMs / 1000, output: result.output.slice(0, 4096) });
  opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'completed', durationMs });

  // 5. on_success actions, then decision.
  const act = await runActions(step.on_success, scope, logFile);
  const outcome: StepOutcome = { status: 'completed', continueOnError: false, abort: act.abort };
  if (opts.decisions && step.decision) {
    const d = await evaluateDecision(step.decision, scope);
    for (const inline of d.inline) await runInline(inline, scope, opts);
    if (d.goto) outcome.goto = d.goto;
  }
  return outcome;

  async function fail(error: string, output: string, commands: string[], exitCode: number | null = null): Promise<StepOutcome> {
    const durationMs = Date.now() - started;
    const id = stepId || (opts.record ? await recorder.stepStarted({ ...base, command: commands.join('\n'), logFile: '' }) : 0);
    if (opts.record) await recorder.stepFinished(id, step.name, 'failed', { output, error, durationMs, outputLines: output ? output.split('\n').length : 0, currentPid: livePid(scope), exitCode });
    printer.stepFailed(step.name, step.type, error, commands);
    if (output && !printer.streamed(exec.output.streamedLines(logFile))) printer.outputBlock(output);
    exec.log.write('ERROR', 'Step failed', { step_name: step.name, step_type: step.type, command: commands.join('\n'), status: 'failed', duration: durationMs / 1000, error, output: output.slice(0, 4096) });
    opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'failed', durationMs, error });
    const act = await runActions(step.on_error, scope, logFile);
    return { status: 'failed', error, continueOnError: act.continueOnError, abort: act.abort };
  }
}

/**
 * Inline work of a decision runs as a synthetic step: no pre-condition, not printed as a step, its
 * output shown; successful ones are recorded so they appear in the step results (reference §3.6).
 */
async function runInline(step: Step, scope: Scope, opts: StepRunOptions): Promise<void> {
  const exec = scope.exec;
  const started = Date.now();
  const logFile = join(exec.logDir, `${String(exec.nextLogIndex()).padStart(4, '0')}-${sanitizeName(step.name)}.log`);
  exec.output.openStep(logFile, step.name);
  try {
    const r = await dispatch(step, scope, { logFile });
    const durationMs = Date.now() - started;
    if (!exec.printer.streamed(exec.output.streamedLines(logFile))) exec.printer.outputBlock(r.output);
    if (opts.record) {
      const id = await exec.recorder.stepStarted({ moduleName: scope.moduleName, stepName: step.name, stepType: step.type, stepIndex: opts.index, command: r.commands.join('\n'), logFile });
      await exec.recorder.stepFinished(id, step.name, 'completed', { output: r.output, durationMs, outputLines: r.lines, exitCode: r.exitCode ?? null });
    }
    opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'completed', durationMs });
  } catch (err) {
    if (err instanceof ModuleSkip || err instanceof RunAborted) throw err;
    exec.log.write('WARN', 'decision inline work failed', { step_name: step.name, error: messageOf(err) });
  }
}

/** Records a step reused from the run being resumed and restores its exports. */
async function reuseStep(step: Step, scope: Scope, opts: StepRunOptions, done: { exports: Record<string, unknown>; output: string }, source: string): Promise<StepOutcome> {
  const exec = scope.exec;
  const note = `reused from run ${source}`;
  const id = await exec.recorder.stepStarted({ moduleName: scope.moduleName, stepName: step.name, stepType: step.type, stepIndex: opts.index, command: `(${note})`, logFile: '' });
  await exec.recorder.stepFinished(id, step.name, 'completed', { output: done.output, exports: done.exports, durationMs: 0, outputLines: 0 }, opts.countKey);
  // Restored values came from an earlier execution of the same workflow: treat them as untrusted.
  mergeVars(scope, done.exports, Object.keys(done.exports));
  exec.printer.line(`${exec.printer.c.cyan('↺')} ${step.name} (${note})`);
  opts.results.push({ module: scope.moduleName, name: step.name, type: step.type, status: 'completed', durationMs: 0 });
  const outcome: StepOutcome = { status: 'completed', continueOnError: false, abort: false };
  if (opts.decisions && step.decision) {
    const d = await evaluateDecision(step.decision, scope);
    if (d.goto) outcome.goto = d.goto;
  }
  return outcome;
}
