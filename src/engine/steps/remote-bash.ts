import type { RunnerConfig, Step } from '../../workflow/types.js';
import { render, renderDeep } from '../../workflow/template.js';
import { spawnCommand } from '../process.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { renderCommands, runLine, stepEnv } from './bash.js';
import { copyOutArgv } from './runners.js';

/** remote-bash: the step's commands run through docker or ssh (`step_runner`, rendered `step_runner_config`). */
export async function executeRemoteBash(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const type = step.step_runner;
  if (type !== 'docker' && type !== 'ssh') throw new StepFailure(`remote-bash step_runner must be docker or ssh, got ${JSON.stringify(type ?? '')}`);
  const config = renderDeep<RunnerConfig>(step.step_runner_config ?? {}, scope.vars);
  const runner = { type, config };
  const lines = renderCommands(step, scope);
  if (lines.length === 0) throw new StepFailure('remote-bash step must have command or commands');
  const outputs: string[] = [];
  let count = 0;
  for (const line of lines) {
    try {
      const r = await runLine(line, scope, ctx, runner);
      outputs.push(r.output);
      count += r.lines;
    } catch (err) {
      const f = err as StepFailure;
      throw new StepFailure(f.message, [...outputs, f.output].filter(Boolean).join('\n'), lines, f.exitCode);
    }
  }
  if (step.step_remote_file && step.host_output_file) {
    const remote = render(step.step_remote_file, scope.vars);
    const local = render(step.host_output_file, scope.vars);
    const argv = copyOutArgv(type, config, remote, local);
    if (!argv) {
      scope.exec.printer.warn(`cannot copy ${remote} out of an ephemeral docker container; mount a volume instead`);
    } else {
      const res = await spawnCommand({ argv, env: stepEnv(scope), signal: scope.exec.signal, timeoutMs: ctx.timeoutMs, output: scope.exec.output.sink(ctx.logFile, ctx.part) });
      if (res.exitCode !== 0) scope.exec.printer.warn(`copying ${remote} to ${local} failed: ${res.stderr.trim() || `exit ${res.exitCode}`}`);
    }
  }
  return { output: outputs.filter(Boolean).join('\n'), lines: count, commands: lines, exitCode: 0 };
}
