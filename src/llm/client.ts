import { request } from 'undici';
import { OsmError } from '../errors.js';
import { parseDuration } from '../util/duration.js';

/** The subset of settings `llm_config` the client reads. */
export interface LlmSettings {
  llm_providers?: { provider?: string; base_url?: string; auth_token?: string; model?: string }[];
  max_tokens?: number;
  temperature?: number;
  top_k?: number;
  top_p?: number;
  n?: number;
  max_retries?: number;
  timeout?: string | number;
  system_prompt?: string;
  custom_headers?: string | Record<string, string>;
}

export interface ChatRequest {
  messages: unknown[];
  model?: string;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  n?: number;
  tools?: unknown[];
  tool_choice?: unknown;
  response_format?: unknown;
  /** Extra provider parameters merged into the body last. */
  extra?: Record<string, unknown>;
}

export interface ChatResult {
  id: string;
  model: string;
  created?: number;
  content: unknown;
  role: string;
  finish_reason: string;
  tool_calls?: unknown[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface EmbeddingResult {
  model: string;
  embeddings: number[][];
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Attempts per provider on network errors / 5xx / 429 (workflow steps retry; the API does not). */
  retries?: number;
  /** Try the next provider when one fails. */
  rotate?: boolean;
}

/** Upstream LLM failure (HTTP 502 when it reaches the API). */
export class LlmError extends OsmError {
  constructor(message: string, status = 502) {
    super('OSM_ERR_LLM', status, message);
  }
}

function providers(cfg: LlmSettings) {
  const list = (cfg.llm_providers ?? []).filter((p) => p && p.base_url);
  if (list.length === 0) throw new LlmError('No LLM providers configured', 500);
  return list;
}

/** `"A: 1, B: 2"` or a map → header object. */
export function parseCustomHeaders(h: LlmSettings['custom_headers']): Record<string, string> {
  if (!h) return {};
  if (typeof h === 'object') return { ...h };
  const out: Record<string, string> = {};
  for (const part of h.split(',')) {
    const i = part.indexOf(':');
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

async function postJson(url: string, body: unknown, token: string | undefined, cfg: LlmSettings, opts: CallOptions): Promise<{ status: number; json: unknown; text: string }> {
  const timeoutMs = opts.timeoutMs ?? parseDuration(cfg.timeout ?? '120s') ?? 120_000;
  const signals = [AbortSignal.timeout(timeoutMs)];
  if (opts.signal) signals.push(opts.signal);
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...parseCustomHeaders(cfg.custom_headers),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.any(signals),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json, text };
}

function upstreamMessage(json: unknown, text: string): string {
  const e = (json as { error?: { message?: string } | string })?.error;
  if (typeof e === 'string') return e;
  if (e && typeof e.message === 'string') return e.message;
  return text.slice(0, 500);
}

async function withProviders<T>(cfg: LlmSettings, opts: CallOptions, fn: (p: ReturnType<typeof providers>[number]) => Promise<T>): Promise<T> {
  const list = providers(cfg);
  const candidates = opts.rotate ? list : [list[0]!];
  const attempts = Math.max(1, opts.retries ?? 1);
  let last: unknown;
  for (const p of candidates) {
    for (let a = 0; a < attempts; a++) {
      try {
        return await fn(p);
      } catch (err) {
        last = err;
        if (opts.signal?.aborted) throw err;
        const retryable = !(err instanceof LlmError) || /HTTP (5\d\d|429)/.test(err.message);
        if (!retryable) break;
        if (a < attempts - 1) await new Promise((r) => setTimeout(r, 250 * 2 ** a));
      }
    }
  }
  if (last instanceof LlmError) throw last;
  throw new LlmError(`LLM request failed: ${(last as Error)?.message ?? 'unknown error'}`);
}

/** POSTs an OpenAI-compatible chat completion to the configured provider and flattens the answer. */
export async function chatCompletion(cfg: LlmSettings, req: ChatRequest, opts: CallOptions = {}): Promise<ChatResult> {
  return withProviders(cfg, opts, async (p) => {
    const messages = [...req.messages];
    if (cfg.system_prompt && !messages.some((m) => (m as { role?: string })?.role === 'system')) {
      messages.unshift({ role: 'system', content: cfg.system_prompt });
    }
    const body: Record<string, unknown> = {
      model: req.model || p.model,
      messages,
      max_tokens: req.max_tokens ?? (cfg.max_tokens || undefined),
      temperature: req.temperature ?? (cfg.temperature && cfg.temperature > 0 ? cfg.temperature : undefined),
      top_p: req.top_p ?? (cfg.top_p || undefined),
      top_k: req.top_k ?? (cfg.top_k || undefined),
      n: req.n,
      tools: req.tools,
      tool_choice: req.tool_choice,
      response_format: req.response_format,
      ...(req.extra ?? {}),
    };
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    let res;
    try {
      res = await postJson(p.base_url!, body, p.auth_token, cfg, opts);
    } catch (err) {
      throw new LlmError(`LLM request failed: ${(err as Error).message}`);
    }
    if (res.status >= 400) throw new LlmError(`LLM request failed: HTTP ${res.status}: ${upstreamMessage(res.json, res.text)}`);
    if (res.json === undefined) throw new LlmError(`LLM request failed: failed to parse response (body: ${res.text.slice(0, 200)})`);
    const j = res.json as Record<string, any>;
    if (j.error) throw new LlmError(`LLM API error: ${upstreamMessage(j, res.text)}`);
    const choice = Array.isArray(j.choices) ? j.choices[0] : undefined;
    const msg = choice?.message ?? {};
    const usage = j.usage ?? {};
    return {
      id: String(j.id ?? ''),
      model: String(j.model ?? body.model ?? ''),
      created: j.created,
      content: choice ? (msg.content ?? null) : null,
      role: String(msg.role ?? 'assistant'),
      finish_reason: String(choice?.finish_reason ?? ''),
      ...(Array.isArray(msg.tool_calls) && msg.tool_calls.length ? { tool_calls: msg.tool_calls } : {}),
      usage: {
        prompt_tokens: Number(usage.prompt_tokens ?? 0),
        completion_tokens: Number(usage.completion_tokens ?? 0),
        total_tokens: Number(usage.total_tokens ?? 0),
      },
    };
  });
}

/** Embeddings through the provider's `/embeddings` endpoint (derived from its chat URL). */
export async function createEmbeddings(cfg: LlmSettings, input: string[], model?: string, opts: CallOptions = {}): Promise<EmbeddingResult> {
  return withProviders(cfg, opts, async (p) => {
    const url = p.base_url!.replace(/\/chat\/completions\/?$/, '/embeddings');
    const body = { model: model || p.model, input };
    let res;
    try {
      res = await postJson(url, body, p.auth_token, cfg, opts);
    } catch (err) {
      throw new LlmError(`Embedding request failed: ${(err as Error).message}`);
    }
    if (res.status >= 400) throw new LlmError(`Embedding request failed: HTTP ${res.status}: ${upstreamMessage(res.json, res.text)}`);
    if (res.json === undefined) throw new LlmError(`Embedding request failed: failed to parse response (body: ${res.text.slice(0, 200)})`);
    const j = res.json as Record<string, any>;
    if (j.error) throw new LlmError(`Embedding API error: ${upstreamMessage(j, res.text)}`);
    const data = Array.isArray(j.data) ? [...j.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : [];
    return {
      model: String(j.model ?? body.model ?? ''),
      embeddings: data.map((d: { embedding?: number[] }) => d.embedding ?? []),
      usage: { prompt_tokens: Number(j.usage?.prompt_tokens ?? 0), total_tokens: Number(j.usage?.total_tokens ?? 0) },
    };
  });
}
