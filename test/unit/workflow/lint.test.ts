import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkflowText } from '../../../src/workflow/parse.js';
import { resolveInheritance } from '../../../src/workflow/inherit.js';
import { lintWorkflow, type LintOptions } from '../../../src/workflow/lint.js';
import { formatIssue } from '../../../src/workflow/validate.js';
import { templateVariables } from '../../../src/workflow/wf-lint-vars.js';
import type { Workflow } from '../../../src/workflow/types.js';

const FIX = join(import.meta.dirname, '../../fixtures/workflows');

function parse(text: string, file = 'w.yaml'): Workflow {
  const r = parseWorkflowText(text, file);
  if (!r.workflow) throw new Error(r.issues.map(formatIssue).join('\n'));
  return r.workflow;
}

function rules(text: string, opts?: LintOptions): string[] {
  return lintWorkflow(parse(text), opts).map((i) => `${i.rule}|${i.severity}|${i.path}|${i.message}`);
}

function ruleNames(text: string, opts?: LintOptions): string[] {
  return lintWorkflow(parse(text), opts).map((i) => i.rule!);
}

const mod = (steps: string, head = '') => `kind: module\nname: m\n${head}steps:\n${steps}`;

describe('lintWorkflow', () => {
  it('finds nothing in the valid fixtures', () => {
    for (const f of ['valid/modules/all-steps.yaml', 'valid/modules/simple-bash.yaml', 'valid/modules/echo-module.yaml']) {
      expect(lintWorkflow(parse(readFileSync(join(FIX, f), 'utf8'), f)).map(formatIssue), f).toEqual([]);
    }
  });

  describe('undefined-variable', () => {
    it('flags a variable that is not a builtin, param or earlier export', () => {
      expect(rules(mod('  - { name: a, type: bash, command: "echo {{ nope.field }} {{Target}}" }\n'))).toEqual([
        "undefined-variable|warning|steps[0].command|undefined variable 'nope' (not a built-in, a param or an export of an earlier step)",
      ]);
    });
    it('flags a use before the export that defines it', () => {
      expect(ruleNames(mod('  - { name: a, type: bash, command: "echo {{later}}" }\n  - { name: b, type: bash, command: x, exports: { later: "1" } }\n'))).toEqual(['undefined-variable']);
    });
    it('accepts builtins, params, earlier exports, automatic exports and export actions', () => {
      expect(rules(mod(`  - name: a
    type: http
    url: "https://{{Target}}/{{p}}"
    exports: { code: "{{a_http_resp.status_code}}" }
    on_success: [ { action: export, name: flag, value: true } ]
  - { name: b, type: bash, command: "echo {{code}} {{flag}} {{a_http_resp}} {{ threads }}" }
`, 'params:\n  - name: p\n'))).toEqual([]);
    });
    it('checks param defaults and flow module params', () => {
      expect(ruleNames(mod('  - { name: a, type: bash, command: x }\n', 'params:\n  - { name: p, default: "{{Data}}/{{missing}}" }\n'))).toEqual(['undefined-variable']);
      const flow = 'kind: flow\nname: f\nmodules:\n  - name: one\n    params: { x: "{{nope}}" }\n    steps:\n      - { name: s, type: bash, command: "echo {{x}}" }\n';
      expect(rules(flow)).toEqual([
        "undefined-variable|warning|modules[0].params|undefined variable 'nope' (not a built-in, a param or an export of an earlier step)",
      ]);
    });
    it('stops checking later flow modules when an earlier module cannot be resolved', () => {
      const flow = 'kind: flow\nname: f\nmodules:\n  - { name: one, path: modules/a.yaml }\n  - name: two\n    params: { x: "{{from_one}}" }\n    path: modules/b.yaml\n';
      expect(rules(flow)).toEqual([]);
      const a = parse('kind: module\nname: a\nsteps:\n  - { name: s, type: bash, command: x, exports: { other: "1" } }\n');
      expect(ruleNames(flow, { resolveModule: () => a })).toEqual(['undefined-variable']);
    });
  });

  describe('foreach-variable', () => {
    it('accepts [[var]] and {{var}} inside the foreach step', () => {
      expect(rules(mod(`  - name: f
    type: foreach
    input: "{{Output}}/in.txt"
    variable: url
    variable_pre_process: "trim([[url]])"
    step: { name: i, type: bash, command: "echo [[url]] {{url}} {{_id_}} {{_url_}}" }
`))).toEqual([]);
    });
    it('flags [[var]] outside a foreach and an unknown loop variable inside one', () => {
      expect(rules(mod(`  - { name: a, type: bash, command: "echo [[x]]" }
  - name: f
    type: foreach
    input: in.txt
    variable: url
    step: { name: i, type: bash, command: "echo [[uri]]" }
`))).toEqual([
        'foreach-variable|error|steps[0].command|[[x]] is only valid inside a foreach step (outside one it is not rendered: the step fails without running)',
        "undefined-variable|warning|steps[1].step.command|undefined loop variable '[[uri]]' (the foreach variable is 'url')",
      ]);
    });
  });

  describe('duplicate names', () => {
    it('flags duplicate step names (also across parallel children)', () => {
      expect(rules(mod('  - { name: a, type: bash, command: x }\n  - name: p\n    type: parallel-steps\n    parallel_steps:\n      - { name: a, type: bash, command: y }\n'))).toEqual([
        "duplicate-step-name|error|steps[1].parallel_steps[0].name|duplicate step name 'a' (first used by steps[0])",
      ]);
    });
    it('passes distinct names', () => {
      expect(ruleNames(mod('  - { name: a, type: bash, command: x }\n  - { name: b, type: bash, command: x }\n'))).toEqual([]);
    });
    it('flags duplicate module names in a flow', () => {
      const flow = (b: string) => `kind: flow\nname: f\nmodules:\n  - { name: a, path: x.yaml }\n  - { name: ${b}, path: y.yaml }\n`;
      expect(ruleNames(flow('a'))).toEqual(['duplicate-module-name']);
      expect(ruleNames(flow('b'))).toEqual([]);
    });
  });

  describe('invalid-goto', () => {
    it('flags goto targets that are not steps', () => {
      expect(rules(mod('  - name: a\n    type: bash\n    command: x\n    decision:\n      conditions:\n        - { if: "true", goto: nowhere }\n'))).toEqual([
        "invalid-goto|error|steps[0].decision.conditions[0].goto|goto target 'nowhere' is not a step of this module (use a step name or _end)",
      ]);
    });
    it('accepts step names and _end', () => {
      expect(ruleNames(mod('  - name: a\n    type: bash\n    command: x\n    decision:\n      switch: "1"\n      cases: { "1": { goto: b } }\n      default: { goto: _end }\n  - { name: b, type: bash, command: x }\n'))).toEqual([]);
    });
  });

  describe('unknown-dependency and dependency-cycle', () => {
    it('flags depends_on naming an unknown step', () => {
      expect(rules(mod('  - { name: a, type: bash, command: x, depends_on: [ghost] }\n'))).toEqual([
        "unknown-dependency|error|steps[0].depends_on|depends on unknown step 'ghost'",
      ]);
    });
    it('flags cycles among steps and among modules', () => {
      expect(rules(mod('  - { name: a, type: bash, command: x, depends_on: [b] }\n  - { name: b, type: bash, command: x, depends_on: [a] }\n'))).toEqual([
        'dependency-cycle|error|steps[0].depends_on|dependency cycle: a -> b -> a',
      ]);
      const flow = 'kind: flow\nname: f\nmodules:\n  - { name: a, path: x.yaml, depends_on: [a] }\n';
      expect(rules(flow)).toEqual(['dependency-cycle|error|modules[0].depends_on|dependency cycle: a -> a']);
    });
    it('accepts a DAG', () => {
      expect(ruleNames(mod('  - { name: a, type: bash, command: x }\n  - { name: b, type: bash, command: x, depends_on: [a] }\n  - { name: c, type: bash, command: x, depends_on: [a, b] }\n'))).toEqual([]);
    });
  });

  describe('unknown-key', () => {
    it('warns about unknown keys of the file, steps and module entries', () => {
      expect(rules('kind: flow\nname: f\nauthor: me\nmodules:\n  - { name: a, path: x.yaml, when: later }\n')).toEqual([
        "unknown-key|warning|author|unknown key 'author' (ignored)",
        "unknown-key|warning|modules[0].when|unknown key 'when' (ignored)",
      ]);
      expect(ruleNames(mod('  - { name: a, type: bash, command: x, condition: "1" }\n'))).toEqual(['unknown-key']);
    });
    it('is quiet for known keys', () => {
      expect(ruleNames(mod('  - { name: a, type: bash, command: x, log: hi, suppress_details: true }\n'))).toEqual([]);
    });
  });

  describe('extends-ignored', () => {
    const parent = parse('kind: module\nname: p\nsteps:\n  - { name: a, type: bash, command: x }\n', '/v/p.yaml');
    const resolve = (text: string) => resolveInheritance(parse(text, '/v/c.yaml'), () => parent);
    it('warns when a child sets steps or params of its own', () => {
      const issues = lintWorkflow(resolve('kind: module\nname: c\nextends: p\nsteps:\n  - { name: b, type: bash, command: x }\n'));
      expect(issues.map((i) => `${i.rule}|${i.file}:${i.line}|${i.message}`)).toEqual([
        "extends-ignored|/v/c.yaml:4|'steps' is ignored because the workflow uses extends; use override.steps instead",
      ]);
    });
    it('is quiet when the child only uses override', () => {
      expect(lintWorkflow(resolve('kind: module\nname: c\nextends: p\noverride:\n  params: { x: 1 }\n'))).toEqual([]);
    });
  });

  describe('ignored-field', () => {
    it('warns about steps in a flow', () => {
      expect(ruleNames('kind: flow\nname: f\nmodules:\n  - { name: a, path: x.yaml }\nsteps:\n  - { name: s, type: bash, command: x }\n')).toEqual(['ignored-field']);
      expect(ruleNames('kind: flow\nname: f\nmodules:\n  - { name: a, path: x.yaml }\n')).toEqual([]);
    });
  });

  describe('empty-command', () => {
    it('warns about blank commands and blank list entries', () => {
      expect(rules(mod('  - { name: a, type: bash, command: "  " }\n  - { name: b, type: bash, commands: ["echo", ""] }\n'))).toEqual([
        'empty-command|warning|steps[0].command|empty command',
        'empty-command|warning|steps[1].commands[1]|empty entry in commands',
      ]);
    });
    it('is quiet for real commands', () => {
      expect(ruleNames(mod('  - { name: b, type: bash, commands: ["echo", "ls"] }\n'))).toEqual([]);
    });
  });

  describe('unknown-function', () => {
    const known = new Set(['log_info', 'file_length']);
    const fnStep = (code: string) => mod(`  - name: f\n    type: function\n    function: ${JSON.stringify(code)}\n`);
    it('reports calls to functions outside the catalogue', () => {
      expect(rules(fnStep('log_info("x"); explode(1)'), { knownFunctions: known })).toEqual([
        "unknown-function|warning|steps[0]|unknown function 'explode'",
      ]);
    });
    it('ignores methods, JS globals, strings and local functions; skips the rule without a catalogue', () => {
      expect(ruleNames(fnStep('function h(a) { return a } h(parseInt("x(1)")) + "y".trim() + file_length("{{Output}}")'), { knownFunctions: known })).toEqual([]);
      expect(ruleNames(fnStep('explode(1)'))).toEqual([]);
    });
  });

  describe('unsupported-step-type', () => {
    it('warns about agent-sdk steps and agent fields osm does not run', () => {
      expect(ruleNames(mod('  - { name: a, type: agent-sdk }\n'))).toEqual(['unsupported-step-type']);
      expect(ruleNames(mod('  - { name: a, type: agent, query: hi, max_iterations: 1, agent_tools: [read_file], memory: { max_messages: 3 } }\n'))).toEqual(['unsupported-step-type']);
      expect(ruleNames(mod('  - { name: a, type: agent, query: hi, max_iterations: 1, agent_tools: [read_file] }\n'))).toEqual([]);
      expect(ruleNames(mod('  - { name: a, type: bash, command: x }\n'))).toEqual([]);
    });
  });
});

describe('templateVariables', () => {
  it('returns root names, skipping strings, calls, keywords and fields', () => {
    expect(templateVariables('{{ a.b }} {{c}} x {{ fn(d) }} {{ "e" }} {{ true }}')).toEqual(['a', 'c', 'd']);
    expect(templateVariables('[[ item ]] {{x}}', '[[')).toEqual(['item']);
  });
});
