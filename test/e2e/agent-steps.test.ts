/**
 * agent and agent-acp steps through the built CLI: an LLM stub on loopback plays the model, a
 * small ACP agent (test/fixtures/acp/stub-agent.mjs, built on the SDK's agent side) plays the
 * external agent. Tool arguments come from the "model", so every one is hostile on purpose.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parseDocument } from 'yaml';
import { ROOT, runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startLlmStub, toolCall, type LlmStub } from '../helpers/llm-stub.js';

const STUB_AGENT = join(ROOT, 'test/fixtures/acp/stub-agent.mjs');
let tmp: ReturnType<typeof tempDir>;
let base: string;
let flows: string;
let stub: LlmStub;

function osm(args: string[]) {
  return runOsm(['-b', base, '-F', flows, ...args]);
}

function wf(name: string, steps: string): void {
  writeFileSync(join(flows, `${name}.yaml`), `kind: module\nname: ${name}\nsteps:\n${steps}`);
}

function db() {
  return new Database(join(base, 'database-osm.sqlite'), { readonly: true });
}

function lastRun(d: Database.Database, workflow: string) {
  return d.prepare('SELECT * FROM runs WHERE workflow_name = ? ORDER BY id DESC LIMIT 1').get(workflow) as Record<string, any>;
}

beforeAll(async () => {
  tmp = tempDir('osm-agent-');
  base = join(tmp.dir, 'base');
  flows = join(tmp.dir, 'flows');
  mkdirSync(flows);
  stub = await startLlmStub();
  // create the base folder, then point llm_config and acp at the stubs
  expect((await runOsm(['-b', base, 'config', 'list'])).code).toBe(0);
  const file = join(base, 'osm-settings.yaml');
  const doc = parseDocument(readFileSync(file, 'utf8'));
  doc.setIn(['llm_config', 'llm_providers'], [{ provider: 'stub', base_url: stub.url, auth_token: 'sk-stub', model: 'stub-model' }]);
  doc.setIn(['llm_config', 'max_retries'], 1);
  doc.setIn(['llm_config', 'model_costs'], { 'stub-model': { prompt_per_million: 3, completion_per_million: 15 } });
  doc.setIn(['acp', 'agents'], { stub: { command: process.execPath, args: [STUB_AGENT], env: { STUB_TOKEN: 'x' } } });
  writeFileSync(file, doc.toString());
}, 60_000);

afterAll(async () => {
  await stub.close();
  tmp.cleanup();
});

beforeEach(() => {
  stub.requests.length = 0;
});

describe('agent step (LLM tool-calling loop)', () => {
  it('runs osm functions and allowed commands as tools, confined, and records tokens, cost and a transcript', async () => {
    wf('agent-tools', `  - name: prepare
    type: bash
    command: |
      mkdir -p "{{Output}}" && printf 'open ports: 22, 443\\n' > "{{Output}}/notes.txt"
  - name: investigate
    type: agent
    query: "Summarise what is known about {{Target}}"
    system_prompt: You are a careful assistant.
    max_iterations: 4
    allowed_commands: [echo]
    agent_tools:
      - preset: read_file
      - preset: bash
    exports:
      summary: "{{agent_content}}"
`);
    stub.reply = (_b, n) =>
      n === 1
        ? {
            message: {
              tool_calls: [
                toolCall('t1', 'read_file', { path: 'notes.txt' }),
                toolCall('t2', 'run_command', { command: 'echo', args: ['hi; id', '$(id)', '`id`'] }),
                toolCall('t3', 'read_file', { path: '/etc/passwd' }),
                toolCall('t4', 'read_file', { path: '../../osm-settings.yaml' }),
                toolCall('t5', 'run_command', { command: 'sh', args: ['-c', 'id'] }),
                toolCall('t6', 'run_command', { command: '/bin/echo', args: ['x'] }),
              ],
            },
            usage: { prompt_tokens: 100, completion_tokens: 40 },
          }
        : { message: { content: 'Ports 22 and 443 are open.' }, usage: { prompt_tokens: 300, completion_tokens: 20 } };
    const r = await osm(['run', '-m', 'agent-tools', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('Ports 22 and 443 are open.');
    expect(stub.requests).toHaveLength(2);
    expect(stub.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: 'Summarise what is known about example.com' },
    ]);
    expect(stub.requests[0]!.tools!.map((t: any) => t.function.name)).toEqual(['read_file', 'run_command']);
    expect(stub.requests[0]!.tools![1].function.parameters.properties.command.enum).toEqual(['echo']);
    const results = Object.fromEntries(stub.requests[1]!.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content]));
    expect(results.t1).toBe('open ports: 22, 443\n');
    // argv, not a shell: the metacharacters arrive as text
    expect(JSON.parse(results.t2)).toEqual({ exit_code: 0, stdout: 'hi; id $(id) `id`\n', stderr: '' });
    expect(results.t3).toMatch(/^error: path '\/etc\/passwd' is outside the folders this agent may use/);
    expect(results.t4).toMatch(/^error: path '\.\.\/\.\.\/osm-settings\.yaml' is outside/);
    expect(results.t5).toBe('error: command must be one of: echo');
    expect(results.t6).toBe('error: command must be one of: echo');

    const d = db();
    try {
      const run = lastRun(d, 'agent-tools');
      expect(run.status).toBe('completed');
      const step = d.prepare("SELECT * FROM step_results WHERE run_id = ? AND step_name = 'investigate'").get(run.id) as Record<string, any>;
      const exports = JSON.parse(step.exports);
      expect(exports.agent_content).toBe('Ports 22 and 443 are open.');
      expect(exports.agent_iterations).toBe(2);
      expect(exports.agent_prompt_tokens).toBe(400);
      expect(exports.agent_completion_tokens).toBe(60);
      expect(exports.agent_total_tokens).toBe(460);
      expect(exports.agent_cost).toBeCloseTo((400 * 3 + 60 * 15) / 1e6, 12);
      expect(exports.summary).toBe('Ports 22 and 443 are open.');
      const art = d.prepare("SELECT * FROM artifacts WHERE run_id = ? AND name = 'agent-transcript-investigate'").get(run.id) as Record<string, any>;
      expect(art.content_type).toBe('json');
      const transcript = JSON.parse(readFileSync(art.artifact_path, 'utf8'));
      expect(transcript.status).toBe('completed');
      expect(transcript.tool_calls).toHaveLength(6);
      expect(transcript.messages.at(-1)).toEqual({ role: 'assistant', content: 'Ports 22 and 443 are open.' });
      expect(JSON.stringify(transcript)).not.toContain('sk-stub');
    } finally {
      d.close();
    }
  });

  it('custom tools get the model arguments as data (`args`), never as script text', async () => {
    wf('agent-custom', `  - name: ask
    type: agent
    query: go
    max_iterations: 3
    agent_tools:
      - name: shout
        description: upper-case a word
        parameters: { type: object, properties: { word: { type: string } } }
        handler: "to_upper_case(args.word) + ' for {{Target}}'"
`);
    stub.reply = (_b, n) => (n === 1 ? { message: { tool_calls: [toolCall('s', 'shout', { word: "x') + exec_cmd('id') + ('{{Target}}" })] } } : { message: { content: 'fine' } });
    const r = await osm(['run', '-m', 'agent-custom', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const tool = stub.requests[1]!.messages.at(-1);
    expect(tool.content).toBe("X') + EXEC_CMD('ID') + ('{{TARGET}} for example.com");
  });

  it('fails at max_iterations, keeping the transcript', async () => {
    wf('agent-loop', `  - name: forever
    type: agent
    query: loop
    max_iterations: 2
    agent_tools: [file_exists]
`);
    stub.reply = () => ({ message: { tool_calls: [toolCall('f', 'file_exists', { path: 'nothing.txt' })] } });
    const r = await osm(['run', '-m', 'agent-loop', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('agent reached max_iterations (2) without a final answer');
    expect(stub.requests).toHaveLength(2);
    const d = db();
    try {
      const run = lastRun(d, 'agent-loop');
      expect(run.status).toBe('failed');
      const art = d.prepare("SELECT * FROM artifacts WHERE run_id = ? AND name = 'agent-transcript-forever'").get(run.id) as Record<string, any>;
      expect(JSON.parse(readFileSync(art.artifact_path, 'utf8'))).toMatchObject({ status: 'failed', iterations: 2 });
    } finally {
      d.close();
    }
  });

  it('fails at the step timeout', async () => {
    wf('agent-slow', `  - name: slow
    type: agent
    query: wait
    timeout: 2
    max_iterations: 2
    agent_tools: [file_exists]
`);
    stub.reply = () => ({ delayMs: 20_000, message: { content: 'too late' } });
    const r = await osm(['run', '-m', 'agent-slow', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('agent step timed out after 2s');
  });

  it('refuses a workflow whose agent could run a shell', async () => {
    wf('agent-shell', `  - name: bad
    type: agent
    query: x
    max_iterations: 1
    agent_tools: [exec_cmd, bash]
`);
    const r = await osm(['workflow', 'validate', 'agent-shell']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("agent tool preset 'exec_cmd' is not allowed: it runs shell text");
    expect(r.stdout + r.stderr).toContain("agent tool preset 'bash' needs allowed_commands (osm never gives an agent a shell)");
    expect(stub.requests).toHaveLength(0);
  });
});

describe('agent-acp step and run_agent()', () => {
  it('asks a named agent from settings acp.agents, in the output folder', async () => {
    wf('acp-named', `  - name: ask
    type: agent-acp
    agent: stub
    messages:
      - role: user
        content: "hello from {{Target}}"
`);
    const r = await osm(['run', '-m', 'acp-named', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = db();
    try {
      const run = lastRun(d, 'acp-named');
      const step = d.prepare("SELECT * FROM step_results WHERE run_id = ? AND step_name = 'ask'").get(run.id) as Record<string, any>;
      const exports = JSON.parse(step.exports);
      expect(exports.acp_output).toBe(`echo: hello from example.com (cwd=${join(base, 'workspaces', 'example.com')})`);
      expect(exports.acp_agent).toBe('stub');
      expect(exports.acp_stderr).toContain('stub agent started');
    } finally {
      d.close();
    }
  });

  it('confines the agent: no reads outside its folders, no writes or permissions without write_enabled', async () => {
    writeFileSync(join(tmp.dir, 'outside.txt'), 'secret');
    wf('acp-confined', `  - name: read-out
    type: agent-acp
    acp_config: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(STUB_AGENT)}] }
    messages: [{ role: user, content: "read ${join(tmp.dir, 'outside.txt')}" }]
  - name: write
    type: agent-acp
    acp_config: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(STUB_AGENT)}] }
    messages: [{ role: user, content: "write {{Output}}/w.txt hi" }]
  - name: perm
    type: agent-acp
    acp_config: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(STUB_AGENT)}] }
    messages: [{ role: user, content: "permission" }]
  - name: write-enabled
    type: agent-acp
    acp_config: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(STUB_AGENT)}], write_enabled: true }
    messages: [{ role: user, content: "write {{Output}}/w.txt hi" }]
`);
    const r = await osm(['run', '-m', 'acp-confined', '-t', 'confined.example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const d = db();
    try {
      const run = lastRun(d, 'acp-confined');
      const out = (name: string) => JSON.parse((d.prepare('SELECT exports FROM step_results WHERE run_id = ? AND step_name = ?').get(run.id, name) as { exports: string }).exports).acp_output;
      expect(out('read-out')).toMatch(/^denied: .*outside the folders this agent may use/);
      expect(out('write')).toMatch(/^denied: .*writing files is not enabled/);
      expect(out('perm')).toBe('permission: no');
      expect(out('write-enabled')).toBe('wrote');
    } finally {
      d.close();
    }
    expect(readFileSync(join(base, 'workspaces', 'example.com', 'w.txt'), 'utf8')).toBe('hi');
  });

  it('fails clearly when the agent dies or is unknown', async () => {
    wf('acp-bad', `  - name: crash
    type: agent-acp
    agent: stub
    messages: [{ role: user, content: crash }]
`);
    const r = await osm(['run', '-m', 'acp-bad', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('ACP agent exited (code 3) before answering');
    expect(r.stdout + r.stderr).toContain('stub agent crashing on purpose');
    wf('acp-unknown', `  - name: who
    type: agent-acp
    agent: nobody
    messages: [{ role: user, content: hi }]
`);
    const u = await osm(['run', '-m', 'acp-unknown', '-t', 'example.com']);
    expect(u.code).toBe(1);
    expect(u.stdout + u.stderr).toContain("unknown ACP agent 'nobody' (known: claude-code, codex, gemini, opencode, stub;");
  });

  it('run_agent() asks an ACP agent and returns its answer ("" on error)', async () => {
    const ok = await osm(['func', 'eval', '--timeout', '60s', "run_agent('ping', 'stub')"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toMatch(/^echo: ping \(cwd=/);
    const unknown = await osm(['func', 'eval', "'[' + run_agent('ping', 'nobody') + ']'"]);
    expect(unknown.stdout.trim()).toBe('[]');
  });

  it('run_agent() in a workflow function step sees the settings of the run', async () => {
    wf('acp-function', `  - name: ask
    type: function
    timeout: 60
    function: "run_agent('from a step', 'stub')"
`);
    const r = await osm(['run', '-m', 'acp-function', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/echo: from a step \(cwd=.*example\.com\)/);
  });
});

describe('no agent step fails as "not supported" any more', () => {
  it('only agent-sdk is refused', async () => {
    expect(existsSync(flows)).toBe(true);
    wf('sdk', `  - name: s
    type: agent-sdk
`);
    const r = await osm(['run', '-m', 'sdk', '-t', 'example.com']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain("step type 'agent-sdk' is not supported by osm (use agent or agent-acp)");
  });
});
