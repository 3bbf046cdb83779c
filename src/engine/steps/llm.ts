import type { Step } from '../../workflow/types.js';
import { renderDeep } from '../../workflow/template.js';
import { chatCompletion, createEmbeddings, type LlmSettings } from '../../llm/client.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { exportPrefix } from './http.js';
import { messageOf } from '../../errors.js';

/** Settings `llm_config` with the step's `llm_config` over it (provider chosen by name when given). */
export function stepLlmSettings(step: Step, scope: Scope): { cfg: LlmSettings; base: LlmSettings; stepCfg: NonNullable<Step['llm_config']> } {
  const base = (scope.exec.settings.settings as { llm_config?: LlmSettings }).llm_config ?? {};
  const stepCfg = step.llm_config ?? {};
  const cfg: LlmSettings = {
    ...base,
    ...(stepCfg.max_tokens !== undefined ? { max_tokens: stepCfg.max_tokens } : {}),
    ...(stepCfg.temperature !== undefined ? { temperature: stepCfg.temperature } : {}),
    ...(stepCfg.custom_headers !== undefined ? { custom_headers: stepCfg.custom_headers } : {}),
  };
  if (stepCfg.provider && base.llm_providers?.length) {
    const chosen = base.llm_providers.filter((p) => p.provider === stepCfg.provider);
    if (chosen.length) cfg.llm_providers = chosen;
  }
  return { cfg, base, stepCfg };
}

/**
 * llm step: chat completion (messages) or embeddings (is_embedding + embedding_input) through the
 * provider of settings `llm_config`, with retries and provider rotation. Exports
 * `<step>_llm_resp` and `<step>_content`.
 */
export async function executeLlm(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const { cfg, base, stepCfg } = stepLlmSettings(step, scope);
  const prefix = exportPrefix(step.name);
  const opts = { timeoutMs: ctx.timeoutMs, signal: scope.exec.signal, retries: Math.max(1, Number(stepCfg.max_retries ?? base.max_retries ?? 3)), rotate: true };
  try {
    if (step.is_embedding) {
      const input = renderDeep(step.embedding_input ?? [], scope.vars).map(String);
      if (input.length === 0) throw new StepFailure('llm step with is_embedding needs embedding_input');
      const res = await createEmbeddings(cfg, input, stepCfg.model, opts);
      const text = JSON.stringify(res.embeddings);
      scope.exec.output.append(ctx.logFile, 1, `embeddings model=${res.model} inputs=${input.length}\n`, ctx.part);
      return {
        output: text,
        lines: 1,
        autoExports: { [`${prefix}_llm_resp`]: res, [`${prefix}_content`]: text, [`${prefix}_embeddings`]: res.embeddings },
        commands: [`embeddings (${input.length} inputs)`],
      };
    }
    if (!step.messages || step.messages.length === 0) throw new StepFailure('llm step must have messages or embedding_input with is_embedding: true');
    const messages = renderDeep(step.messages, scope.vars);
    const res = await chatCompletion(
      cfg,
      {
        messages,
        model: stepCfg.model,
        max_tokens: stepCfg.max_tokens,
        temperature: stepCfg.temperature,
        top_p: stepCfg.top_p,
        top_k: stepCfg.top_k,
        n: stepCfg.n,
        response_format: stepCfg.response_format,
        tools: step.tools,
        tool_choice: step.tool_choice,
        extra: step.extra_llm_parameters,
      },
      opts,
    );
    const content = typeof res.content === 'string' ? res.content : res.content == null ? '' : JSON.stringify(res.content);
    scope.exec.output.append(ctx.logFile, 1, `chat model=${res.model} finish=${res.finish_reason}\n${content}\n`, ctx.part);
    return {
      output: content,
      lines: content ? content.split('\n').length : 0,
      autoExports: { [`${prefix}_llm_resp`]: res, [`${prefix}_content`]: content },
      commands: [`chat completion (${messages.length} messages)`],
    };
  } catch (err) {
    if (err instanceof StepFailure) throw err;
    throw new StepFailure(messageOf(err));
  }
}

