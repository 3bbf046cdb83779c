import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cpus } from 'node:os';
import type { Step } from '../../workflow/types.js';
import { render } from '../../workflow/template.js';
import { targetEnvironment } from '../../workflow/target.js';
import { renderShell } from '../safe-render.js';
import { spawnCommand, commandError, SHELL, type SpawnResult } from '../process.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { runnerArgv } from './runners.js';
import { commandExists } from '../deps-check.js';
import { mapLimit } from '../pool.js';
import { messageOf } from '../../errors.js';

/** The command lines of a bash-like step in precedence order (parallel > sequential > single). */
export function stepCommands(step: Step): { list: string[]; parallel: boolean } {
  if (step.parallel_commands && step.parallel_commands.length) return { list: step.parallel_commands, parallel: true };
  if (step.commands && step.commands.length) return { list: step.commands, parallel: false };
  if (step.command !== undefined) {
    const extra = [step.speed_args, step.config_args, step.input_args, step.output_args].filter((a) => a && a.trim() !== '');
    return { list: [[step.command, ...extra].join(' ')], parallel: false };
  }
  return { list: [], parallel: false };
}

/** Renders the commands of a step for the shell (untrusted values escaped). */
export function renderCommands(step: Step, scope: Scope): string[] {
  const list = stepCommands(step).list;
  for (const c of list) assertNoLoopPlaceholder(c);
  return list.map((c) => renderShell(c, scope.vars, scope.tainted));
}

const LOOP_PLACEHOLDER = /\[\[\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\]\]/;

/**
 * A command template that still holds a `[[name]]` placeholder when it is about to run: inside a
 * foreach every `[[name]]` (at any nesting depth) has been turned into `{{name}}`, so one left here
 * is outside any foreach and would reach the shell literally (`[[ name ]]` is also a bash test that
 * is always true). The step fails instead of running a wrong command. Checked on the template, not
 * on the rendered text, so tool output that happens to contain `[[x]]` is not mistaken for one.
 */
export function assertNoLoopPlaceholder(template: string, field = 'command', what = 'the command was not run'): void {
  const m = LOOP_PLACEHOLDER.exec(template);
  if (m) {
    throw new StepFailure(`unrendered loop variable ${m[0]} in ${field} (a [[${m[1]}]] placeholder only renders inside a foreach whose variable is '${m[1]}'); ${what}`, '', [template]);
  }
}

/** Environment of a step's child process: base env + OSM_TARGET & co. */
export function stepEnv(scope: Scope): Record<string, string> {
  return { ...scope.exec.baseEnv, ...targetEnvironment(scope.vars, scope.userParamKeys) };
}

/** A process still running after this long gets its PID written to `runs.current_pid`. */
const PID_WRITE_DELAY_MS = 25;

/**
 * Keeps the process registry and `runs.current_pid` in step with spawned process groups. The
 * in-memory registry (what cancel and timeouts use) is updated at once. The database copy — the
 * spec's "process id of the running command", and the fallback that lets a restarted daemon kill
 * a group left by a dead one — is written once the process has lived PID_WRITE_DELAY_MS, so a
 * short command costs no commit; when the command shown there ends, the newest one still running
 * (or 0) is written instead, as late and only when the step's result has not carried it. Orphans of a crashed engine are also killed by its spawner, which
 * watches its parent (see spawner/child.ts).
 */
export function trackPid(scope: Scope, pid: number, exited?: number): void {
  const exec = scope.exec;
  if (pid) {
    exec.deps.registry.add(exec.runUuid, pid);
    const timer = setTimeout(() => {
      if (exec.deps.registry.pids(exec.runUuid).includes(pid)) showPid(exec, pid);
    }, PID_WRITE_DELAY_MS);
    timer.unref();
    return;
  }
  if (!exited) return;
  exec.deps.registry.remove(exec.runUuid, exited);
  if (exec.recorder.shownPid !== exited) return;
  // Written PID_WRITE_DELAY_MS later, as the start is: a step that finishes meanwhile (the usual
  // case) writes the change with its result, one write less. The stale PID is harmless meanwhile:
  // whoever kills by it checks the process's start time first (sameProcess).
  const timer = setTimeout(() => {
    const live = livePid(scope);
    if (exec.recorder.shownPid !== live) showPid(exec, live);
  }, PID_WRITE_DELAY_MS);
  timer.unref();
}

/**
 * Writes the shown PID in the background: process callbacks cannot wait, and the in-memory
 * registry (what cancel uses) already has it. A failed write is logged, never thrown.
 */
function showPid(exec: Scope['exec'], pid: number): void {
  void exec.recorder.setPid(pid).catch((err: unknown) => exec.log.write('WARN', 'could not write the running process id', { pid, error: messageOf(err) }));
}

/** The newest live process group of a run (0 when none), for `runs.current_pid`. */
export function livePid(scope: Scope): number {
  const pids = scope.exec.deps.registry.pids(scope.exec.runUuid);
  return pids[pids.length - 1] ?? 0;
}

/** Shell words that never need a shell: no quoting, expansion, redirection or operators. */
const SIMPLE_LINE = /^[A-Za-z0-9_./:@%+,=-]+(?:[ \t]+[A-Za-z0-9_./:@%+,=-]+)*$/;
/** Builtins and keywords that must run inside a shell even when a same-named binary exists. */
const SHELL_ONLY = new Set(['cd', 'source', '.', 'export', 'set', 'unset', 'alias', 'exit', 'return', 'shift', 'ulimit', 'umask', 'wait', 'eval', 'exec', 'trap', 'read', 'declare', 'local', 'typeset', 'readonly', 'hash', 'type', 'command', 'builtin', 'let', 'shopt', 'pushd', 'popd', 'dirs', 'history', 'jobs', 'fg', 'bg', 'times', 'getopts', 'caller', 'enable', 'help', 'logout', 'mapfile', 'readarray', 'compgen', 'complete', 'suspend', 'disown', 'time', 'coproc', 'if', 'then', 'else', 'elif', 'fi', 'for', 'while', 'until', 'do', 'done', 'case', 'esac', 'function', 'select']);
const resolved = new Map<string, boolean>();

function onPath(cmd: string, pathEnv: string): boolean {
  const key = `${pathEnv}\u0000${cmd}`;
  let hit = resolved.get(key);
  if (hit === undefined) {
    hit = cmd.includes('/') ? false : commandExists(cmd, pathEnv);
    if (resolved.size > 4096) resolved.clear();
    resolved.set(key, hit);
  }
  return hit;
}

/**
 * The argv of a host command. A line that is only plain words (`true`, `nuclei -l x -o y`) whose
 * program is on PATH is executed directly — exactly what bash would do for it, minus ~1 ms of
 * shell start-up per step; anything with quoting, variables, globs, pipes or redirections, an
 * assignment or a shell builtin goes through bash as the reference does.
 */
export function hostArgv(line: string, pathEnv: string): string[] {
  const trimmed = line.trim();
  if (SIMPLE_LINE.test(trimmed)) {
    const words = trimmed.split(/[ \t]+/);
    const cmd = words[0]!;
    if (!cmd.includes('=') && !SHELL_ONLY.has(cmd) && onPath(cmd, pathEnv)) return words;
  }
  return [SHELL, '-c', line];
}

/** Runs one rendered command line through the module's runner; throws StepFailure on failure. */
export async function runLine(line: string, scope: Scope, ctx: StepContext, runner = scope.runner): Promise<{ output: string; lines: number; exitCode: number }> {
  const exec = scope.exec;
  // A command acts: a step end the run still holds is written first (a no-op inside a step).
  await exec.recorder?.settle?.();
  const env = targetEnvironment(scope.vars, scope.userParamKeys);
  let res: SpawnResult | undefined;
  if (ctx.lanes && runner.type === 'host' && !ctx.timeoutMs && ctx.lanes.accepts(laneSignature(env))) {
    res = exec.signal.aborted ? undefined : await ctx.lanes.run(line, ctx.logFile);
  }
  res ??= await spawnLine(line, scope, ctx, runner, env);
  const combined = `${res.stdout}${res.stdout && res.stderr && !res.stdout.endsWith('\n') ? '\n' : ''}${res.stderr}`;
  if (res.exitCode !== 0 || res.timedOut || res.cancelled) {
    const code = res.timedOut || res.cancelled || res.signal || res.exitCode < 0 ? null : res.exitCode;
    throw new StepFailure(commandError(res, ctx.timeoutMs), combined.trim(), [line], code);
  }
  return { output: combined.trim(), lines: res.lines, exitCode: 0 };
}

/** The per-item environment a lane must have been started with to run a command. */
export function laneSignature(env: Record<string, string>): string {
  return JSON.stringify(env);
}

async function spawnLine(line: string, scope: Scope, ctx: StepContext, runner: Scope['runner'], env: Record<string, string>): Promise<SpawnResult> {
  const exec = scope.exec;
  const argv = runner.type === 'host' ? hostArgv(line, exec.baseEnv.PATH ?? '') : runnerArgv(runner.type, runner.config, line, scope);
  let pid = 0;
  return spawnCommand({
    argv,
    baseEnv: exec.baseEnv,
    env,
    cwd: process.cwd(),
    timeoutMs: ctx.timeoutMs,
    signal: exec.signal,
    output: exec.output.sink(ctx.logFile, ctx.part),
    onPid: (p) => {
      if (p) pid = p;
      trackPid(scope, p, pid);
    },
  });
}

/** bash step: command | commands (sequential, stop at first failure) | parallel_commands. */
export async function executeBash(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const { parallel } = stepCommands(step);
  const lines = renderCommands(step, scope);
  if (lines.length === 0) throw new StepFailure('bash step must have command, commands, or parallel_commands');
  let outputs: string[] = [];
  let count = 0;
  if (parallel) {
    const results = await mapLimit(lines, Math.max(2, cpus().length * 2), async (line) => {
      try {
        return { ok: true as const, ...(await runLine(line, scope, ctx)) };
      } catch (err) {
        return { ok: false as const, err: err as StepFailure };
      }
    });
    const failed = results.find((r) => !r.ok);
    outputs = results.map((r) => (r.ok ? r.output : r.err.output));
    if (failed && !failed.ok) throw new StepFailure(failed.err.message, outputs.filter(Boolean).join('\n'), lines, failed.err.exitCode);
    count = results.reduce((n, r) => n + (r.ok ? r.lines : 0), 0);
  } else {
    for (const line of lines) {
      try {
        const r = await runLine(line, scope, ctx);
        outputs.push(r.output);
        count += r.lines;
      } catch (err) {
        const f = err as StepFailure;
        throw new StepFailure(f.message, [...outputs, f.output].filter(Boolean).join('\n'), lines, f.exitCode);
      }
    }
  }
  const output = outputs.filter((o) => o !== '').join('\n');
  if (step.std_file) writeStdFile(render(step.std_file, scope.vars), output, scope);
  return { output, lines: count, commands: lines, exitCode: 0 };
}

/** `std_file`: the combined output written to a file; failures are only warnings. */
function writeStdFile(path: string, output: string, scope: Scope): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, output);
  } catch (err) {
    scope.exec.printer.warn(`could not write std_file ${path}: ${(err as Error).message}`);
  }
}
