/**
 * Turns workflow steps into plan steps: the commands as they would run, rendered with the
 * variables known before execution. A template that reads a variable only produced at run time
 * (an earlier step's export, a foreach variable) is left as written and the step is marked
 * `renderedAt: 'runtime'`.
 */
import { parseDuration } from '../util/duration.js';
import type { Action, Step } from './types.js';
import type { PlanStep } from './plan.js';
import { TemplateError, convertLoopSyntax, renderExcept } from './template.js';
import { maskSecrets } from './tpl-redact.js';

export interface StepPlanContext {
  vars: Record<string, unknown>;
  /** Variables that only exist once earlier steps/modules have run. Grows as steps are planned. */
  runtime: Set<string>;
  warnings: string[];
  secrets: readonly string[];
}

interface Rendered {
  text: string;
  runtime: boolean;
  error?: string;
}

const AGENT_EXPORTS: Record<string, string[]> = {
  agent: ['agent_content', 'agent_history', 'agent_iterations', 'agent_total_tokens', 'agent_prompt_tokens', 'agent_completion_tokens', 'agent_tool_results', 'agent_plan', 'agent_goal_results', 'agent_cost', 'agent_models', 'agent_transcript'],
  'agent-acp': ['acp_output', 'acp_stderr', 'acp_agent'],
  'agent-sdk': ['sdk_output', 'sdk_agent', 'sdk_session_id'],
};

function actionExports(actions: Action[] | undefined): string[] {
  return (actions ?? []).filter((a) => a.action === 'export' && a.name).map((a) => a.name!);
}

/** Names a step adds to the variables when it succeeds (explicit, automatic and action exports). */
export function stepExportNames(step: Step): string[] {
  const names = [...Object.keys(step.exports ?? {}), ...actionExports(step.on_success), ...actionExports(step.on_error)];
  const snake = step.name.replace(/-/g, '_');
  if (step.type === 'http') names.push(`${snake}_http_resp`);
  if (step.type === 'llm') names.push(`${snake}_llm_resp`, `${snake}_content`, `${step.name}_llm_resp`, `${step.name}_content`);
  names.push(...(AGENT_EXPORTS[step.type] ?? []));
  if (step.type === 'parallel-steps') for (const child of step.parallel_steps ?? []) names.push(...stepExportNames(child));
  return names;
}

function renderText(text: string, ctx: StepPlanContext, where: string, loop: boolean): Rendered {
  // Loop-time `[[x]]` placeholders can only be filled per iteration.
  const loopRuntime = loop && convertLoopSyntax(text) !== text;
  try {
    const r = renderExcept(text, ctx.vars, (root) => ctx.runtime.has(root));
    return { text: maskSecrets(r.text, ctx.secrets), runtime: r.kept || loopRuntime };
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    ctx.warnings.push(`${where}: ${err.message}`);
    return { text: maskSecrets(text, ctx.secrets), runtime: loopRuntime, error: err.message };
  }
}

function commandTexts(step: Step): string[] {
  switch (step.type) {
    case 'bash':
    case 'remote-bash': {
      if (step.parallel_commands?.length) return step.parallel_commands;
      if (step.commands?.length) return step.commands;
      if (step.command === undefined) return [];
      const extra = [step.speed_args, step.config_args, step.input_args, step.output_args].filter((a) => a !== undefined && a !== '');
      return [[step.command, ...extra].join(' ')];
    }
    case 'function':
      if (step.parallel_functions?.length) return step.parallel_functions;
      if (step.functions?.length) return step.functions;
      return step.function !== undefined ? [step.function] : [];
    case 'http': {
      const lines = [`${(step.method ?? 'GET').toUpperCase()} ${step.url ?? ''}`];
      if (step.request_body) lines.push(step.request_body);
      return lines;
    }
    case 'llm':
      if (step.messages?.length) {
        return step.messages.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join(' ')}`);
      }
      return step.embedding_input ?? [];
    default:
      return [];
  }
}

function foreachThreads(step: Step): string {
  const value = step.parallel ?? step.threads;
  return value === undefined || value === '' ? '1' : String(value);
}

/** Plans one step (and its children) and records its exports as run-time variables afterwards. */
export function planStep(step: Step, index: number, ctx: StepPlanContext, where: string, loop = false): PlanStep {
  const here = `${where}.${step.name || `#${index}`}`;
  const errorsFound: string[] = [];
  let runtime = false;
  const take = (text: string): string => {
    const r = renderText(text, ctx, here, loop);
    if (r.runtime) runtime = true;
    if (r.error) errorsFound.push(r.error);
    return r.text;
  };

  const plan: PlanStep = { index, name: step.name, type: step.type, commands: [], renderedAt: 'plan' };
  if (step.type === 'foreach') {
    const inputs = Array.isArray(step.input) ? step.input : step.input !== undefined ? [step.input] : [];
    const input = inputs.map(take).join(', ');
    plan.commands = [`foreach [[${step.variable ?? ''}]] in ${input} | threads: ${take(foreachThreads(step))}`];
    if (step.step) {
      const inner: StepPlanContext = { ...ctx, runtime: new Set(ctx.runtime) };
      const v = step.variable ?? '';
      for (const name of [v, `_${v}_`, '_id_']) inner.runtime.add(name);
      plan.children = [planStep(step.step, 0, inner, here, true)];
    }
  } else if (step.type === 'parallel-steps') {
    plan.children = (step.parallel_steps ?? []).map((child, i) => planStep(child, i, { ...ctx, runtime: new Set(ctx.runtime) }, here, loop));
  } else {
    plan.commands = commandTexts(step).map(take);
  }
  if (step.type === 'agent-sdk') ctx.warnings.push(`${here}: ${step.type} steps are not supported by this engine and will fail at run time`);

  if (step.pre_condition) plan.preCondition = take(step.pre_condition);
  if (step.timeout !== undefined && step.timeout !== '') {
    const before = runtime;
    const text = take(String(step.timeout));
    if (runtime === before) {
      try {
        const ms = parseDuration(text);
        if (ms !== undefined) plan.timeoutMs = ms;
      } catch (err) {
        ctx.warnings.push(`${here}: ${(err as Error).message}`);
      }
    }
  }
  if (step.depends_on?.length) plan.dependsOn = [...step.depends_on];
  if (runtime || plan.children?.some((c) => c.renderedAt === 'runtime')) plan.renderedAt = 'runtime';
  if (errorsFound.length > 0) plan.error = errorsFound[0];

  for (const name of stepExportNames(step)) ctx.runtime.add(name);
  return plan;
}

/** Plans a list of steps in order; warns about `depends_on` names that do not exist. */
export function planSteps(steps: Step[], ctx: StepPlanContext, where: string): PlanStep[] {
  const names = new Set(steps.map((s) => s.name));
  for (const step of steps) {
    for (const dep of step.depends_on ?? []) {
      if (!names.has(dep)) ctx.warnings.push(`${where}: step '${step.name}' depends on non-existent step '${dep}'`);
    }
  }
  return steps.map((step, i) => planStep(step, i, ctx, where));
}
