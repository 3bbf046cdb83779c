/**
 * The agent loop: ask the model, run the tool calls it makes, give it their results, until it
 * answers without tools — per goal, at most `maxIterations` model calls each. Tool results are
 * untrusted data: they only ever become `tool` messages (never templates, code or shell text).
 * Engine-agnostic: tools and the model call are passed in, so the loop is tested against a stub.
 */
import { chatCompletion, type ChatRequest, type ChatResult, type LlmSettings } from './client.js';

/** A tool the model may call. `run` returns the text the model sees; a throw becomes `error: …`. */
export interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
}

export interface ModelCost {
  prompt_per_million: number;
  completion_per_million: number;
}

export interface AgentLoopOptions {
  llm: LlmSettings;
  request?: Omit<ChatRequest, 'messages' | 'tools' | 'tool_choice'>;
  systemPrompt?: string;
  goals: string[];
  tools: AgentTool[];
  maxIterations: number;
  parallelToolCalls: boolean;
  signal: AbortSignal;
  retries?: number;
  costs?: Record<string, ModelCost>;
  /** Largest tool result the model is given, in characters (the rest is cut with a note). */
  toolResultLimit?: number;
  /** Progress lines (iteration, tool calls) for the step log. */
  onLog?: (line: string) => void;
  /** The model call; chatCompletion by default (tests may pass their own). */
  complete?: (req: ChatRequest, signal: AbortSignal) => Promise<ChatResult>;
}

export interface ToolCallRecord {
  goal: number;
  iteration: number;
  tool: string;
  arguments: unknown;
  result: string;
  error: boolean;
}

export interface AgentUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface AgentLoopResult {
  content: string;
  messages: unknown[];
  iterations: number;
  usage: AgentUsage;
  cost: number;
  models: string[];
  toolCalls: ToolCallRecord[];
  goalResults: string[];
}

/** The loop ended without an answer (iteration cap, timeout, model error); carries what happened so far. */
export class AgentLoopError extends Error {
  constructor(
    message: string,
    readonly partial: AgentLoopResult,
  ) {
    super(message);
    this.name = 'AgentLoopError';
  }
}

const DEFAULT_TOOL_RESULT_LIMIT = 32 * 1024;

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** Price of one call; 0 when the model has no entry in the cost table. */
export function callCost(costs: Record<string, ModelCost> | undefined, model: string, usage: AgentUsage): number {
  const c = costs?.[model];
  if (!c) return 0;
  return (usage.prompt_tokens * c.prompt_per_million + usage.completion_tokens * c.completion_per_million) / 1_000_000;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  return JSON.stringify(content);
}

function cap(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}\n[tool result truncated: ${text.length - limit} more characters]` : text;
}

/** Runs the loop; resolves with the final answer or throws AgentLoopError. */
export async function runAgentLoop(o: AgentLoopOptions): Promise<AgentLoopResult> {
  const complete = o.complete ?? ((req, signal) => chatCompletion(o.llm, req, { signal, retries: o.retries ?? 1, rotate: true }));
  const limit = o.toolResultLimit ?? DEFAULT_TOOL_RESULT_LIMIT;
  const byName = new Map(o.tools.map((t) => [t.name, t]));
  const toolDefs = o.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
  const messages: unknown[] = [];
  if (o.systemPrompt?.trim()) messages.push({ role: 'system', content: o.systemPrompt });
  const result: AgentLoopResult = { content: '', messages, iterations: 0, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, cost: 0, models: [], toolCalls: [], goalResults: [] };
  const log = o.onLog ?? (() => {});

  for (const [g, goal] of o.goals.entries()) {
    messages.push({ role: 'user', content: goal });
    let answered = false;
    for (let i = 1; i <= o.maxIterations; i++) {
      if (o.signal.aborted) throw new AgentLoopError(abortMessage(o.signal), result);
      result.iterations++;
      let res: ChatResult;
      try {
        res = await complete(
          { ...(o.request ?? {}), messages: [...messages], tools: toolDefs, tool_choice: 'auto', extra: { ...(o.request?.extra ?? {}), parallel_tool_calls: o.parallelToolCalls } },
          o.signal,
        );
      } catch (err) {
        throw new AgentLoopError(o.signal.aborted ? abortMessage(o.signal) : (err as Error).message, result);
      }
      result.usage.prompt_tokens += res.usage.prompt_tokens;
      result.usage.completion_tokens += res.usage.completion_tokens;
      result.usage.total_tokens += res.usage.total_tokens || res.usage.prompt_tokens + res.usage.completion_tokens;
      result.cost += callCost(o.costs, res.model, res.usage);
      if (res.model && !result.models.includes(res.model)) result.models.push(res.model);
      const calls = (res.tool_calls ?? []) as ToolCall[];
      messages.push({ role: 'assistant', content: res.content ?? null, ...(calls.length ? { tool_calls: calls } : {}) });
      log(`goal ${g + 1} iteration ${i}: ${calls.length ? `${calls.length} tool call(s): ${calls.map((c) => c.function?.name ?? '?').join(', ')}` : 'answer'}`);
      if (calls.length === 0) {
        result.content = contentText(res.content);
        result.goalResults.push(result.content);
        answered = true;
        break;
      }
      const run = async (call: ToolCall, n: number): Promise<{ role: string; tool_call_id: string; content: string }> => {
        const name = call.function?.name ?? '';
        const id = call.id ?? `call_${i}_${n}`;
        let args: unknown;
        let text: string;
        let error = false;
        try {
          const tool = byName.get(name);
          if (!tool) throw new Error(`unknown tool '${name}' (available: ${[...byName.keys()].join(', ')})`);
          args = call.function?.arguments ? JSON.parse(call.function.arguments) : {};
          if (!args || typeof args !== 'object' || Array.isArray(args)) throw new Error('tool arguments must be a JSON object');
          text = cap(await tool.run(args as Record<string, unknown>, o.signal), limit);
        } catch (err) {
          error = true;
          text = `error: ${err instanceof SyntaxError ? `tool arguments are not valid JSON (${err.message})` : (err as Error).message}`;
        }
        result.toolCalls.push({ goal: g, iteration: i, tool: name, arguments: args ?? call.function?.arguments ?? null, result: text, error });
        return { role: 'tool', tool_call_id: id, content: text };
      };
      const replies = o.parallelToolCalls ? await Promise.all(calls.map(run)) : await sequential(calls, run);
      messages.push(...replies);
      if (o.signal.aborted) throw new AgentLoopError(abortMessage(o.signal), result);
    }
    if (!answered) throw new AgentLoopError(`agent reached max_iterations (${o.maxIterations}) without a final answer${o.goals.length > 1 ? ` for goal ${g + 1}` : ''}`, result);
  }
  return result;
}

async function sequential<T, R>(items: T[], fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const [i, item] of items.entries()) out.push(await fn(item, i));
  return out;
}

function abortMessage(signal: AbortSignal): string {
  const reason = signal.reason as { name?: string; message?: string } | string | undefined;
  if (typeof reason === 'string') return reason;
  if (reason?.name === 'TimeoutError') return 'agent step timed out';
  return reason?.message ?? 'agent step was cancelled';
}
