import { z } from 'zod';
import { errors } from '../../errors.js';
import { chatCompletion, createEmbeddings, type LlmSettings } from '../../llm/client.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;

const message = z
  .object({
    role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }),
    content: z.union([z.string(), z.array(z.unknown()), z.null()], { error: 'content must be a string, an array of parts or null' }).optional(),
    name: z.string().optional(),
    tool_call_id: z.string().optional(),
    tool_calls: z.array(z.unknown()).optional(),
  })
  .loose();

const positiveInt = (name: string) => z.number({ error: `${name} must be a positive integer` }).int(`${name} must be a positive integer`).positive(`${name} must be a positive integer`);

export const chatBody = z.object({
  messages: z.array(message, { error: 'messages is required' }).min(1, 'messages must not be empty'),
  model: z.string({ error: 'model must be a string' }).optional(),
  max_tokens: positiveInt('max_tokens').optional(),
  temperature: z.number({ error: 'temperature must be between 0 and 2' }).min(0, 'temperature must be between 0 and 2').max(2, 'temperature must be between 0 and 2').optional(),
  top_p: z.number({ error: 'top_p must be between 0 and 1' }).min(0, 'top_p must be between 0 and 1').max(1, 'top_p must be between 0 and 1').optional(),
  top_k: z.number({ error: 'top_k must be a non-negative integer' }).int('top_k must be a non-negative integer').min(0, 'top_k must be a non-negative integer').optional(),
  n: positiveInt('n').optional(),
  stream: z.boolean({ error: 'stream must be a boolean' }).optional(),
  tools: z.array(z.unknown(), { error: 'tools must be an array' }).optional(),
  tool_choice: z.union([z.string(), z.record(z.string(), z.unknown())], { error: 'tool_choice must be a string or an object' }).optional(),
  response_format: z.record(z.string(), z.unknown(), { error: 'response_format must be an object' }).optional(),
});

export const embeddingsBody = z.object({
  input: z
    .union([z.string().transform((s) => [s]), z.array(z.string({ error: 'input must be an array of strings' }))], {
      error: (iss) => (iss.input === undefined ? 'input is required' : 'input must be an array of strings'),
    })
    .refine((v) => v.length > 0, 'input is required'),
  model: z.string({ error: 'model must be a string' }).optional(),
});

/** Our messages name their field already, so they are joined without the path. */
function validate<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const seen = new Set<string>();
  const msgs = r.error.issues.map((i) => {
    const where = i.path.length > 1 ? `${i.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[')}: ` : '';
    return `${where}${i.message}`;
  });
  throw errors.validation(msgs.filter((m) => (seen.has(m) ? false : (seen.add(m), true))).join('; '));
}

/** POST /llm/v1/chat/completions and /llm/v1/embeddings (plus the aliases without /v1). */
export const registerLlmRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  const cfg = () => app.settings().settings.llm_config as LlmSettings;
  for (const url of ['/osm/api/llm/v1/chat/completions', '/osm/api/llm/chat/completions']) {
    defineRoute(server, app, {
      method: 'POST', url, summary: 'Forward a chat completion to the configured LLM provider', tags: ['llm'], sideEffects: 'writes',
      bodyKind: 'json',
      responses: {
        200: { description: '{ id, model, content, finish_reason, tool_calls?, usage }' },
        400: { description: 'Invalid request (messages, roles, temperature 0-2, stream unsupported …)' },
        500: { description: 'No LLM providers configured' },
        502: { description: 'The provider failed' },
      },
      handler: async ({ req }) => {
        const raw = req.body;
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw errors.invalidBody();
        if ((raw as { stream?: unknown }).stream === true) throw errors.streamingUnsupported();
        const body = validate(chatBody, raw);
        const { stream: _stream, ...request } = body;
        const res = await chatCompletion(cfg(), request, { retries: 1, rotate: false });
        return {
          id: res.id,
          model: res.model,
          content: res.content ?? null,
          finish_reason: res.finish_reason,
          ...(res.tool_calls?.length ? { tool_calls: res.tool_calls } : {}),
          usage: res.usage,
        };
      },
    });
  }
  for (const url of ['/osm/api/llm/v1/embeddings', '/osm/api/llm/embeddings']) {
    defineRoute(server, app, {
      method: 'POST', url, summary: 'Forward an embeddings request to the configured LLM provider', tags: ['llm'], sideEffects: 'writes',
      bodyKind: 'json',
      responses: { 200: { description: '{ model, embeddings, usage }' }, 400: { description: 'input is required' }, 500: { description: 'No LLM providers configured' }, 502: { description: 'The provider failed' } },
      handler: async ({ req }) => {
        const raw = req.body;
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw errors.invalidBody();
        const body = validate(embeddingsBody, raw);
        const res = await createEmbeddings(cfg(), body.input, body.model, { retries: 1, rotate: false });
        return { model: res.model, embeddings: res.embeddings, usage: res.usage };
      },
    });
  }
};
