import { request } from 'undici';
import type { Step } from '../../workflow/types.js';
import { render } from '../../workflow/template.js';
import { StepFailure, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { assertNoLoopPlaceholder } from './bash.js';

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_BODY = 10 * 1024 * 1024;

/** Export-safe variable prefix: `check-api` → `check_api`. */
export function exportPrefix(stepName: string): string {
  return stepName.replace(/[^A-Za-z0-9_]/g, '_');
}

/**
 * http step (undici): up to 3 attempts with backoff on network errors and 5xx; any status below 500
 * is success. Exports `<step>_status_code`, `<step>_body`, `<step>_headers` (spec) and
 * `<step>_http_resp` (reference shape).
 */
export async function executeHttp(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  if (!step.url) throw new StepFailure('http step must have url');
  // Same rule as commands: a [[var]] left outside a foreach would go out on the network literally.
  for (const [field, text] of [['url', step.url], ['request_body', step.request_body ?? ''], ...Object.entries(step.headers ?? {}).map(([k, v]) => [`header ${k}`, String(v)])]) {
    assertNoLoopPlaceholder(text!, field!, 'the request was not sent');
  }
  const url = render(step.url, scope.vars);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StepFailure(`invalid url: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new StepFailure(`unsupported url scheme: ${parsed.protocol}`);
  const method = render(step.method ?? 'GET', scope.vars).toUpperCase();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(step.headers ?? {})) headers[k] = render(String(v), scope.vars);
  const body = step.request_body !== undefined ? render(step.request_body, scope.vars) : undefined;
  const timeoutMs = ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const commandText = `${method} ${url}`;

  let lastError = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt > 0) await sleep(200 * 2 ** (attempt - 1), scope.exec.signal);
    if (scope.exec.signal.aborted) throw new StepFailure('request cancelled', '', [commandText]);
    const started = Date.now();
    try {
      const res = await request(url, {
        method: method as never,
        headers,
        body: body !== undefined && method !== 'GET' && method !== 'HEAD' ? body : undefined,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.any([scope.exec.signal, AbortSignal.timeout(timeoutMs)]),
      });
      const text = await readLimited(res.body, MAX_BODY);
      const elapsed = Date.now() - started;
      const respHeaders: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) respHeaders[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
      scope.exec.output.append(ctx.logFile, 1, `${commandText} -> ${res.statusCode} (${elapsed}ms, ${text.length} bytes)\n${text}\n`, ctx.part);
      if (res.statusCode >= 500 && attempt < 2) {
        lastError = `HTTP ${res.statusCode}`;
        continue;
      }
      const prefix = exportPrefix(step.name);
      const failed = res.statusCode >= 500;
      const resp = {
        status_code: res.statusCode,
        error: failed ? `HTTP ${res.statusCode}` : null,
        message: failed ? 'error' : 'success',
        response_headers: respHeaders,
        response_body: text,
        content_length: Number(respHeaders['content-length'] ?? Buffer.byteLength(text)),
        response_time_ms: elapsed,
      };
      const autoExports = {
        [`${prefix}_status_code`]: res.statusCode,
        [`${prefix}_body`]: text,
        [`${prefix}_headers`]: respHeaders,
        [`${prefix}_http_resp`]: resp,
      };
      if (failed) throw new StepFailure(`HTTP ${res.statusCode} after 3 attempts`, text, [commandText]);
      return { output: text, lines: text ? text.split('\n').length : 0, autoExports, commands: [commandText] };
    } catch (err) {
      if (err instanceof StepFailure) throw err;
      lastError = (err as Error).name === 'TimeoutError' || /timeout/i.test((err as Error).message) ? `request timed out after ${timeoutMs}ms` : (err as Error).message;
      scope.exec.output.append(ctx.logFile, 2, `${commandText} -> error: ${lastError}\n`, ctx.part);
      if (scope.exec.signal.aborted) break;
    }
  }
  throw new StepFailure(`http request failed: ${lastError}`, '', [commandText]);
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) {
      chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}
