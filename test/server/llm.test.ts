import http from 'node:http';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let fake: http.Server;
let fakeUrl: string;
let received: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
let mode: 'ok' | 'tools' | 'error' | 'garbage';

beforeEach(async () => {
  received = [];
  mode = 'ok';
  fake = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      const body = JSON.parse(data || '{}');
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (mode === 'error') return void res.writeHead(429).end(JSON.stringify({ error: { message: 'rate limited', type: 'rate_limit' } }));
      if (mode === 'garbage') return void res.writeHead(200).end('<html>not json</html>');
      if (req.url?.endsWith('/embeddings')) {
        return void res.end(JSON.stringify({ model: body.model, data: (Array.isArray(body.input) ? body.input : []).map((_: string, i: number) => ({ index: i, embedding: [i, 0.5] })).reverse(), usage: { prompt_tokens: 4, total_tokens: 4 } }));
      }
      const message = mode === 'tools'
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'dns_lookup', arguments: '{"domain":"example.com"}' } }] }
        : { role: 'assistant', content: 'Hello!' };
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: mode === 'tools' ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }));
    });
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1/chat/completions`;
  t = await makeTestServer();
  setProviders([{ provider: 'fake', base_url: fakeUrl, auth_token: 'sk-test-token', model: 'fake-model' }]);
});
afterEach(async () => {
  await t.close();
  await new Promise<void>((r) => fake.close(() => r()));
});

/** Configures llm_config.llm_providers through the settings manager (validated, reloaded). */
function setProviders(providers: Record<string, string>[]): void {
  const doc = parseDocument(fs.readFileSync(t.app.manager.path, 'utf8'));
  doc.setIn(['llm_config', 'llm_providers'], providers);
  t.app.manager.replaceText(doc.toString());
}

const chat = (payload: unknown, url = '/osm/api/llm/v1/chat/completions') => t.server.inject({ method: 'POST', url, headers: t.auth, payload: payload as object });
const hello = { messages: [{ role: 'user', content: 'Hi' }] };

describe('auth', () => {
  it('needs credentials', async () => {
    for (const url of ['/osm/api/llm/v1/chat/completions', '/osm/api/llm/chat/completions', '/osm/api/llm/v1/embeddings', '/osm/api/llm/embeddings']) {
      expect((await t.server.inject({ method: 'POST', url, payload: hello })).statusCode, url).toBe(401);
    }
    expect(received).toHaveLength(0);
  });
});

describe('POST /llm/v1/chat/completions', () => {
  it('forwards to the provider and answers the flattened shape', async () => {
    for (const url of ['/osm/api/llm/v1/chat/completions', '/osm/api/llm/chat/completions']) {
      const res = await chat({ ...hello, temperature: 0.2, max_tokens: 50 }, url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: 'chatcmpl-1', model: 'fake-model', content: 'Hello!', finish_reason: 'stop', usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
    }
    const sent = received[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test-token');
    expect(sent.body).toMatchObject({ model: 'fake-model', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, max_tokens: 50 });
  });

  it('returns tool calls when the model calls tools', async () => {
    mode = 'tools';
    const res = await chat({ ...hello, model: 'other', tools: [{ type: 'function', function: { name: 'dns_lookup' } }], tool_choice: 'auto' });
    expect(res.json()).toEqual({
      id: 'chatcmpl-1', model: 'other', content: null, finish_reason: 'tool_calls',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'dns_lookup', arguments: '{"domain":"example.com"}' } }],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
    expect(received[0]!.body.tool_choice).toBe('auto');
  });

  it('validates the request', async () => {
    const cases: [unknown, string | RegExp][] = [
      [{}, 'messages is required'],
      [{ messages: [] }, 'messages must not be empty'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role: role must be one of system, user, assistant, tool'],
      [{ ...hello, temperature: 2.5 }, 'temperature must be between 0 and 2'],
      [{ ...hello, temperature: -1 }, 'temperature must be between 0 and 2'],
      [{ ...hello, temperature: 'hot' }, 'temperature must be between 0 and 2'],
      [{ ...hello, stream: true }, 'Streaming is not supported'],
      [{ ...hello, max_tokens: 0 }, 'max_tokens must be a positive integer'],
      [{ ...hello, max_tokens: 1.5 }, 'max_tokens must be a positive integer'],
      [{ ...hello, n: -2 }, 'n must be a positive integer'],
      [{ ...hello, top_p: 1.5 }, 'top_p must be between 0 and 1'],
      [{ messages: [], temperature: 3 }, /messages must not be empty; temperature must be between 0 and 2/],
    ];
    for (const [payload, message] of cases) {
      const res = await chat(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      if (typeof message === 'string') expect(res.json()).toEqual({ error: true, message });
      else expect(res.json().message).toMatch(message);
    }
    expect((await t.server.inject({ method: 'POST', url: '/osm/api/llm/v1/chat/completions', headers: { ...t.auth, 'content-type': 'application/json' }, payload: '[1' })).statusCode).toBe(400);
    expect(received).toHaveLength(0);
  });

  it('keeps the provider error message (502) and reports a missing provider (500)', async () => {
    mode = 'error';
    const res = await chat(hello);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: true, message: 'LLM request failed: HTTP 429: rate limited' });
    expect(received).toHaveLength(1); // single attempt, no retry
    mode = 'garbage';
    const garbage = await chat(hello);
    expect(garbage.statusCode).toBe(502);
    expect(garbage.json().message).toMatch(/failed to parse response/);
    setProviders([]);
    const none = await chat(hello);
    expect(none.statusCode).toBe(500);
    expect(none.json()).toEqual({ error: true, message: 'No LLM providers configured' });
  });
});

describe('POST /llm/v1/embeddings', () => {
  it('forwards to the derived /embeddings URL and keeps the input order', async () => {
    for (const url of ['/osm/api/llm/v1/embeddings', '/osm/api/llm/embeddings']) {
      const res = await t.server.inject({ method: 'POST', url, headers: t.auth, payload: { input: ['a', 'b'], model: 'emb' } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ model: 'emb', embeddings: [[0, 0.5], [1, 0.5]], usage: { prompt_tokens: 4, total_tokens: 4 } });
    }
    expect(received[0]!.path).toBe('/v1/embeddings');
    const single = await t.server.inject({ method: 'POST', url: '/osm/api/llm/v1/embeddings', headers: t.auth, payload: { input: 'one' } });
    expect(single.json().embeddings).toEqual([[0, 0.5]]);
    expect(received[2]!.body).toEqual({ model: 'fake-model', input: ['one'] });
  });

  it('validates input', async () => {
    for (const [payload, message] of [[{}, 'input is required'], [{ input: [] }, 'input is required'], [{ input: [1, 2] }, /input must be an array of strings/], [{ input: 5 }, 'input must be an array of strings']] as const) {
      const res = await t.server.inject({ method: 'POST', url: '/osm/api/llm/v1/embeddings', headers: t.auth, payload });
      expect(res.statusCode).toBe(400);
      if (typeof message === 'string') expect(res.json().message).toBe(message);
      else expect(res.json().message).toMatch(message);
    }
    expect(received).toHaveLength(0);
  });
});
