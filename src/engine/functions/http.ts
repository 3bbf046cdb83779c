/**
 * HTTP and network functions (reference §10.2 "http"): 30 s per attempt, up to 3 attempts with
 * exponential backoff on network errors or status ≥ 500, TLS verification off for these calls.
 * In an evaluation made for an API client (`ctx.outbound` set) every request follows the outbound
 * policy: a refused host answers like a failed request, with the refusal as its error.
 */
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, asText, isMissing } from './helpers.js';
import { refuseUrl, runNetChild } from './http-child.js';
import { REFERENCE_VERSION } from '../../version.js';

/** The reference's default User-Agent, kept so targets see the same client. */
export const DEFAULT_USER_AGENT = `Mozilla/5.0 (compatible; Osmedeus/${REFERENCE_VERSION}; +https://github.com/j3ssie/osmedeus)`;
const ATTEMPT_MS = 30_000;
// Three attempts plus backoff, and room for the child to start.
const CALL_CAP_MS = 3 * ATTEMPT_MS + 10_000;

interface ChildResponse {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  bytes?: number;
  ms?: number;
  error?: string;
}

/** Headers given as an object or a JSON object string → a plain string map. */
function headerMap(v: unknown): Record<string, string> {
  let obj: unknown = v;
  if (typeof v === 'string') {
    try {
      obj = JSON.parse(v);
    } catch {
      return {};
    }
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj as Record<string, unknown>)) if (val !== undefined && val !== null) out[k] = asText(val);
  return out;
}

/** A body argument: strings as is, other values JSON-encoded; undefined when absent. */
function bodyOf(v: unknown): string | undefined {
  if (isMissing(v)) return undefined;
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v);
  } catch {
    return asText(v);
  }
}

/** Validates the URL: only http and https are fetched. */
function urlError(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : `unsupported URL scheme: ${u.protocol}`;
  } catch {
    return `invalid URL: ${url}`;
  }
}

/** One request through the child process. */
export function fetchSync(ctx: FnContext | undefined, url: string, method: string, headers: Record<string, string>, body?: string): ChildResponse {
  const bad = urlError(url) ?? refuseUrl(ctx?.outbound, url);
  if (bad) return { error: bad, ms: 0 };
  const hasUa = Object.keys(headers).some((k) => k.toLowerCase() === 'user-agent');
  const req = {
    kind: 'http',
    url,
    method: method.toUpperCase(),
    headers: hasUa ? headers : { ...headers, 'User-Agent': DEFAULT_USER_AGENT },
    body: method.toUpperCase() === 'GET' || method.toUpperCase() === 'HEAD' ? undefined : body,
    timeoutMs: ATTEMPT_MS,
  };
  return runNetChild<ChildResponse>(ctx, req, CALL_CAP_MS, ctx?.outbound) ?? { error: 'request did not complete (time budget exhausted or client failure)', ms: 0 };
}

/** The structured response of http_get / http_post. */
function structured(r: ChildResponse): Record<string, unknown> {
  if (r.error !== undefined) {
    return { status_code: 0, error: r.error, message: 'error', response_headers: {}, response_body: '', content_length: 0, response_time_ms: r.ms ?? 0 };
  }
  return {
    status_code: r.status ?? 0,
    error: null,
    message: 'success',
    response_headers: r.headers ?? {},
    response_body: r.body ?? '',
    content_length: r.bytes ?? 0,
    response_time_ms: r.ms ?? 0,
  };
}

/** Host of a URL, `host:port` or `host/path` (reference extractHostname). */
export function hostOf(input: string): string {
  const text = input.trim();
  if (text.includes('://')) {
    try {
      const h = new URL(text).hostname;
      if (h) return h.replace(/^\[|\]$/g, '');
    } catch {
      // fall through to the plain forms
    }
  }
  if (text.includes(':') && !text.includes('/')) {
    const head = text.split(':')[0]!;
    if (head) return head;
  }
  const slash = text.indexOf('/');
  return slash > 0 ? text.slice(0, slash) : text;
}

/** The http functions, by snake_case name (aliases come from the catalogue). */
export const httpFunctions: Record<string, FnImpl> = {
  http_request: (ctx, u, m, h, b) => {
    const url = argStr(u);
    if (url === null) return { statusCode: 0, body: '', headers: {}, error: 'empty URL' };
    const method = argStr(m) ?? 'GET';
    const r = fetchSync(ctx, url, method, headerMap(h), bodyOf(b));
    if (r.error !== undefined) return { statusCode: 0, body: '', headers: {}, error: r.error };
    return { statusCode: r.status ?? 0, body: r.body ?? '', headers: r.headers ?? {}, error: '' };
  },
  http_get: (ctx, u) => {
    const url = argStr(u);
    if (url === null) return structured({ error: 'empty URL', ms: 0 });
    return structured(fetchSync(ctx, url, 'GET', {}));
  },
  http_post: (ctx, u, b) => {
    const url = argStr(u);
    if (url === null) return structured({ error: 'empty URL', ms: 0 });
    const body = bodyOf(b);
    return structured(fetchSync(ctx, url, 'POST', body === undefined ? {} : { 'Content-Type': 'application/json' }, body));
  },
  get_ip: (ctx, d) => {
    const input = argStr(d);
    if (input === null) return '';
    const host = hostOf(input);
    if (!host) return '';
    return runNetChild<{ ip: string }>(ctx, { kind: 'dns', host }, 15_000)?.ip ?? '';
  },
};
