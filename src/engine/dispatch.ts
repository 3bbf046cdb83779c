import type { Step } from '../workflow/types.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from './types.js';
import { executeBash } from './steps/bash.js';
import { executeFunction } from './steps/function.js';
import { executeForeach } from './steps/foreach.js';
import { executeParallelSteps } from './steps/parallel.js';
import { executeHttp } from './steps/http.js';
import { executeLlm } from './steps/llm.js';
import { executeRemoteBash } from './steps/remote-bash.js';
import { executeAgent } from './steps/agent.js';
import { executeAgentAcp } from './steps/agent-acp.js';

/** Runs a step's type executor (no pre-condition, exports or decision: that is step-exec's job). */
export async function dispatch(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  // Step work acts: a step end the run still holds (recorder.stepFinished) is written first.
  await scope.exec.recorder?.settle?.();
  switch (step.type) {
    case 'bash':
      return scope.exec.input.runnerOverride && scope.runner.type === 'host'
        ? executeBash(step, { ...scope, runner: scope.exec.input.runnerOverride }, ctx)
        : executeBash(step, scope, ctx);
    case 'function': {
      const r = await executeFunction(step, scope, ctx);
      // A function's result is the step's output like a command's: into the step log, the streams
      // and the terminal as the function returns.
      if (r.output) scope.exec.output.append(ctx.logFile, 1, r.output, ctx.part);
      return r;
    }
    case 'foreach':
      return executeForeach(step, scope, ctx);
    case 'parallel-steps':
      return executeParallelSteps(step, scope, ctx);
    case 'http':
      return executeHttp(step, scope, ctx);
    case 'llm':
      // Its output reaches only the step record: the terminal shows it as a block at the end.
      scope.exec.output.notStreamed(ctx.logFile);
      return executeLlm(step, scope, ctx);
    case 'remote-bash':
      return executeRemoteBash(step, scope, ctx);
    case 'agent':
      return executeAgent(step, scope, ctx);
    case 'agent-acp':
      return executeAgentAcp(step, scope, ctx);
    case 'agent-sdk':
      throw new StepFailure(`step type '${step.type}' is not supported by osm (use agent or agent-acp)`);
    default:
      throw new StepFailure(`invalid step type: ${String((step as Step).type)}`);
  }
}
