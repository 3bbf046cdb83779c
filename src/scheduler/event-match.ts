/**
 * Matching one event against an event trigger (reference §5.2): filters and filter_functions
 * (JavaScript with a global `event`), `{{event.…}}` placeholders and dedupe windows.
 *
 * Event data is untrusted. The reference substitutes placeholders into filter code as text, which
 * turns data into code (`"x-{{event.data.a}}"` with a = `"+exec_cmd('id')+"`); here the value
 * never enters the code text: placeholders become references to variables bound to the values.
 */
import type { EventRecord } from '../store/index.js';
import type { TriggerEvent } from '../workflow/types.js';
import { evaluateDetached } from '../engine/scripts.js';
import { valueToString } from '../workflow/template.js';

/** What filters, dedupe keys and input mappings see as `event` (and what `_event_envelope` carries). */
export interface EventEnvelope {
  topic: string;
  id: string;
  name: string;
  source: string;
  data_type: string;
  /** The data parsed from JSON when it is JSON, else the raw text. */
  data: unknown;
  data_raw: string;
  workspace: string;
  run_uuid: string;
  workflow_name: string;
  timestamp: string;
}

/** The envelope of a stored event. */
export function eventFromRecord(rec: EventRecord): EventEnvelope {
  let data: unknown = rec.data;
  if (typeof rec.data === 'string') {
    try {
      data = JSON.parse(rec.data);
    } catch {
      data = rec.data;
    }
  }
  return {
    topic: rec.topic,
    id: rec.event_id,
    name: rec.name,
    source: rec.source,
    data_type: rec.data_type,
    data,
    data_raw: typeof rec.data === 'string' ? rec.data : JSON.stringify(rec.data ?? null),
    workspace: rec.workspace,
    run_uuid: rec.run_id,
    workflow_name: rec.workflow_name,
    timestamp: rec.created_at,
  };
}

/** Looks up a dotted path (`data.url`, `data.items.0`) in the envelope; undefined when absent. */
export function lookupEventPath(env: EventEnvelope, path: string): unknown {
  let cur: unknown = env;
  for (const part of path.split('.')) {
    if (part === '') return undefined;
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

const PLACEHOLDER = /\{\{\s*event\.([A-Za-z0-9_.-]+)\s*\}\}/g;

/** `{{event.x}}` placeholders of a dedupe key replaced by the values as text. */
export function renderEventText(template: string, env: EventEnvelope): string {
  return template.replace(PLACEHOLDER, (_m, path: string) => valueToString(lookupEventPath(env, path)));
}

type Quote = '' | "'" | '"' | '`';

/** The quote context after `chunk`, starting in `q` (strings and template literals; escapes skipped). */
function advanceQuote(chunk: string, start: Quote): Quote {
  let q = start;
  for (let k = 0; k < chunk.length; k++) {
    const c = chunk[k];
    if (q) {
      if (c === '\\') k++;
      else if (c === q) q = '';
    } else if (c === "'" || c === '"' || c === '`') q = c;
  }
  return q;
}

/** Filter code with its placeholders replaced by references to bound variables, plus those variables. */
export interface PreparedCode {
  code: string;
  vars: Record<string, unknown>;
}

/**
 * Replaces `{{event.x}}` placeholders of filter or input code WITHOUT putting the value into the
 * code: outside a string a placeholder becomes `__osm_ev[i]` (the value itself); inside a string
 * literal it splices in `__osm_evs[i]` (the value as text). Whatever the event holds, and even if
 * the quote tracking guessed wrong, the value never becomes code.
 */
export function prepareEventCode(code: string, env: EventEnvelope): PreparedCode {
  const values: unknown[] = [];
  const texts: string[] = [];
  let out = '';
  let quote: Quote = '';
  let last = 0;
  PLACEHOLDER.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = PLACEHOLDER.exec(code)) !== null) {
    const literal = code.slice(last, m.index);
    quote = advanceQuote(literal, quote);
    out += literal;
    const value = lookupEventPath(env, m[1]!);
    const i = values.length;
    values.push(value);
    texts.push(valueToString(value));
    if (quote === '') out += `__osm_ev[${i}]`;
    else if (quote === '`') out += `\${__osm_evs[${i}]}`;
    else out += `${quote} + __osm_evs[${i}] + ${quote}`;
    last = m.index + m[0].length;
  }
  out += code.slice(last);
  return { code: out, vars: { ...eventVars(env), __osm_ev: values, __osm_evs: texts } };
}

/** The variables filter code and input functions see. */
export function eventVars(env: EventEnvelope): Record<string, unknown> {
  return { event: env, event_data: env.data };
}

/**
 * True when every filter and filter function is truthy for the event. A JavaScript error or a
 * time-out counts as "no match" (reference behaviour), reported through `onError`. Filters are
 * workflow code: they run in a script evaluator process, never on the daemon's event loop.
 */
export async function filtersPass(cfg: TriggerEvent | undefined, env: EventEnvelope, opts: { timeoutMs?: number; onError?: (expr: string, err: unknown) => void } = {}): Promise<boolean> {
  const exprs = [...(cfg?.filters ?? []), ...(cfg?.filter_functions ?? [])];
  for (const expr of exprs) {
    if (typeof expr !== 'string' || expr.trim() === '') continue;
    try {
      const prepared = prepareEventCode(expr, env);
      if ((await evaluateDetached(prepared.code, prepared.vars, { timeoutMs: opts.timeoutMs ?? 1000, mode: 'condition' })) !== true) return false;
    } catch (err) {
      opts.onError?.(expr, err);
      return false;
    }
  }
  return true;
}

/** Remembers dedupe keys for their window; expired keys are swept as new ones arrive. */
export class Deduper {
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  /** True when `key` was seen within `windowMs` (a duplicate); otherwise remembers it and returns false. */
  isDuplicate(key: string, windowMs: number | undefined, now = Date.now()): boolean {
    if (!windowMs || windowMs <= 0 || key === '') return false;
    this.sweep(now);
    const until = this.seen.get(key);
    if (until !== undefined && until > now) return true;
    this.seen.set(key, now + windowMs);
    return false;
  }

  /** Number of remembered keys (expired ones included until the next sweep). */
  get size(): number {
    return this.seen.size;
  }

  /** Forgets keys whose window has passed (at most every 30 s unless forced). */
  sweep(now = Date.now(), force = false): void {
    if (!force && now - this.lastSweep < 30_000) return;
    this.lastSweep = now;
    for (const [k, until] of this.seen) if (until <= now) this.seen.delete(k);
  }

  /** Forgets every key with the given prefix (a trigger that was unregistered). */
  forgetPrefix(prefix: string): void {
    for (const k of this.seen.keys()) if (k.startsWith(prefix)) this.seen.delete(k);
  }
}
