/** POST /osm/api/agent/chat/completions against the test ACP agent (reference server-api §1.15). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { ROOT } from '../helpers/cli.js';

const STUB_AGENT = join(ROOT, 'test/fixtures/acp/stub-agent.mjs');
let t: TestServer;

beforeEach(async () => {
  t = await makeTestServer();
  const doc = parseDocument(fs.readFileSync(t.app.manager.path, 'utf8'));
  doc.setIn(['acp', 'agents'], { stub: { command: process.execPath, args: [STUB_AGENT] } });
  doc.setIn(['acp', 'default_agent'], 'stub');
  t.app.manager.replaceText(doc.toString());
});
afterEach(async () => {
  await t.close();
});

const chat = (payload: unknown, headers = t.auth) => t.server.inject({ method: 'POST', url: '/osm/api/agent/chat/completions', headers, payload: payload as object });

describe('POST /osm/api/agent/chat/completions', () => {
  it('answers in the chat-completion shape, with role: content lines as the prompt', async () => {
    const res = await chat({ model: 'stub', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: '' }, { role: 'user', content: 'hi' }] });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^agent-\d+$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'stub',
      choices: [{ index: 0, message: { role: 'assistant', content: expect.stringMatching(/^echo: system: be brief\nuser: hi \(cwd=.*osm-agent-/) }, finish_reason: 'stop' }],
    });
  });

  it('an unknown model uses the default agent', async () => {
    const res = await chat({ model: 'no-such-agent', messages: [{ role: 'user', content: 'x' }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().model).toBe('stub');
  });

  it('rejects bad bodies with the reference messages', async () => {
    const cases: [unknown, string][] = [
      [{}, 'Messages field is required and must not be empty'],
      [{ messages: [] }, 'Messages field is required and must not be empty'],
      [{ messages: [{ role: 'user', content: '  ' }] }, 'Messages must contain at least one non-empty content'],
      [{ messages: 'hi' }, 'Invalid request body: messages must be an array'],
      [{ messages: [{ role: 'user', content: 'x' }], model: 3 }, 'Invalid request body: model must be a string'],
      [[1], 'Invalid request body: expected a JSON object'],
    ];
    for (const [payload, message] of cases) {
      const res = await chat(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ error: true, message });
    }
  });

  it('runs one agent at a time (409) and reports agent failures as 500', async () => {
    const marker = join(t.base, 'agent-holds');
    const first = chat({ messages: [{ role: 'user', content: `hold ${marker}` }] }).then((r) => r);
    // the first request holds the slot while its agent runs: the agent says so by writing the marker
    while (!fs.existsSync(marker)) await new Promise((r) => setTimeout(r, 20));
    const second = await chat({ messages: [{ role: 'user', content: 'hi' }] });
    fs.rmSync(marker);
    const failed = await first;
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ error: true, message: 'An agent is already running. Only one agent subprocess is allowed at a time.' });
    expect(failed.statusCode).toBe(500);
    expect(failed.json().message).toMatch(/^Agent execution failed: ACP agent exited \(code 3\) before answering/);
    // the slot is free again
    expect((await chat({ messages: [{ role: 'user', content: 'again' }] })).statusCode).toBe(200);
  });

  it('needs the admin role: a coding agent can run commands', async () => {
    expect((await chat({ messages: [{ role: 'user', content: 'x' }] }, {})).statusCode).toBe(401);
    const add = await t.server.inject({ method: 'POST', url: '/osm/api/users', headers: t.auth, payload: { username: 'op', password: 'a-long-enough-password', role: 'operator' } });
    expect(add.statusCode).toBe(201);
    const login = await t.server.inject({ method: 'POST', url: '/osm/api/login', payload: { username: 'op', password: 'a-long-enough-password' } });
    const res = await chat({ messages: [{ role: 'user', content: 'x' }] }, { authorization: `Bearer ${login.json().token}` });
    expect(res.statusCode).toBe(403);
  });
});
