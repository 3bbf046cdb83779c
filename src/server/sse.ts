/**
 * Long-lived streamed responses (Server-Sent Events, and the text/JSON-lines log downloads): written
 * straight to the socket (no compression or other onSend transformation may buffer them), with
 * backpressure (a write that fills the socket waits for it to drain, so a slow client only slows
 * its own stream), heartbeat comments every 15 s so proxies keep the connection, the caller's
 * credentials checked again at each heartbeat (a logout, a revoked token or a role change ends the
 * stream), and every open stream ended when the daemon shuts down.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../services/context.js';
import { roleAtLeast } from '../auth/roles.js';
import { authenticate, routeAccess } from './plugins/auth.js';

/** How often an idle SSE stream sends a heartbeat comment (and re-checks credentials). */
export const STREAM_TIMING = { heartbeatMs: 15_000 };

const openStreams = new WeakMap<FastifyInstance, Set<StreamResponse>>();

/** Number of streams open on a server (tests: connects and disconnects leave none). */
export function openStreamCount(server: FastifyInstance): number {
  return openStreams.get(server)?.size ?? 0;
}

function streamsOf(server: FastifyInstance): Set<StreamResponse> {
  let set = openStreams.get(server);
  if (!set) {
    set = new Set();
    openStreams.set(server, set);
  }
  return set;
}

/** Ends every open stream before the server closes (registered once per server). */
export function registerStreamShutdown(server: FastifyInstance): void {
  server.addHook('preClose', async () => {
    for (const s of [...(openStreams.get(server) ?? [])]) s.end();
  });
}

export interface StreamOptions {
  contentType: string;
  sse: boolean;
  noAuth: boolean;
}

/** One streamed response. `signal` aborts when the client goes away or the stream is ended. */
export class StreamResponse {
  private readonly controller = new AbortController();
  private heartbeat?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly server: FastifyInstance,
    private readonly app: AppContext,
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly opts: StreamOptions,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Sends the headers and takes the socket over from fastify. */
  start(): void {
    this.reply.hijack();
    const raw = this.reply.raw;
    const headers: Record<string, string | number | string[]> = {};
    // Headers set by hooks so far (CORS …) still apply.
    for (const [k, v] of Object.entries(this.reply.getHeaders())) if (v !== undefined) headers[k] = v as string | number | string[];
    raw.writeHead(200, {
      ...headers,
      'content-type': this.opts.contentType,
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      ...(this.opts.sse ? { connection: 'keep-alive' } : {}),
    });
    raw.flushHeaders?.();
    const gone = () => this.end();
    raw.on('close', gone);
    raw.on('error', gone);
    this.req.raw.on('close', () => {
      if (this.req.raw.destroyed || raw.destroyed) this.end();
    });
    streamsOf(this.server).add(this);
    if (this.opts.sse) {
      this.heartbeat = setInterval(() => void this.beat(), STREAM_TIMING.heartbeatMs);
      this.heartbeat.unref();
      // Ask the client to wait a few seconds before reconnecting after a drop.
      raw.write('retry: 3000\n\n');
    }
  }

  /** Writes a chunk; waits for the socket to drain when it is full. False once the stream is closed. */
  async write(text: string): Promise<boolean> {
    if (this.closed) return false;
    const raw = this.reply.raw;
    if (raw.write(text)) return true;
    await new Promise<void>((resolve) => {
      const done = () => {
        raw.off('drain', done);
        this.controller.signal.removeEventListener('abort', done);
        resolve();
      };
      raw.on('drain', done);
      this.controller.signal.addEventListener('abort', done, { once: true });
    });
    return !this.closed;
  }

  /** One SSE event (`data` as JSON on one line). */
  event(event: string, data: unknown, id?: number): Promise<boolean> {
    return this.write(sseText(event, data, id));
  }

  /** Ends the response (idempotent) and releases everything it holds. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    openStreams.get(this.server)?.delete(this);
    this.controller.abort();
    const raw = this.reply.raw;
    if (!raw.destroyed && !raw.writableEnded) raw.end();
  }

  /** A heartbeat comment, after checking the caller may still read this stream. */
  private async beat(): Promise<void> {
    if (this.closed) return;
    if (!this.opts.noAuth) {
      try {
        const principal = await authenticate(this.app, this.req);
        const need = routeAccess(this.req);
        if (need !== 'public' && !roleAtLeast(principal.role, need)) throw new Error('role too low');
      } catch {
        await this.write('event: error\ndata: {"message":"credentials are no longer valid"}\n\n');
        this.end();
        return;
      }
    }
    await this.write(`: heartbeat ${new Date().toISOString()}\n\n`);
  }
}

/** The text of one SSE event: optional `id:`, `event:`, and `data` as JSON on one line. */
export function sseText(event: string, data: unknown, id?: number): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** True when the client asked for Server-Sent Events. */
export function wantsEventStream(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '');
  return accept.split(',').some((part) => part.trim().toLowerCase().startsWith('text/event-stream'));
}

/** The `Last-Event-ID` header as a sequence number (undefined when absent or not a number). */
export function lastEventId(req: FastifyRequest): number | undefined {
  const raw = req.headers['last-event-id'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || !/^\d{1,15}$/.test(v.trim())) return undefined;
  return Number(v.trim());
}
