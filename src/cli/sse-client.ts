/**
 * Reading a daemon's Server-Sent Events from the CLI (`osm run --server`, `osm logs --server`): the
 * credential goes in the `x-osm-api-key` header (never in the URL), and a dropped connection is
 * resumed with `Last-Event-ID`, so nothing is lost or shown twice.
 */
import { request } from 'undici';
import { errors } from '../errors.js';

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/** Parses one event block (`field: value` lines); undefined for a comment-only block. */
export function parseSseBlock(block: string): SseMessage | undefined {
  const msg: SseMessage = { event: 'message', data: '' };
  const data: string[] = [];
  let any = false;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i === -1 ? line : line.slice(0, i);
    const value = i === -1 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'id') msg.id = value;
    else if (field === 'event') msg.event = value;
    else if (field === 'data') data.push(value);
    else continue;
    any = true;
  }
  msg.data = data.join('\n');
  return any ? msg : undefined;
}

/** One connection: the events of `path` until the server closes the stream. */
export async function* readSse(base: string, path: string, apiKey: string | undefined, opts: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<SseMessage> {
  const root = base.endsWith('/') ? base : `${base}/`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(new URL(path.replace(/^\//, ''), root), {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...(apiKey ? { 'x-osm-api-key': apiKey } : {}), ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}) },
      signal: opts.signal,
    });
  } catch (err) {
    throw errors.unavailable(`cannot reach ${base}: ${(err as Error).message}`);
  }
  if (res.statusCode >= 400) {
    const text = await res.body.text();
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      /* not JSON */
    }
    throw new Error(`server ${res.statusCode}: ${message}`);
  }
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk as Buffer, { stream: true }).replace(/\r\n?/g, '\n');
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const msg = parseSseBlock(buf.slice(0, end));
      buf = buf.slice(end + 2);
      if (msg) yield msg;
    }
  }
}

/**
 * A run's log stream followed to its `end` event, reconnecting (with the last id seen) when the
 * connection drops; gives up after `retries` failed reconnects in a row.
 */
export async function* followSse(base: string, path: string, apiKey: string | undefined, opts: { retries?: number; signal?: AbortSignal } = {}): AsyncGenerator<SseMessage> {
  let last: string | undefined;
  let failures = 0;
  for (;;) {
    try {
      for await (const msg of readSse(base, path, apiKey, { lastEventId: last, signal: opts.signal })) {
        failures = 0;
        if (msg.id !== undefined) last = msg.id;
        yield msg;
        if (msg.event === 'end') return;
      }
    } catch (err) {
      // Refusals (401, 403, 404 …) are final; a network failure is retried.
      if (/^server 4\d\d/.test((err as Error).message) || opts.signal?.aborted) throw err;
      if (++failures > (opts.retries ?? 10)) throw err;
    }
    if (opts.signal?.aborted) return;
    await new Promise((r) => setTimeout(r, Math.min(5000, 500 * 2 ** Math.min(failures, 4))));
  }
}
