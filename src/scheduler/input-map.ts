/**
 * Turns a trigger's `input` into a run's target and params (reference §5.2).
 *
 * Two syntaxes:
 * - exports-style map `var: expression` — a function call (`trim(event_data.desc)`) evaluated
 *   with the globals `event` and `event_data`, a path (`event_data.url`, `event.source`), or a
 *   literal; `target`/`Target` set the run target, everything else becomes a param;
 * - legacy `{type: event_data|function|param|file, field, function, path, name, value}`.
 *
 * Everything resolved from an event is untrusted: the target must pass `validateTarget` and params
 * `validateParamValue` (shell metacharacters, control characters), or the fire fails.
 */
import { looksLikeFunctionCall } from '../engine/js-runtime.js';
import { evaluateDetached } from '../engine/scripts.js';
import { valueToString } from '../workflow/template.js';
import { validateParamValue, validateTarget } from '../workflow/target.js';
import { lookupEventPath, prepareEventCode, type EventEnvelope } from './event-match.js';

export interface ResolvedInput {
  target?: string;
  params: Record<string, string>;
}

const LEGACY_KEYS = new Set(['type', 'field', 'path', 'function', 'name', 'value']);
const LEGACY_TYPES = new Set(['event_data', 'function', 'param', 'file']);
const TARGET_KEYS = new Set(['target', 'Target']);

/** True for the legacy `{type, field, …}` form. */
export function isLegacyInput(input: Record<string, unknown>): boolean {
  return typeof input.type === 'string' && LEGACY_TYPES.has(input.type) && Object.keys(input).every((k) => LEGACY_KEYS.has(k));
}

/** Runs a function-call expression with the event bound (placeholders never spliced as code), off the event loop. */
async function evalExpression(expr: string, env: EventEnvelope | undefined, timeoutMs: number): Promise<unknown> {
  const prepared = env ? prepareEventCode(expr, env) : { code: expr, vars: {} };
  return evaluateDetached(prepared.code, prepared.vars, { timeoutMs, mode: 'value' });
}

/** One value of the map syntax. */
async function resolveExpression(value: unknown, env: EventEnvelope | undefined, timeoutMs: number): Promise<unknown> {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  const dataPath = /^event_data((?:\.[A-Za-z0-9_-]+)*)$/.exec(text);
  if (dataPath) return env ? lookupEventPath(env, `data${dataPath[1]}`) : undefined;
  const field = /^event((?:\.[A-Za-z0-9_-]+)+)$/.exec(text);
  if (field) return env ? lookupEventPath(env, field[1]!.slice(1)) : undefined;
  if (looksLikeFunctionCall(text)) return evalExpression(text, env, timeoutMs);
  return value;
}

/** The single value of the legacy syntax. */
async function resolveLegacy(input: Record<string, unknown>, env: EventEnvelope | undefined, timeoutMs: number): Promise<unknown> {
  switch (input.type) {
    case 'event_data': {
      const field = String(input.field ?? '');
      return env && field ? lookupEventPath(env, `data.${field}`) : undefined;
    }
    case 'function':
      return typeof input.function === 'string' && input.function.trim() ? evalExpression(input.function, env, timeoutMs) : undefined;
    case 'file':
      return input.path;
    default:
      return input.value;
  }
}

function assign(out: ResolvedInput, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  const text = valueToString(value);
  if (key === 'target' || (key === 'Target' && out.target === undefined)) {
    if (text !== '') out.target = text;
    return;
  }
  if (TARGET_KEYS.has(key)) return;
  out.params[key] = text;
}

/**
 * Resolves a trigger input against an event (or, for cron and watch triggers, against nothing:
 * only literals and function calls then give values). Throws `invalidTarget` for a target or
 * param that is not safe to hand to a workflow; function errors propagate.
 */
export async function resolveInput(input: Record<string, unknown> | undefined, env: EventEnvelope | undefined, opts: { timeoutMs?: number } = {}): Promise<ResolvedInput> {
  const out: ResolvedInput = { params: {} };
  if (!input || typeof input !== 'object') return out;
  const timeoutMs = opts.timeoutMs ?? 2000;
  if (isLegacyInput(input)) {
    const value = await resolveLegacy(input, env, timeoutMs);
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    assign(out, name || 'target', value);
  } else {
    for (const [key, expr] of Object.entries(input)) assign(out, key, await resolveExpression(expr, env, timeoutMs));
  }
  if (out.target !== undefined) validateTarget(out.target, env ? 'event input target' : 'trigger input target');
  for (const [k, v] of Object.entries(out.params)) validateParamValue(k, v);
  return out;
}

/** Largest `_event_envelope` handed to a run; bigger payloads drop the raw text, then the data. */
export const MAX_ENVELOPE_BYTES = 32 * 1024;

/**
 * The `_event_envelope` param: the envelope as JSON, base64-encoded. Params must pass
 * `validateParamValue` (JSON has quotes and braces), and base64 keeps the value inert in any
 * command it is rendered into; workflows read it with `base64_decode(...)`.
 */
export function envelopeParam(env: EventEnvelope): string {
  let json = JSON.stringify(env);
  if (Buffer.byteLength(json) > MAX_ENVELOPE_BYTES) json = JSON.stringify({ ...env, data_raw: '' });
  if (Buffer.byteLength(json) > MAX_ENVELOPE_BYTES) json = JSON.stringify({ ...env, data: null, data_raw: '', truncated: true });
  return Buffer.from(json, 'utf8').toString('base64');
}
