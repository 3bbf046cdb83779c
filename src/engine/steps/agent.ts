/**
 * agent step: an LLM tool-calling loop against the configured OpenAI-compatible provider
 * (settings `llm_config`, the step's `llm_config` over it). Tools are the step's osm functions,
 * allowed commands and custom handlers (agent-tools.ts); the step's timeout bounds the whole
 * loop; `max_iterations` caps the model calls per goal. Tokens and cost (settings
 * `llm_config.model_costs`, 0 for unknown models) are exported; the transcript is written to the
 * workspace and registered as a run artifact, also when the loop fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Step } from '../../workflow/types.js';
import { render } from '../../workflow/template.js';
import { AgentLoopError, runAgentLoop, type AgentLoopResult, type ModelCost } from '../../llm/agent-loop.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { buildAgentTools } from './agent-tools.js';
import { stepLlmSettings } from './llm.js';
import { messageOf } from '../../errors.js';

/** Runs an agent step. */
export async function executeAgent(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  if (step.unsupported_agent_fields?.length) {
    throw new StepFailure(`agent step uses fields osm does not support: ${step.unsupported_agent_fields.join(', ')}`);
  }
  const maxIterations = step.max_iterations ?? 0;
  if (maxIterations <= 0) throw new StepFailure('agent step must have max_iterations > 0');
  const goals = (step.queries?.length ? step.queries : step.query !== undefined ? [step.query] : []).map((q) => render(q, scope.vars)).filter((q) => q.trim() !== '');
  if (goals.length === 0) throw new StepFailure('agent step must have query or queries');
  const tools = buildAgentTools(step, scope, ctx);
  const { cfg, stepCfg } = stepLlmSettings(step, scope);
  const costs = (scope.exec.settings.settings as { llm_config?: { model_costs?: Record<string, ModelCost> } }).llm_config?.model_costs ?? {};
  const signals = [scope.exec.signal];
  if (ctx.timeoutMs) signals.push(AbortSignal.timeout(ctx.timeoutMs));
  const signal = AbortSignal.any(signals);
  const startedAt = new Date().toISOString();
  const commands = [`agent: ${goals.length} goal(s), max_iterations ${maxIterations}, tools: ${tools.map((t) => t.name).join(', ')}`];
  // Through the run's output: the step log, its live streams and the terminal see the agent's turns.
  const log = (line: string) => scope.exec.output.append(ctx.logFile, 1, `${line}\n`, ctx.part);

  let result: AgentLoopResult;
  try {
    result = await runAgentLoop({
      llm: cfg,
      request: { model: stepCfg.model, max_tokens: stepCfg.max_tokens, temperature: stepCfg.temperature, top_p: stepCfg.top_p, top_k: stepCfg.top_k },
      systemPrompt: step.system_prompt !== undefined ? render(step.system_prompt, scope.vars) : undefined,
      goals,
      tools,
      maxIterations,
      parallelToolCalls: step.parallel_tool_calls !== false,
      signal,
      retries: Math.max(1, Number(stepCfg.max_retries ?? cfg.max_retries ?? 3)),
      costs,
      onLog: log,
    });
  } catch (err) {
    if (!(err instanceof AgentLoopError)) throw new StepFailure(messageOf(err), '', commands);
    const message = ctx.timeoutMs && signal.aborted && !scope.exec.signal.aborted ? `agent step timed out after ${ctx.timeoutMs / 1000}s` : err.message;
    await saveTranscript(step, scope, ctx, { goals, startedAt, status: 'failed', error: message, result: err.partial });
    throw new StepFailure(message, err.partial.content, commands);
  }
  const transcript = await saveTranscript(step, scope, ctx, { goals, startedAt, status: 'completed', result });
  log(`answer (${result.iterations} iterations, ${result.usage.total_tokens} tokens):\n${result.content}`);
  return {
    output: result.content,
    lines: result.content ? result.content.split('\n').length : 0,
    autoExports: {
      agent_content: result.content,
      agent_history: result.messages,
      agent_iterations: result.iterations,
      agent_total_tokens: result.usage.total_tokens,
      agent_prompt_tokens: result.usage.prompt_tokens,
      agent_completion_tokens: result.usage.completion_tokens,
      agent_cost: result.cost,
      agent_models: result.models,
      agent_tool_results: result.toolCalls,
      agent_plan: '',
      agent_goal_results: result.goalResults,
      agent_transcript: transcript ?? '',
    },
    commands,
  };
}

interface TranscriptInfo {
  goals: string[];
  startedAt: string;
  status: 'completed' | 'failed';
  error?: string;
  result: AgentLoopResult;
}

/** Writes the transcript under `<Output>/agent-transcripts/<run>/` and registers it; the path, or undefined when it could not be written. */
async function saveTranscript(step: Step, scope: Scope, ctx: StepContext, info: TranscriptInfo): Promise<string | undefined> {
  const exec = scope.exec;
  const output = String(scope.vars.Output ?? '');
  if (!output) return undefined;
  const dir = join(output, 'agent-transcripts', exec.runUuid);
  const file = join(dir, `${basename(ctx.logFile, '.log') || 'agent'}.json`);
  const r = info.result;
  const body = {
    step: step.name,
    run_uuid: exec.runUuid,
    status: info.status,
    ...(info.error ? { error: info.error } : {}),
    started_at: info.startedAt,
    finished_at: new Date().toISOString(),
    goals: info.goals,
    models: r.models,
    iterations: r.iterations,
    usage: r.usage,
    cost: r.cost,
    tool_calls: r.toolCalls,
    messages: r.messages,
    answer: r.content,
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const text = `${JSON.stringify(body, null, 2)}\n`;
    writeFileSync(file, text, { mode: 0o600 });
    const run = exec.recorder.run;
    await exec.deps.repos.artifacts.upsert({
      run_id: run.id,
      workspace: run.workspace,
      name: `agent-transcript-${step.name}`,
      artifact_path: file,
      artifact_type: 'output',
      content_type: 'json',
      size_bytes: Buffer.byteLength(text),
      line_count: text.split('\n').length - 1,
      optional: false,
      description: `transcript of agent step ${step.name} (${info.status})`,
    });
    return file;
  } catch (err) {
    exec.log.write('WARN', 'agent transcript not saved', { step_name: step.name, error: messageOf(err) });
    return undefined;
  }
}
