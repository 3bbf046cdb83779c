import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isWorkflowYaml, parseWorkflowText } from '../../../src/workflow/parse.js';
import { formatIssue, validateWorkflow } from '../../../src/workflow/validate.js';
import type { Workflow } from '../../../src/workflow/types.js';

const FIX = join(import.meta.dirname, '../../fixtures/workflows');
const read = (rel: string) => readFileSync(join(FIX, rel), 'utf8');

function ok(text: string, file = 'x.yaml'): Workflow {
  const r = parseWorkflowText(text, file);
  expect(r.issues.filter((i) => i.severity === 'error')).toEqual([]);
  expect(r.workflow).toBeDefined();
  return r.workflow!;
}

function issuesOf(text: string, file = 'x.yaml') {
  const r = parseWorkflowText(text, file);
  expect(r.workflow).toBeUndefined();
  return r.issues.map((i) => ({ path: i.path, message: i.message, line: i.line }));
}

describe('parseWorkflowText: valid files', () => {
  it('parses the module that uses every step type', () => {
    const text = read('valid/modules/all-steps.yaml');
    const wf = ok(text, 'all-steps.yaml');
    expect(wf.kind).toBe('module');
    expect(wf.name).toBe('all-steps');
    expect(wf.tags).toEqual(['recon', 'test']);
    expect(wf.steps.map((s) => s.type)).toEqual([
      'bash', 'bash', 'bash', 'function', 'function', 'parallel-steps', 'foreach', 'remote-bash', 'http', 'llm', 'llm', 'bash',
    ]);
    expect(wf.raw).toBe(text);
    expect(wf.checksum).toBe(`sha256:${createHash('sha256').update(Buffer.from(text)).digest('hex')}`);
    expect(wf.file_path.endsWith('all-steps.yaml')).toBe(true);
    expect(wf.runner).toBe('host');
    expect(wf.modules).toEqual([]);
    // hook steps without a type are bash
    expect(wf.hooks.pre_scan_steps[0]).toMatchObject({ name: 'announce', type: 'bash' });
    expect(wf.hooks.post_scan_steps).toEqual([]);
    expect(wf.params.find((p) => p.name === 'deep')).toEqual({ name: 'deep', type: 'bool', default: false, required: false });
    expect(wf.params.find((p) => p.name === 'run_tag')?.generator).toBe('randomString(8)');
    expect(wf.triggers).toEqual([
      { name: 'nightly', on: 'cron', schedule: '0 3 * * *', enabled: true },
      { name: 'on-asset', on: 'event', event: { topic: 'assets.new' }, enabled: false },
    ]);
    const foreach = wf.steps[6]!;
    expect(foreach).toMatchObject({ input: '{{Output}}/many.txt', variable: 'line', threads: 2, step: { name: 'each-line', type: 'bash' } });
    const llm = wf.steps[9]!;
    expect(llm.messages?.[1]?.content).toEqual([{ type: 'text', text: 'Summarize {{probe_http_resp}}' }]);
    expect(llm.llm_config).toEqual({ model: 'test-model', max_tokens: 100 });
    expect(wf.steps[11]!.decision).toEqual({ switch: '{{deep}}', cases: { true: { goto: 'hello' } }, default: { goto: '_end' } });
    expect(wf.steps[11]!.on_success).toEqual([{ action: 'export', name: 'decided', value: true }]);
  });

  it('accepts tags as a comma string or a list', () => {
    expect(ok('kind: module\nname: a\ntags: " a, b ,,c"\nsteps: []\n').tags).toEqual(['a', 'b', 'c']);
    expect(ok('kind: module\nname: a\ntags: [x, 2]\nsteps: []\n').tags).toEqual(['x', '2']);
    expect(ok('kind: module\nname: a\nsteps: []\n').tags).toEqual([]);
  });

  it('keeps timeouts as integer seconds or duration text', () => {
    const wf = ok(`kind: module
name: t
steps:
  - { name: a, type: bash, command: x, timeout: 90 }
  - { name: b, type: bash, command: x, timeout: 1h30m }
  - { name: c, type: bash, command: x, timeout: 2d }
  - { name: d, type: bash, command: x, timeout: "{{t}}" }
`);
    expect(wf.steps.map((s) => s.timeout)).toEqual([90, '1h30m', '2d', '{{t}}']);
  });

  it('tolerates unknown keys and records them for the linter', () => {
    const wf = ok('kind: module\nname: a\nauthor: me\nsteps:\n  - name: s\n    type: bash\n    command: x\n    condition: "1"\n');
    expect(wf.steps[0]!.unknown_keys).toEqual(['condition']);
    expect((wf as unknown as Record<string, unknown>).author).toBeUndefined();
  });

  it('coerces export values and scalar commands to text; empty default is no default', () => {
    const wf = ok(`kind: module
name: a
params:
  - name: p
    default: ""
  - name: n
    type: int
    default: 5
steps:
  - name: s
    type: bash
    command: 42
    exports: { a: 1, b: true, c: "{{x}}" }
`);
    expect(wf.params[0]).toEqual({ name: 'p', type: 'string', required: false });
    expect(wf.params[1]!.default).toBe(5);
    expect(wf.steps[0]!.command).toBe('42');
    expect(wf.steps[0]!.exports).toEqual({ a: '1', b: 'true', c: '{{x}}' });
  });

  it('accepts foreach input as a list and parallel as a template', () => {
    const wf = ok(`kind: module
name: a
steps:
  - name: f
    type: foreach
    input: [a, b]
    variable: v
    parallel: "{{threads}}"
    step: { name: i, type: bash, command: "echo [[v]]" }
`);
    expect(wf.steps[0]!.input).toEqual(['a', 'b']);
    expect(wf.steps[0]!.parallel).toBe('{{threads}}');
  });

  it('parses flows with inline modules and defaults trigger enabled to false', () => {
    const wf = ok(read('valid/flows/demo-flow.yaml'));
    expect(wf.kind).toBe('flow');
    expect(wf.modules.map((m) => m.name)).toEqual(['first', 'second', 'inline']);
    expect(wf.modules[0]!.params).toEqual({ greeting: 'hello {{target}}' });
    expect(wf.modules[2]!.steps?.map((s) => s.name)).toEqual(['inline-one', 'inline-two']);
    expect(wf.modules[1]).toEqual({ name: 'second', path: 'modules/echo-module', depends_on: ['first'], condition: 'true' });
  });
});

describe('parseWorkflowText: invalid files', () => {
  it('names file, path and line of a bad step type', () => {
    const r = parseWorkflowText(read('invalid/bad-step-type.yaml'), 'flows/x.yaml');
    expect(r.issues).toHaveLength(1);
    expect(formatIssue(r.issues[0]!)).toBe(
      'flows/x.yaml:11: steps[2].type: must be one of bash, function, parallel-steps, foreach, remote-bash, http, llm, agent, agent-acp, agent-sdk',
    );
  });

  it('reports every schema issue, each with its path, message and line', () => {
    const issues = issuesOf(read('invalid/schema-errors.yaml'));
    expect(issues).toEqual(expect.arrayContaining([
      { path: 'params[0].name', message: 'param name is required', line: 4 },
      { path: 'params[1].type', message: 'must be one of string, bool, int', line: 6 },
      { path: 'triggers[0].on', message: 'must be one of cron, event, watch, manual', line: 9 },
      { path: 'steps[0].name', message: 'step name is required', line: 11 },
      { path: 'steps[1].timeout', message: "invalid duration 'soon' (use seconds, 30s, 5m, 1h30m or 2d)", line: 16 },
      { path: 'steps[2].input', message: 'must be a file path or a list of strings', line: 19 },
      { path: 'steps[2].threads', message: "must be an integer or a template, got 'many'", line: 21 },
      { path: 'steps[2].step.type', message: expect.stringContaining('must be one of bash,'), line: 24 },
      { path: 'steps[3].command', message: 'must be a string', line: 27 },
      { path: 'steps[3].exports', message: 'must be a mapping of variable names to expressions', line: 28 },
      { path: 'steps[4].parallel_steps', message: 'must list at least one step', line: 31 },
      { path: 'steps[5].messages[0].role', message: 'must be one of system, user, assistant, tool', line: 35 },
    ]));
    // An unknown action (`explode`, steps[6]) parses as in the reference (which ignores it); the linter reports it.
    expect(issues).toHaveLength(12);
  });

  it('reports a missing step type with the reference wording', () => {
    expect(issuesOf('kind: module\nname: a\nsteps:\n  - name: s\n    command: x\n')).toEqual([
      { path: 'steps[0].type', message: 'step type is required', line: 4 },
    ]);
  });

  it('rejects kinds other than module and flow', () => {
    expect(issuesOf(read('invalid/fragment-kind.yml'))).toEqual([
      { path: 'kind', message: "invalid kind 'fragment': must be 'module' or 'flow'", line: 1 },
    ]);
    expect(issuesOf('name: a\nsteps: []\n')[0]).toMatchObject({ path: 'kind', message: expect.stringContaining('kind is required') });
  });

  it('reports YAML syntax errors with a line number', () => {
    const r = parseWorkflowText(read('invalid/yaml-syntax.yaml'), 'y.yaml');
    expect(r.workflow).toBeUndefined();
    expect(r.issues.length).toBeGreaterThan(0);
    expect(r.issues[0]!.message).toMatch(/^YAML: /);
    expect(r.issues[0]!.line).toBeGreaterThanOrEqual(6);
  });

  it('rejects a document that is not a mapping, and an empty file', () => {
    expect(issuesOf('- a\n- b\n')[0]!.message).toBe('a workflow file must be a YAML mapping');
    expect(issuesOf('')[0]!.message).toBe('the file is empty');
  });

  it('rejects invalid types of every step type', () => {
    const cases: [string, string, string][] = [
      ['type: bash\n    commands: { a: 1 }', 'steps[0].commands', 'must be a list of strings'],
      ['type: function\n    functions: { a: 1 }', 'steps[0].functions', 'must be a list of strings'],
      ['type: parallel-steps\n    parallel_steps: nope', 'steps[0].parallel_steps', 'must be a list of steps'],
      ['type: foreach\n    input: x\n    variable: v\n    step: nope', 'steps[0].step', 'must be a mapping'],
      ['type: remote-bash\n    step_runner: docker\n    step_runner_config: [a]', 'steps[0].step_runner_config', 'must be a mapping'],
      ['type: http\n    url: x\n    headers: [a]', 'steps[0].headers', 'must be a mapping of names to values'],
      ['type: llm\n    messages: hello', 'steps[0].messages', 'must be a list of messages'],
      ['type: llm\n    messages:\n      - role: user', 'steps[0].messages[0].content', 'message content is required'],
      ['type: llm\n    is_embedding: maybe\n    embedding_input: [a]', 'steps[0].is_embedding', 'must be true or false'],
      ['type: bash\n    command: x\n    decision: { conditions: [ { command: x } ] }', 'steps[0].decision.conditions[0].if', 'condition needs an if expression'],
    ];
    for (const [body, path, message] of cases) {
      const issues = issuesOf(`kind: module\nname: a\nsteps:\n  - name: s\n    ${body}\n`);
      expect(issues, body).toContainEqual(expect.objectContaining({ path, message }));
    }
  });

  it('accepts agent step types', () => {
    const wf = ok(
      'kind: module\nname: a\nsteps:\n' +
        '  - { name: a, type: agent, query: hi, max_iterations: 2, agent_tools: [{ preset: read_file }, fileExists, { preset: bash }], allowed_commands: [dig] }\n' +
        "  - { name: b, type: agent-acp, agent: codex, messages: [{ role: user, content: 'hi' }] }\n" +
        '  - { name: c, type: agent-sdk }\n' +
        "  - { name: d, type: agent, queries: [a, b], max_iterations: 1, agent_tools: [{ name: lookup, description: d, parameters: { type: object }, handler: 'args.x' }], sub_agents: [] }\n",
    );
    expect(wf.steps.map((s) => s.type)).toEqual(['agent', 'agent-acp', 'agent-sdk', 'agent']);
    expect(wf.steps[0]!.unknown_keys).toBeUndefined();
    expect(wf.steps[0]!.agent_tools).toEqual([{ preset: 'read_file' }, { preset: 'fileExists' }, { preset: 'bash' }]);
    expect(wf.steps[0]!.allowed_commands).toEqual(['dig']);
    expect(wf.steps[3]!.agent_tools![0]).toEqual({ name: 'lookup', description: 'd', parameters: { type: 'object' }, handler: 'args.x' });
    expect(wf.steps[3]!.unsupported_agent_fields).toEqual(['sub_agents']);
  });

  it('rejects agent steps the reference rejects, and tools that would give the model a shell', () => {
    const cases: [string, string, string][] = [
      ['{ type: agent, max_iterations: 1, agent_tools: [read_file] }', 'steps[0].query', 'agent step must have query or queries'],
      ['{ type: agent, query: q, queries: [r], max_iterations: 1, agent_tools: [read_file] }', 'steps[0].query', 'agent step must have query or queries, not both'],
      ['{ type: agent, query: q, agent_tools: [read_file] }', 'steps[0].max_iterations', 'agent step must have max_iterations > 0'],
      ['{ type: agent, query: q, max_iterations: 0, agent_tools: [read_file] }', 'steps[0].max_iterations', 'agent step must have max_iterations > 0'],
      ['{ type: agent, query: q, max_iterations: 1 }', 'steps[0].agent_tools', 'agent step must have at least one tool in agent_tools'],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [nope] }', 'steps[0].agent_tools[0]', "unknown agent tool preset 'nope' (use an osm function name from 'osm func list', or run_command)"],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [read_file, readFile] }', 'steps[0].agent_tools[1]', "duplicate agent tool 'read_file'"],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [exec_cmd] }', 'steps[0].agent_tools[0]', "agent tool preset 'exec_cmd' is not allowed: it runs shell text"],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [db_select] }', 'steps[0].agent_tools[0]', "agent tool preset 'db_select' is not allowed: it takes free SQL"],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [bash] }', 'steps[0].agent_tools[0]', "agent tool preset 'bash' needs allowed_commands (osm never gives an agent a shell)"],
      ["{ type: agent, query: q, max_iterations: 1, agent_tools: [run_command], allowed_commands: ['sh -c'] }", 'steps[0].allowed_commands', "allowed command 'sh -c' must be a program name (no path, spaces or shell syntax)"],
      ['{ type: agent, query: q, max_iterations: 1, agent_tools: [{ name: x }] }', 'steps[0].agent_tools[0].handler', 'custom agent tool must have a handler (a function script)'],
      ['{ type: agent-acp }', 'steps[0].agent', 'agent-acp step must have agent or acp_config.command'],
      ['{ type: agent-acp, agent: codex }', 'steps[0].messages', 'agent-acp step must have messages'],
      ["{ type: agent-acp, acp_config: { command: x }, messages: [{ role: user, content: ' ' }] }", 'steps[0].messages', 'agent-acp step messages must have non-empty content'],
    ];
    for (const [body, path, message] of cases) {
      const issues = validateWorkflow(ok(`kind: module\nname: a\nsteps:\n  - ${body.replace('{ ', '{ name: s, ')}\n`));
      expect(issues, body).toContainEqual(expect.objectContaining({ path, message }));
    }
  });
});

describe('isWorkflowYaml', () => {
  it('matches a column-0 kind line with optional quotes', () => {
    expect(isWorkflowYaml('name: x\nkind: module\n')).toBe(true);
    expect(isWorkflowYaml("kind: 'flow'\n")).toBe(true);
    expect(isWorkflowYaml('kind: "module"\n')).toBe(true);
  });
  it('rejects other kinds, indented kinds and non-workflows', () => {
    expect(isWorkflowYaml('kind: fragment\n')).toBe(false);
    expect(isWorkflowYaml('  kind: module\n')).toBe(false);
    expect(isWorkflowYaml('kind: modules\n')).toBe(false);
    expect(isWorkflowYaml('just: yaml\n')).toBe(false);
  });
});
