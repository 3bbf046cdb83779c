/**
 * Template, param, schema and lint behaviour needed by the public Osmedeus v5 workflows
 * (platform/osmedeus-workflow): pongo2 arithmetic, `{{ fn("{{x}}") }}`, a declared `target` param,
 * reports written with `default:`, event-trigger input variables, manual-only modules in plans.
 */
import { describe, expect, it } from 'vitest';
import { parseWorkflowText } from '../../../src/workflow/parse.js';
import { lintWorkflow } from '../../../src/workflow/lint.js';
import { formatIssue } from '../../../src/workflow/validate.js';
import { TemplateError, referencedVariables, render } from '../../../src/workflow/template.js';
import { resolveParams } from '../../../src/workflow/params.js';
import { buildPlan, manualRunAllowed } from '../../../src/workflow/plan.js';
import type { Param, Workflow } from '../../../src/workflow/types.js';

function parse(text: string): Workflow {
  const r = parseWorkflowText(text, 'w.yaml');
  if (!r.workflow) throw new Error(r.issues.map(formatIssue).join('\n'));
  return r.workflow;
}

describe('template arithmetic (pongo2 semantics)', () => {
  const vars = { threads: 10, s: '10', f: 1.5, bad: 'abc', list: [1] };

  it('multiplies, divides (integer division for integers), adds, subtracts and takes remainders', () => {
    expect(render('{{threads * 6}}|{{ threads / 2 }}|{{threads/3}}|{{ threads + 1 }}|{{ threads - 1 }}|{{ threads % 3 }}', vars)).toBe('60|5|3|11|9|1');
    expect(render('{{ (threads + 2) * 3 }}|{{ threads + 2 * 3 }}|{{ -threads }}|{{ 2 - -1 }}', vars)).toBe('36|16|-10|3');
  });

  it('reads numeric strings, treats non-numbers and undefined as 0, keeps floats', () => {
    expect(render('{{ s * 3 }}|{{ bad * 3 }}|{{ missing * 6 }}|{{ f * 2 }}|{{ threads * 0.5 }}', vars)).toBe('30|0|0|3|5');
  });

  it('reports division by zero and calling a variable as template errors', () => {
    expect(() => render('{{ threads / 0 }}', vars)).toThrow(TemplateError);
    expect(() => render('{{ threads % 0 }}', vars)).toThrow(/division by zero/);
    expect(() => render('{{ threads(1) }}', vars)).toThrow(/not a function/);
  });

  it('keeps names with "-" as names and rejects stray operators', () => {
    expect(render('{{ param-a }}', { 'param-a': 'x' })).toBe('x');
    expect(() => render('{{ threads * }}', vars)).toThrow(TemplateError);
    expect(() => render('{{ * threads }}', vars)).toThrow(TemplateError);
  });

  it('lists the variables of every operand', () => {
    expect(referencedVariables('{{ a * b + c }} {{ (d) }} {{ f(g, "{{h}}") }}')).toEqual(['a', 'b', 'c', 'd', 'g']);
  });
});

describe('function calls inside {{ }}', () => {
  it('scans past quoted "}}" and renders an unknown call as empty (as pongo2 does)', () => {
    const text = 'log_error("Got {{file_length("{{httpFile}}")}} lines, limit {{limit}}")';
    expect(render(text, { httpFile: '/x', limit: 5 })).toBe('log_error("Got  lines, limit 5")');
  });

  it('still rejects a tag opened inside another tag', () => {
    expect(() => render('{{ a {{ b }}', {})).toThrow(/unclosed/);
  });
});

describe('declared params named like the CLI built-ins', () => {
  const p = (over: Partial<Param> & { name: string }): Param => ({ type: 'string', required: false, ...over });

  it('a required `target` takes the -t value (a CLI-provided param in the reference)', () => {
    const vars = resolveParams([p({ name: 'target', required: true })], {}, { target: 'example.com', Target: 'example.com' });
    expect(vars.target).toBe('example.com');
  });

  it('the -t value beats the declared default, and an explicit param still wins', () => {
    expect(resolveParams([p({ name: 'target', default: 'x.test' })], {}, { target: 'example.com' }).target).toBe('example.com');
    expect(resolveParams([p({ name: 'target' })], { target: 'flow.test' }, { target: 'example.com' }).target).toBe('flow.test');
  });

  it('a required `Target` is the run target (event inputs map it); other built-ins such as `threads` are not provided params', () => {
    expect(resolveParams([p({ name: 'Target', required: true })], {}, { Target: 'example.com' }).Target).toBe('example.com');
    expect(() => resolveParams([p({ name: 'Target', required: true })], {}, { Target: '' })).toThrow(/required parameter missing: Target/);
    expect(resolveParams([p({ name: 'threads', default: '3' })], {}, { threads: 10 }).threads).toBe('3');
    expect(() => resolveParams([p({ name: 'Output', required: true })], {}, { Output: '/x' })).toThrow(/required parameter missing: Output/);
  });
});

describe('reports, entry keys and trigger inputs', () => {
  const text = `kind: module
name: m
params:
  - name: p
    value: "10"
reports:
  - name: r1
    default: "{{Output}}/x.txt"
  - name: r2
    path: "{{Output}}/y.txt"
    kind: text
triggers:
  - name: ev
    on: event
    event: { topic: "a.*" }
    input:
      Target: event_data.value
      source: event.source
    enabled: true
steps:
  - { name: s, type: bash, command: "echo {{source}} {{p}}" }
`;

  it('a report without path parses (path "") instead of failing the whole file', () => {
    const wf = parse(text);
    expect(wf.reports.map((r) => [r.name, r.path])).toEqual([['r1', ''], ['r2', '{{Output}}/y.txt']]);
  });

  it('lints the missing path, stray keys of params/reports (with hints) and knows trigger input variables', () => {
    const issues = lintWorkflow(parse(text)).map((i) => `${i.rule}|${i.path}|${i.message}`);
    expect(issues).toEqual(expect.arrayContaining([
      "unknown-key|params[0].value|unknown key 'value' (ignored); did you mean 'default'?",
      "unknown-key|reports[1].kind|unknown key 'kind' (ignored)",
      "report-path|reports[0].path|report 'r1' has no path; nothing is registered for it (its 'default:' key is ignored; reports take 'path:')",
    ]));
    // One message for r1's `default:` (the report-path one), and `source` comes from the trigger input.
    expect(issues.filter((i) => i.includes('reports[0].default'))).toEqual([]);
    expect(issues.filter((i) => i.startsWith('undefined-variable'))).toEqual([]);
  });
});

describe('manual-only modules in plans', () => {
  const mod = parse(`kind: module
name: ev-only
triggers:
  - { name: manual, on: manual, enabled: false }
steps:
  - { name: s, type: bash, command: "echo x" }
`);
  const normal = parse('kind: module\nname: n\nsteps:\n  - { name: s, type: bash, command: "echo {{ threads * 2 }}" }\n');

  it('manualRunAllowed follows the manual trigger', () => {
    expect(manualRunAllowed(mod)).toBe(false);
    expect(manualRunAllowed(normal)).toBe(true);
  });

  it('a flow plan marks such a module skipped; a module plan warns', () => {
    const flow = parse('kind: flow\nname: f\nmodules:\n  - { name: a, path: a.yaml }\n  - { name: b, path: b.yaml, depends_on: [a] }\n');
    const plan = buildPlan(flow, { target: 'example.com', vars: { threads: 10 } }, (ref) => (ref.name === 'a' ? mod : normal));
    expect(plan.modules.map((m) => [m.name, m.skipReason ?? '', m.steps.length])).toEqual([['a', 'manual-trigger-disabled', 0], ['b', '', 1]]);
    expect(plan.modules[1]!.steps[0]!.commands).toEqual(['echo 20']);
    expect(buildPlan(mod, { target: 'example.com', vars: {} }).warnings.join('\n')).toMatch(/manual trigger is disabled/);
  });
});

describe('actions without a known `action:`', () => {
  const flow = `kind: flow
name: f
modules:
  - name: a
    path: a.yaml
    on_success:
      - type: function
        script: log_info("x")
      - action: shout
        message: hi
`;

  it('parse (the reference ignores them) and are linted', () => {
    const wf = parse(flow);
    expect(wf.modules[0]!.on_success!.map((a) => a.action)).toEqual(['', 'shout']);
    const issues = lintWorkflow(wf).filter((i) => i.rule === 'action').map((i) => `${i.path}|${i.message.split(' does nothing')[0]}`);
    expect(issues).toEqual(["modules[0].on_success[0].action|action without 'action:'", "modules[0].on_success[1].action|unknown action 'shout'"]);
  });
});

describe('lint: top-level return in function snippets and root key slips', () => {
  it('flags a snippet that only fails because of a top-level return', () => {
    const wf = parse(`kind: module
name: m
trigger:
  - { name: t, on: manual }
steps:
  - name: a
    type: function
    function: |
      if ("{{Target}}" == "") { return false; }
      log_info("ok")
  - name: b
    type: function
    functions:
      - 'var x = 1; x'
      - '(function () { return 1; })()'
`);
    const issues = lintWorkflow(wf).map((i) => `${i.rule}|${i.path}`);
    expect(issues).toContain('js-return|steps[0].function');
    expect(issues.filter((i) => i.startsWith('js-return'))).toHaveLength(1);
    expect(lintWorkflow(wf).find((i) => i.path === 'trigger')?.message).toBe("unknown key 'trigger' (ignored); did you mean 'triggers'?");
  });
});

describe('Osmedeus v4 files', () => {
  it('get one clear error instead of a list of schema errors', () => {
    const r = parseWorkflowText('name: probing\ndesc: x\n\nparams:\n  - testData: "/x"\n\nsteps:\n  - scripts:\n      - ImportDns("{{testData}}")\n', 'p.yaml');
    expect(r.workflow).toBeUndefined();
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]!.message).toMatch(/^no 'kind:' — this looks like an Osmedeus v4 workflow \(desc, steps with scripts, params as key: value pairs\)/);
  });

  it('a v5 file without kind still gets the schema errors', () => {
    const r = parseWorkflowText('name: x\nsteps:\n  - { name: a, type: bash, command: echo }\n', 'x.yaml');
    expect(r.issues.map((i) => i.message)).toContain("kind is required (must be 'module' or 'flow')");
  });

  it('lookup explains that a same-named YAML file is not a workflow', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { findWorkflow } = await import('../../../src/workflow/lookup.js');
    const dir = mkdtempSync(join(tmpdir(), 'osm-v4-'));
    try {
      mkdirSync(join(dir, 'general'));
      writeFileSync(join(dir, 'general', 'probing.yaml'), 'name: probing\nsteps:\n  - scripts: [x]\n');
      expect(() => findWorkflow('probing', dir)).toThrow(/probing\.yaml has no 'kind: module' or 'kind: flow' line at column 0/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
