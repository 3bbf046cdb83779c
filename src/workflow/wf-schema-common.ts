/**
 * Lenient building blocks for the workflow YAML schemas. YAML writers mix scalars freely
 * (`timeout: 30` vs `timeout: "30"`, `enabled: "true"`, an empty `command:` that YAML reads as
 * null), so these coerce the harmless cases and reject the rest with a short, readable message.
 */
import { z } from 'zod';
import { parseDuration } from '../util/duration.js';
import type { Action, Decision, DecisionWork, LlmMessage, LlmStepConfig, RunnerConfig } from './types.js';

/** Null (an empty YAML value) counts as absent; numbers and booleans become their text. */
export function scalarText(value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value;
}

function nullToUndefined(value: unknown): unknown {
  return value === null ? undefined : value;
}

function boolish(value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === 'yes') return true;
    if (v === 'false' || v === 'no' || v === '') return false;
  }
  return value;
}

/** A required string (numbers/booleans coerced). */
export const reqString = (missing = 'is required') =>
  z.preprocess(scalarText, z.string({ error: (iss) => (iss.input === undefined ? missing : 'must be a string') }));

/** An optional string (numbers/booleans coerced, null = absent). */
export const optString = z.preprocess(scalarText, z.string({ error: 'must be a string' }).optional());

/** An optional boolean (`"true"`/`"false"` text accepted). */
export const optBool = z.preprocess(boolish, z.boolean({ error: 'must be true or false' }).optional());

/** A boolean with a default. */
export const boolDefault = (def: boolean) => z.preprocess(boolish, z.boolean({ error: 'must be true or false' }).default(def));

/** A list of strings; a single scalar becomes a one-item list; null = absent. */
export const optStringList = z.preprocess(
  (v) => {
    if (v === null || v === undefined) return undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return [String(v)];
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'number' || typeof x === 'boolean' ? String(x) : x === null ? '' : x));
    return v;
  },
  z.array(z.string({ error: 'must be a string' }), { error: 'must be a list of strings' }).optional(),
);

/** A list of strings defaulting to []. */
export const stringList = optStringList.transform((v) => v ?? []);

/** A string → string map; scalar values coerced to text. */
export const optStringMap = z.preprocess(
  (v) => {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, x === null ? '' : scalarText(x)]));
  },
  z.record(z.string(), z.string({ error: 'must be a scalar value' }), { error: 'must be a mapping of names to values' }).optional(),
);

/** A free-form mapping. */
export const optAnyMap = z.preprocess(
  nullToUndefined,
  z.record(z.string(), z.unknown(), { error: 'must be a mapping' }).optional(),
);

function isTemplate(text: string): boolean {
  return text.includes('{{') || text.includes('[[');
}

/** Step timeout: integer seconds, duration text (`30m`, `1h30m`, `2d`) or a template. */
export const optTimeout = z.preprocess(
  nullToUndefined,
  z
    .union([z.number(), z.string()], { error: 'must be seconds or a duration such as 30s, 5m, 1h30m or 2d' })
    .optional()
    .superRefine((v, ctx) => {
      if (typeof v === 'number') {
        if (!Number.isFinite(v) || v < 0) ctx.addIssue({ code: 'custom', message: 'must be a non-negative number of seconds' });
        return;
      }
      if (typeof v !== 'string' || isTemplate(v)) return;
      try {
        parseDuration(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: `invalid duration '${v}' (use seconds, 30s, 5m, 1h30m or 2d)` });
      }
    }),
);

/** foreach concurrency: an integer or a template string. */
export const optConcurrency = z.preprocess(
  nullToUndefined,
  z
    .union([z.number(), z.string()], { error: 'must be an integer or a template' })
    .optional()
    .superRefine((v, ctx) => {
      if (typeof v === 'number' && !Number.isInteger(v)) ctx.addIssue({ code: 'custom', message: 'must be an integer' });
      if (typeof v === 'string' && !isTemplate(v) && !/^\s*-?\d+\s*$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: `must be an integer or a template, got '${v}'` });
      }
    }),
);

/** `enumOf` with a message listing the allowed values. */
export function enumOf<const T extends readonly [string, ...string[]]>(values: T, missing = 'is required') {
  return z.enum(values, {
    error: (iss) => (iss.input === undefined ? missing : `must be one of ${values.join(', ')}`),
  });
}

/** Drops keys whose value is undefined (keeps JSON and snapshots tidy). */
export function compact<T extends object>(obj: T): T {
  for (const key of Object.keys(obj) as (keyof T)[]) {
    if (obj[key] === undefined) delete obj[key];
  }
  return obj;
}

/** Keys of `raw` that are not in `known`. */
export function unknownKeysOf(raw: Record<string, unknown>, known: ReadonlySet<string>): string[] {
  return Object.keys(raw).filter((k) => !known.has(k));
}

/** `runner_config` / `step_runner_config` (docker and ssh settings). */
export const RunnerConfigSchema = z.preprocess(
  nullToUndefined,
  z
    .looseObject(
      {
        image: optString,
        env: optStringMap,
        volumes: optStringList,
        network: optString,
        persistent: optBool,
        host: optString,
        port: z.preprocess(nullToUndefined, z.union([z.number(), z.string()], { error: 'must be a port number' }).optional()),
        user: optString,
        key_file: optString,
        password: optString,
        workdir: optString,
      },
      { error: 'must be a mapping' },
    )
    .optional(),
).transform((raw): RunnerConfig | undefined => {
  if (!raw) return undefined;
  return compact({
    image: raw.image, env: raw.env, volumes: raw.volumes, network: raw.network, persistent: raw.persistent,
    host: raw.host, port: raw.port, user: raw.user, key_file: raw.key_file, password: raw.password, workdir: raw.workdir,
  });
});

/** Action kinds of on_success / on_error. */
export const ACTION_NAMES = ['log', 'abort', 'continue', 'export', 'run', 'notify'] as const;

const ActionSchema = z
  .looseObject(
    {
      // Not checked here: the reference ignores an entry without a known action (lint: action).
      action: optString,
      message: optString,
      condition: optString,
      name: optString,
      value: z.unknown().optional(),
      type: optString,
      command: optString,
      functions: optStringList,
      notify: optString,
    },
    { error: 'must be a mapping' },
  )
  .transform((a): Action => compact({
    action: (a.action ?? '').trim(), message: a.message, condition: a.condition, name: a.name, value: a.value,
    type: a.type, command: a.command, functions: a.functions, notify: a.notify,
  }));

/** on_success / on_error: a list of actions. */
export const optActions = z.preprocess(nullToUndefined, z.array(ActionSchema, { error: 'must be a list of actions' }).optional());

const workShape = {
  command: optString,
  commands: optStringList,
  function: optString,
  functions: optStringList,
  goto: optString,
};

function toWork(w: { command?: string; commands?: string[]; function?: string; functions?: string[]; goto?: string }): DecisionWork {
  return compact({ command: w.command, commands: w.commands, function: w.function, functions: w.functions, goto: w.goto });
}

const WorkSchema = z.looseObject(workShape, { error: 'must be a mapping' }).transform(toWork);

/** A step's `decision` block (switch/cases/default/conditions). */
export const DecisionSchema = z.preprocess(
  nullToUndefined,
  z
    .looseObject(
      {
        switch: optString,
        cases: z.preprocess(nullToUndefined, z.record(z.string(), WorkSchema, { error: 'must be a mapping of values to actions' }).optional()),
        default: z.preprocess(nullToUndefined, WorkSchema.optional()),
        conditions: z.preprocess(
          nullToUndefined,
          z
            .array(
              z.looseObject({ if: reqString('condition needs an if expression'), ...workShape }, { error: 'must be a mapping' })
                .transform((c) => ({ if: c.if, ...toWork(c) })),
              { error: 'must be a list' },
            )
            .optional(),
        ),
      },
      { error: 'must be a mapping' },
    )
    .optional(),
).transform((d): Decision | undefined =>
  d ? compact({ switch: d.switch, cases: d.cases, default: d.default, conditions: d.conditions }) : undefined,
);

const MessagePartSchema = z.looseObject(
  {
    type: enumOf(['text', 'image_url'] as const, 'part type is required'),
    text: optString,
    image_url: z.preprocess(
      nullToUndefined,
      z.union([z.string(), z.looseObject({ url: reqString(), detail: optString })], { error: 'must be a URL or {url, detail}' }).optional(),
    ),
  },
  { error: 'must be a mapping' },
);

const MessageSchema = z
  .looseObject(
    {
      role: enumOf(['system', 'user', 'assistant', 'tool'] as const, 'message role is required'),
      content: z.preprocess(
        scalarText,
        z.union([z.string(), z.array(MessagePartSchema)], {
          error: (iss) => (iss.input === undefined ? 'message content is required' : 'must be text or a list of parts'),
        }),
      ),
      name: optString,
      tool_call_id: optString,
    },
    { error: 'must be a mapping' },
  )
  .transform((m): LlmMessage => compact({
    role: m.role,
    content: typeof m.content === 'string'
      ? m.content
      : m.content.map((p) => compact({
        type: p.type,
        text: p.text,
        image_url: typeof p.image_url === 'object' ? compact({ url: p.image_url.url, detail: p.image_url.detail }) : p.image_url,
      })),
    name: m.name,
    tool_call_id: m.tool_call_id,
  }));

/** llm `messages` (role + text or parts). */
export const optMessages = z.preprocess(nullToUndefined, z.array(MessageSchema, { error: 'must be a list of messages' }).optional());

const optNumber = z.preprocess(nullToUndefined, z.number({ error: 'must be a number' }).optional());

/** A step's `llm_config`. */
export const LlmConfigSchema = z.preprocess(
  nullToUndefined,
  z
    .looseObject(
      {
        provider: optString,
        model: optString,
        max_tokens: optNumber,
        temperature: optNumber,
        top_k: optNumber,
        top_p: optNumber,
        n: optNumber,
        timeout: z.preprocess(nullToUndefined, z.union([z.number(), z.string()], { error: 'must be seconds or a duration' }).optional()),
        max_retries: optNumber,
        stream: optBool,
        response_format: optAnyMap,
        custom_headers: z.preprocess(nullToUndefined, z.union([z.string(), z.record(z.string(), z.string())], { error: 'must be text or a mapping' }).optional()),
      },
      { error: 'must be a mapping' },
    )
    .optional(),
).transform((c): LlmStepConfig | undefined => (c ? compact({
  provider: c.provider, model: c.model, max_tokens: c.max_tokens, temperature: c.temperature, top_k: c.top_k,
  top_p: c.top_p, n: c.n, timeout: c.timeout, max_retries: c.max_retries, stream: c.stream,
  response_format: c.response_format, custom_headers: c.custom_headers,
}) : undefined));

/** Turns a zod issue into a message a workflow author understands. */
export function friendlyMessage(iss: { code?: string; expected?: string; input?: unknown; message?: string }): string | undefined {
  if (iss.code === 'invalid_type') {
    if (iss.input === undefined) return 'is required';
    switch (iss.expected) {
      case 'string': return 'must be a string';
      case 'array': return 'must be a list';
      case 'object': case 'record': return 'must be a mapping';
      case 'number': case 'int': return 'must be a number';
      case 'boolean': return 'must be true or false';
      default: return undefined;
    }
  }
  return undefined;
}
