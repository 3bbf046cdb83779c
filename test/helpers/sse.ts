/** A minimal Server-Sent Events client for tests: read events one by one as they arrive. */

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** The next event (comments skipped); undefined when the stream ended. */
  next(): Promise<SseEvent | undefined>;
  /** Events until one matches (included); throws when the stream ends first. */
  until(match: (e: SseEvent) => boolean): Promise<SseEvent[]>;
  /** Every remaining event until the server closes the stream. */
  rest(): Promise<SseEvent[]>;
  /** Comments seen so far (heartbeats). */
  comments: string[];
  close(): void;
}

/** Opens `url` with `Accept: text/event-stream` and the given headers. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctrl.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let done = false;
  const comments: string[] = [];
  const parse = (block: string): SseEvent | undefined => {
    const e: SseEvent = { event: 'message', data: '' };
    const data: string[] = [];
    let any = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        comments.push(line.slice(1).trim());
        continue;
      }
      const i = line.indexOf(':');
      const field = i === -1 ? line : line.slice(0, i);
      const value = i === -1 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'id') e.id = value;
      else if (field === 'event') e.event = value;
      else if (field === 'data') data.push(value);
      else continue;
      any = true;
    }
    e.data = data.join('\n');
    return any && (data.length || e.id !== undefined) ? e : undefined;
  };
  // Read in the background so comments (heartbeats) are seen even while nobody waits for an event.
  const queue: SseEvent[] = [];
  let notify: (() => void) | undefined;
  void (async () => {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch {
        chunk = { done: true, value: undefined };
      }
      if (chunk.done) done = true;
      else buf += decoder.decode(chunk.value, { stream: true });
      for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
        const e = parse(buf.slice(0, end));
        buf = buf.slice(end + 2);
        if (e) queue.push(e);
      }
      notify?.();
      if (done) return;
    }
  })();
  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      const e = queue.shift();
      if (e) return e;
      if (done) return undefined;
      await new Promise<void>((resolve) => (notify = resolve));
      notify = undefined;
    }
  };
  return {
    status: res.status,
    headers: res.headers,
    next,
    comments,
    async until(match) {
      const seen: SseEvent[] = [];
      for (;;) {
        const e = await next();
        if (!e) throw new Error(`stream ended before the expected event; got ${JSON.stringify(seen)}`);
        seen.push(e);
        if (match(e)) return seen;
      }
    },
    async rest() {
      const seen: SseEvent[] = [];
      for (let e = await next(); e; e = await next()) seen.push(e);
      return seen;
    },
    close() {
      ctrl.abort();
    },
  };
}
