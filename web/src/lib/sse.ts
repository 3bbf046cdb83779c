/**
 * Server-Sent Events over fetch (same origin, the session cookie): unlike EventSource it sees the
 * status of the answer, so a server without the stream (404) is told apart from a dropped
 * connection, and `Last-Event-ID` resumes after a reconnect.
 */
import { signalUnauthorized } from './api.js';
import { sseParser, type SseMessage } from './sse-parse.js';

export type { SseMessage };

export interface SseHandle {
  close: () => void;
}

export interface SseOptions {
  onMessage: (m: SseMessage) => void;
  /** The stream does not exist on this server (404/405/406/501): fall back to polling. */
  onUnsupported?: () => void;
  /** Connected (again). */
  onOpen?: () => void;
  /** The connection dropped; a reconnect follows. */
  onDrop?: () => void;
  /** The server ended the stream on purpose (an `end` event was seen): no reconnect. */
  endEvent?: string;
}

/** Opens a stream and keeps it open (reconnecting with backoff) until closed or ended. */
export function openSse(url: string, opts: SseOptions): SseHandle {
  let closed = false;
  let lastId: string | undefined;
  let ctl: AbortController | undefined;
  let delay = 500;
  let ended = false;

  const run = async () => {
    while (!closed && !ended) {
      ctl = new AbortController();
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (lastId !== undefined) headers['last-event-id'] = lastId;
        const res = await fetch(url, { headers, credentials: 'same-origin', signal: ctl.signal, cache: 'no-store' });
        if ([404, 405, 406, 501].includes(res.status) || (res.ok && !String(res.headers.get('content-type')).includes('text/event-stream'))) {
          opts.onUnsupported?.();
          return;
        }
        if (res.status === 401) {
          signalUnauthorized();
          return;
        }
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        delay = 500;
        opts.onOpen?.();
        const parse = sseParser((m) => {
          if (m.id !== undefined) lastId = m.id;
          if (opts.endEvent && m.event === opts.endEvent) ended = true;
          opts.onMessage(m);
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parse(value);
        }
      } catch (err) {
        if (closed) return;
        void err;
      }
      if (closed || ended) return;
      opts.onDrop?.();
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  };
  void run();
  return {
    close: () => {
      closed = true;
      ctl?.abort();
    },
  };
}
