import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorkflowText } from '../../../src/workflow/parse.js';
import { formatIssue, validateWorkflow } from '../../../src/workflow/validate.js';
import type { Workflow } from '../../../src/workflow/types.js';

const FIX = join(import.meta.dirname, '../../fixtures/workflows');

function parse(text: string, file = 'w.yaml'): Workflow {
  const r = parseWorkflowText(text, file);
  if (!r.workflow) throw new Error(r.issues.map(formatIssue).join('\n'));
  return r.workflow;
}

const brief = (wf: Workflow) => validateWorkflow(wf).map((i) => `${i.path} - ${i.message}`);

describe('validateWorkflow', () => {
  it('passes the valid fixtures', () => {
    for (const f of ['valid/modules/all-steps.yaml', 'valid/modules/simple-bash.yaml', 'valid/flows/demo-flow.yaml']) {
      expect(validateWorkflow(parse(readFileSync(join(FIX, f), 'utf8'), f)), f).toEqual([]);
    }
  });

  it('reports every type-specific requirement with the reference wording', () => {
    const wf = parse(readFileSync(join(FIX, 'invalid/missing-fields.yaml'), 'utf8'), 'invalid/missing-fields.yaml');
    expect(brief(wf)).toEqual([
      'steps[0] - bash step must have command, commands, or parallel_commands',
      'steps[1].input - foreach step must have input',
      'steps[1].variable - foreach step must have variable',
      'steps[1].step - foreach step must have step',
      'steps[2].url - http step must have url',
      'steps[3].messages - llm step must have messages or embedding_input',
      "steps[4].step_runner - remote-bash step must have step_runner docker or ssh (got 'host')",
      'steps[5] - function step must have function, functions, or parallel_functions',
      'steps[6].parallel_steps - parallel-steps step must have parallel_steps',
      'steps[7].is_embedding - embedding_input requires is_embedding: true',
      "preferences.heuristics_check - invalid value 'extreme': must be none, basic or advanced",
    ]);
  });

  it('carries file and line of the offending step', () => {
    const wf = parse(readFileSync(join(FIX, 'invalid/missing-fields.yaml'), 'utf8'), 'invalid/missing-fields.yaml');
    const [first] = validateWorkflow(wf);
    expect(formatIssue(first!)).toBe('invalid/missing-fields.yaml:4: steps[0]: bash step must have command, commands, or parallel_commands');
  });

  it('requires at least one step in a module and one module in a flow', () => {
    expect(brief(parse('kind: module\nname: m\n'))).toEqual(['steps - module must have at least one step']);
    expect(brief(parse('kind: flow\nname: f\n'))).toEqual(['modules - flow must have at least one module reference']);
    expect(brief(parse('kind: module\nname: m\nextends: p\n'))).toEqual([]);
  });

  it('requires a path or inline steps for module references, and validates inline steps', () => {
    const wf = parse('kind: flow\nname: f\nmodules:\n  - name: a\n  - name: b\n    steps:\n      - { name: s, type: http }\n  - name: c\n    path: modules/x.yaml\n');
    expect(brief(wf)).toEqual([
      'modules[0].path - module reference path is required (or define inline steps)',
      'modules[1].steps[0].url - http step must have url',
    ]);
  });

  it('checks nested steps of parallel-steps and foreach, and hook steps', () => {
    const wf = parse(`kind: module
name: m
hooks:
  post_scan_steps:
    - name: h
      type: function
steps:
  - name: p
    type: parallel-steps
    parallel_steps:
      - { name: c, type: bash }
  - name: f
    type: foreach
    input: x
    variable: v
    step: { name: i, type: http }
`);
    expect(brief(wf)).toEqual([
      'steps[0].parallel_steps[0] - bash step must have command, commands, or parallel_commands',
      'steps[1].step.url - http step must have url',
      'hooks.post_scan_steps[0] - function step must have function, functions, or parallel_functions',
    ]);
  });

  it('validates programmatic workflows: name, kind, step type', () => {
    const wf = parse('kind: module\nname: m\nsteps:\n  - { name: s, type: bash, command: x }\n');
    const broken = { ...wf, name: '', kind: 'fragment' as never, steps: [{ name: 's', type: undefined as never }, { name: 't', type: 'shell' as never }] };
    expect(brief(broken)).toEqual([
      'name - workflow name is required',
      "kind - invalid kind 'fragment': must be 'module' or 'flow'",
    ]);
    const badSteps = { ...wf, steps: [{ name: 's', type: undefined as never }, { name: 't', type: 'shell' as never }] };
    expect(brief(badSteps)).toEqual(['steps[0].type - step type is required', "steps[1].type - invalid step type 'shell'"]);
  });

  it('accepts an embedding step and a messages step', () => {
    const wf = parse('kind: module\nname: m\nsteps:\n  - { name: e, type: llm, is_embedding: true, embedding_input: [a] }\n  - name: c\n    type: llm\n    messages: [{ role: user, content: hi }]\n');
    expect(validateWorkflow(wf)).toEqual([]);
  });
});
