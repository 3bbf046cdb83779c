/** The agent loop against an OpenAI-compatible stub on loopback (never a real provider). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentLoopError, callCost, runAgentLoop, type AgentTool } from '../../../src/llm/agent-loop.js';
import { startLlmStub, toolCall, type LlmStub } from '../../helpers/llm-stub.js';

let stub: LlmStub;
beforeAll(async () => {
  stub = await startLlmStub();
});
afterAll(() => stub.close());
beforeEach(() => {
  stub.requests.length = 0;
});

const calls: Record<string, unknown>[] = [];
const lookup: AgentTool = {
  name: 'lookup',
  description: 'look a host up',
  parameters: { type: 'object', properties: { host: { type: 'string' } }, required: ['host'] },
  async run(args) {
    calls.push(args);
    if (args.host === 'boom') throw new Error('lookup exploded');
    return `${args.host} has address 192.0.2.1`;
  },
};

function opts(over: Partial<Parameters<typeof runAgentLoop>[0]> = {}): Parameters<typeof runAgentLoop>[0] {
  return {
    llm: { llm_providers: [{ provider: 'stub', base_url: stub.url, model: 'stub-model' }] },
    goals: ['Find the address of example.com'],
    tools: [lookup],
    maxIterations: 5,
    parallelToolCalls: true,
    signal: new AbortController().signal,
    ...over,
  };
}

describe('runAgentLoop', () => {
  it('runs tool calls, feeds their results back, and returns the answer with usage and cost', async () => {
    stub.reply = (_b, n) =>
      n === 1
        ? { message: { content: null, tool_calls: [toolCall('c1', 'lookup', { host: 'example.com' })] }, usage: { prompt_tokens: 100, completion_tokens: 20 } }
        : { message: { content: 'example.com is 192.0.2.1' }, usage: { prompt_tokens: 150, completion_tokens: 10 } };
    const r = await runAgentLoop(opts({ systemPrompt: 'be brief', costs: { 'stub-model': { prompt_per_million: 2, completion_per_million: 10 } } }));
    expect(r.content).toBe('example.com is 192.0.2.1');
    expect(r.iterations).toBe(2);
    expect(r.usage).toEqual({ prompt_tokens: 250, completion_tokens: 30, total_tokens: 280 });
    expect(r.cost).toBeCloseTo((250 * 2 + 30 * 10) / 1e6, 12);
    expect(r.toolCalls).toEqual([{ goal: 0, iteration: 1, tool: 'lookup', arguments: { host: 'example.com' }, result: 'example.com has address 192.0.2.1', error: false }]);
    // the second request carries the assistant's tool call and the tool's answer
    const second = stub.requests[1]!;
    expect(second.messages[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'example.com has address 192.0.2.1' });
    expect(second.tools![0].function.name).toBe('lookup');
    expect(second.parallel_tool_calls).toBe(true);
  });

  it('works goal after goal in one conversation', async () => {
    stub.reply = (b) => ({ message: { content: `answer to: ${b.messages.at(-1).content}` } });
    const r = await runAgentLoop(opts({ goals: ['first', 'second'] }));
    expect(r.goalResults).toEqual(['answer to: first', 'answer to: second']);
    expect(stub.requests[1]!.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('tells the model about unknown tools, bad arguments and failing tools, and goes on', async () => {
    stub.reply = (_b, n) =>
      n === 1
        ? { message: { tool_calls: [toolCall('a', 'nope', {}), toolCall('b', 'lookup', '{not json'), toolCall('c', 'lookup', { host: 'boom' })] } }
        : { message: { content: 'gave up' } };
    const r = await runAgentLoop(opts());
    expect(r.content).toBe('gave up');
    const tools = stub.requests[1]!.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(tools.map((m: { content: string }) => m.content)).toEqual([
      "error: unknown tool 'nope' (available: lookup)",
      expect.stringMatching(/^error: tool arguments are not valid JSON/),
      'error: lookup exploded',
    ]);
    expect(r.toolCalls.every((c) => c.error)).toBe(true);
  });

  it('stops at max_iterations with what it has', async () => {
    stub.reply = () => ({ message: { tool_calls: [toolCall('x', 'lookup', { host: 'again' })] } });
    const err = await runAgentLoop(opts({ maxIterations: 3 })).catch((e) => e);
    expect(err).toBeInstanceOf(AgentLoopError);
    expect(err.message).toBe('agent reached max_iterations (3) without a final answer');
    expect(stub.requests).toHaveLength(3);
    expect(err.partial.iterations).toBe(3);
    expect(err.partial.toolCalls).toHaveLength(3);
  });

  it('fails on a provider error, naming it', async () => {
    stub.reply = () => ({ status: 500, body: { error: { message: 'model overloaded' } } });
    const err = await runAgentLoop(opts()).catch((e) => e);
    expect(err).toBeInstanceOf(AgentLoopError);
    expect(err.message).toContain('HTTP 500: model overloaded');
  });

  it('ends at the timeout of its signal', async () => {
    stub.reply = () => ({ delayMs: 30_000, message: { content: 'late' } });
    const err = await runAgentLoop(opts({ signal: AbortSignal.timeout(300) })).catch((e) => e);
    expect(err).toBeInstanceOf(AgentLoopError);
    expect(err.message).toBe('agent step timed out');
  });

  it('passes tool results to the model as data, unchanged and capped', async () => {
    const hostile: AgentTool = { ...lookup, name: 'page', async run() { return '{{Target}} $(id) `id` ' + 'x'.repeat(100); } };
    stub.reply = (_b, n) => (n === 1 ? { message: { tool_calls: [toolCall('p', 'page', {})] } } : { message: { content: 'done' } });
    await runAgentLoop(opts({ tools: [hostile], toolResultLimit: 40 }));
    const tool = stub.requests[1]!.messages.at(-1);
    expect(tool.content.startsWith('{{Target}} $(id) `id` xxxx')).toBe(true);
    expect(tool.content).toContain('[tool result truncated: 82 more characters]');
  });

  it('prices unknown models at 0', () => {
    expect(callCost({}, 'mystery', { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 })).toBe(0);
  });
});
