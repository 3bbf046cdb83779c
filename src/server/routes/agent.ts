/**
 * POST /osm/api/agent/chat/completions (reference server-api §1.15): the messages become one
 * prompt for an Agent Client Protocol agent (`model` names it; unknown names use the default
 * agent), answered in the OpenAI chat-completion shape. One agent at a time per daemon (409
 * otherwise), 10 minutes at most. The agent starts in a fresh empty folder, may read only there,
 * writes nothing through osm, and its permission requests are rejected — but a coding agent has
 * tools of its own, so the route needs the admin role (src/server/access.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors } from '../../errors.js';
import { resolveAcpAgent, type AcpSettings } from '../../llm/acp-agents.js';
import { AcpError, runAcpPrompt } from '../../llm/acp-client.js';
import { defineRoute } from '../route.js';
import type { RegisterRoutes } from '../app.js';

const TIMEOUT_MS = 10 * 60_000;
let running = false;

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  return '';
}

/** `role: content` lines of the non-empty messages (reference). */
export function agentPrompt(messages: ChatMessage[]): string {
  return messages
    .filter((m) => text(m.content).trim() !== '')
    .map((m) => `${typeof m.role === 'string' && m.role ? m.role : 'user'}: ${text(m.content)}`)
    .join('\n');
}

/** The agent chat route. */
export const registerAgentRoutes: RegisterRoutes = (server, deps) => {
  const { app } = deps;
  defineRoute(server, app, {
    method: 'POST', url: '/osm/api/agent/chat/completions', summary: 'Ask an ACP agent (OpenAI chat-completion shape)', tags: ['agent'], sideEffects: 'executes',
    bodyKind: 'json',
    responses: {
      200: { description: '{ id, object: "chat.completion", created, model, choices: [{ index, message: { role, content }, finish_reason }] }' },
      400: { description: 'Invalid request body / messages missing or empty' },
      409: { description: 'An agent is already running' },
      500: { description: 'Agent execution failed' },
    },
    handler: async ({ req }) => {
      const raw = req.body as { messages?: unknown; model?: unknown } | null;
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw errors.invalidBody('expected a JSON object');
      if (raw.model !== undefined && typeof raw.model !== 'string') throw errors.invalidBody('model must be a string');
      if (raw.messages !== undefined && !Array.isArray(raw.messages)) throw errors.invalidBody('messages must be an array');
      const messages = (raw.messages ?? []) as unknown[];
      if (messages.length === 0) throw errors.badRequest('Messages field is required and must not be empty');
      if (messages.some((m) => m === null || typeof m !== 'object' || Array.isArray(m))) throw errors.invalidBody('each message must be an object');
      const prompt = agentPrompt(messages as ChatMessage[]);
      if (prompt === '') throw errors.badRequest('Messages must contain at least one non-empty content');
      const settings = app.settings().settings as { acp?: AcpSettings };
      const found = resolveAcpAgent(settings.acp, raw.model as string | undefined) ?? resolveAcpAgent(settings.acp);
      if (!found) throw errors.agentFailed(`no ACP agent configured (default agent '${settings.acp?.default_agent ?? ''}' is unknown)`);
      if (running) throw errors.agentBusy();
      running = true;
      const cwd = mkdtempSync(join(tmpdir(), 'osm-agent-'));
      try {
        const res = await runAcpPrompt({
          command: found.agent.command,
          args: found.agent.args,
          env: { ...(process.env as Record<string, string>), ...found.agent.env },
          cwd,
          prompt,
          timeoutMs: TIMEOUT_MS,
        });
        const now = Date.now();
        return {
          id: `agent-${BigInt(now) * 1_000_000n}`,
          object: 'chat.completion',
          created: Math.floor(now / 1000),
          model: found.name,
          choices: [{ index: 0, message: { role: 'assistant', content: res.output }, finish_reason: 'stop' }],
        };
      } catch (err) {
        throw errors.agentFailed(err instanceof AcpError ? err.message : (err as Error).message);
      } finally {
        running = false;
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  });
};
