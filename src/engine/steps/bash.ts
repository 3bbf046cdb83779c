import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cpus } from 'node:os';
import type { Step } from '../../workflow/types.js';
import { render } from '../../workflow/template.js';
import { targetEnvironment } from '../../workflow/target.js';
import { renderShell } from '../safe-render.js';
import { spawnCommand, commandError, SHELL } from '../process.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { runnerArgv } from './runners.js';
import { mapLimit } from '../pool.js';

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
  return stepCommands(step).list.map((c) => renderShell(c, scope.vars, scope.tainted));
}

/** Environment of a step's child process: base env + OSM_TARGET & co. */
export function stepEnv(scope: Scope): Record<string, string> {
  return { ...scope.exec.baseEnv, ...targetEnvironment(scope.vars, scope.userParamKeys) };
}

/** Keeps the process registry and `runs.current_pid` in step with spawned process groups. */
export function trackPid(scope: Scope, pid: number): void {
  const exec = scope.exec;
  if (pid) {
    exec.deps.registry.add(exec.runUuid, pid);
    exec.recorder.setPid(pid);
    return;
  }
  const alive = exec.deps.registry.pids(exec.runUuid).filter((p) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      exec.deps.registry.remove(exec.runUuid, p);
      return false;
    }
  });
  exec.recorder.setPid(alive[alive.length - 1] ?? 0);
}

/** Runs one rendered command line through the module's runner; throws StepFailure on failure. */
export async function runLine(line: string, scope: Scope, ctx: StepContext, runner = scope.runner): Promise<{ output: string; lines: number }> {
  const exec = scope.exec;
  const argv = runner.type === 'host' ? [SHELL, '-c', line] : runnerArgv(runner.type, runner.config, line, scope);
  const res = await spawnCommand({
    argv,
    env: stepEnv(scope),
    cwd: process.cwd(),
    timeoutMs: ctx.timeoutMs,
    signal: exec.signal,
    logFile: ctx.logFile,
    onPid: (pid) => trackPid(scope, pid),
  });
  const combined = `${res.stdout}${res.stdout && res.stderr && !res.stdout.endsWith('\n') ? '\n' : ''}${res.stderr}`;
  if (res.exitCode !== 0 || res.timedOut || res.cancelled) {
    throw new StepFailure(commandError(res, ctx.timeoutMs), combined.trim(), [line]);
  }
  return { output: combined.trim(), lines: res.lines };
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
    if (failed && !failed.ok) throw new StepFailure(failed.err.message, outputs.filter(Boolean).join('\n'), lines);
    count = results.reduce((n, r) => n + (r.ok ? r.lines : 0), 0);
  } else {
    for (const line of lines) {
      try {
        const r = await runLine(line, scope, ctx);
        outputs.push(r.output);
        count += r.lines;
      } catch (err) {
        const f = err as StepFailure;
        throw new StepFailure(f.message, [...outputs, f.output].filter(Boolean).join('\n'), lines);
      }
    }
  }
  const output = outputs.filter((o) => o !== '').join('\n');
  if (step.std_file) writeStdFile(render(step.std_file, scope.vars), output, scope);
  return { output, lines: count, commands: lines };
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
