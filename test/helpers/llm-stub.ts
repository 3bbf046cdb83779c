/**
 * An OpenAI-compatible chat-completions stub on loopback for agent and llm tests: each request is
 * recorded and answered by the test's `reply` function (a message, an HTTP error, or a delay).
 * Never a real provider.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubReply {
  /** HTTP status (default 200). */
  status?: number;
  /** The assistant message (content and/or tool_calls) for a 200. */
  message?: { content?: string | null; tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[] };
  /** Raw body instead of a generated completion. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number };
}

export interface LlmStub {
  url: string;
  requests: { messages: any[]; tools?: any[]; model?: string; [k: string]: unknown }[];
  reply: (body: any, n: number) => StubReply;
  close(): Promise<void>;
}

/** A tool call as the model writes it. */
export function toolCall(id: string, name: string, args: unknown): { id: string; type: string; function: { name: string; arguments: string } } {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

/** Starts a stub; set `stub.reply` per test. */
export async function startLlmStub(): Promise<LlmStub> {
  const timers = new Set<NodeJS.Timeout>();
  const stub: LlmStub = {
    url: '',
    requests: [],
    reply: () => ({ message: { content: 'ok' } }),
    close: () => new Promise<void>((r) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      const body = JSON.parse(data || '{}');
      stub.requests.push(body);
      const r = stub.reply(body, stub.requests.length);
      const send = () => {
        if (res.destroyed) return;
        res.setHeader('content-type', 'application/json');
        if (r.status && r.status >= 400) return void res.writeHead(r.status).end(JSON.stringify(r.body ?? { error: { message: `stub error ${r.status}` } }));
        if (r.body !== undefined) return void res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
        const usage = r.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
        const message = { role: 'assistant', content: r.message?.content ?? null, ...(r.message?.tool_calls ? { tool_calls: r.message.tool_calls } : {}) };
        res.end(JSON.stringify({
          id: `chatcmpl-${stub.requests.length}`,
          object: 'chat.completion',
          created: 1,
          model: body.model ?? 'stub-model',
          choices: [{ index: 0, message, finish_reason: r.message?.tool_calls ? 'tool_calls' : 'stop' }],
          usage: { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens },
        }));
      };
      if (r.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, r.delayMs);
        timers.add(t);
      } else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  return stub;
}
