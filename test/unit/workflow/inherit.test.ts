import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseWorkflowText } from '../../../src/workflow/parse.js';
import { resolveInheritance } from '../../../src/workflow/inherit.js';
import { WorkflowLoader } from '../../../src/workflow/loader.js';
import type { Workflow } from '../../../src/workflow/types.js';
import { OsmError } from '../../../src/errors.js';

const FIX = join(import.meta.dirname, '../../fixtures/workflows');
const EXT = join(FIX, 'extends');

function parse(text: string, file: string): Workflow {
  const r = parseWorkflowText(text, file);
  if (!r.workflow) throw new Error(r.issues.map((i) => i.message).join('\n'));
  return r.workflow;
}

const PARENT = parse(`kind: module
name: parent
description: parent description
tags: p
params:
  - name: threads
    default: "10"
  - name: rate
    default: "100"
    required: true
steps:
  - { name: one, type: bash, command: echo 1 }
  - { name: two, type: bash, command: echo 2 }
  - { name: three, type: bash, command: echo 3 }
`, '/virtual/parent.yaml');

function child(override: string, extra = ''): Workflow {
  return parse(`kind: module\nname: child\nextends: parent\n${extra}override:\n${override}`, '/virtual/child.yaml');
}

const resolveWith = (wf: Workflow) => resolveInheritance(wf, (name) => {
  if (name !== 'parent') throw new Error(`unexpected parent ${name}`);
  return PARENT;
});

const names = (wf: Workflow) => wf.steps.map((s) => s.name);

describe('resolveInheritance: override modes', () => {
  it('append (default) adds after the parent steps', () => {
    const wf = resolveWith(child('  steps:\n    steps:\n      - { name: four, type: bash, command: x }\n'));
    expect(names(wf)).toEqual(['one', 'two', 'three', 'four']);
  });

  it('prepend adds before', () => {
    const wf = resolveWith(child('  steps:\n    mode: prepend\n    steps:\n      - { name: zero, type: bash, command: x }\n'));
    expect(names(wf)).toEqual(['zero', 'one', 'two', 'three']);
  });

  it('replace discards the parent list', () => {
    const wf = resolveWith(child('  steps:\n    mode: replace\n    steps:\n      - { name: only, type: bash, command: x }\n'));
    expect(names(wf)).toEqual(['only']);
  });

  it('merge replaces by name, removes, and appends only new names', () => {
    const wf = resolveWith(child(`  steps:
    mode: merge
    replace:
      - { name: two, type: bash, command: echo TWO }
      - { name: ghost, type: bash, command: echo ghost }
    remove: [three]
    steps:
      - { name: one, type: bash, command: echo not-replaced }
      - { name: four, type: bash, command: echo 4 }
`));
    expect(names(wf)).toEqual(['one', 'two', 'four']);
    expect(wf.steps[0]!.command).toBe('echo 1');
    expect(wf.steps[1]!.command).toBe('echo TWO');
  });

  it('rejects an invalid mode at parse time', () => {
    const r = parseWorkflowText('kind: module\nname: c\nextends: parent\noverride:\n  steps:\n    mode: shuffle\n', 'c.yaml');
    expect(r.issues).toContainEqual(expect.objectContaining({ path: 'override.steps.mode', message: 'must be one of append, prepend, replace, merge', line: 6 }));
  });

  it('patches params field by field, supports the scalar shorthand and appends new params', () => {
    const wf = resolveWith(child(`  params:
    threads: 5
    rate: { required: false }
    fresh: { default: new, required: true, generator: uuid() }
`));
    expect(wf.params).toEqual([
      { name: 'threads', type: 'string', default: 5, required: false },
      { name: 'rate', type: 'string', default: '100', required: false },
      { name: 'fresh', type: 'string', default: 'new', required: true, generator: 'uuid()' },
    ]);
    // the parent object is not mutated
    expect(PARENT.params[0]!.default).toBe('10');
    expect(PARENT.params[1]!.required).toBe(true);
  });

  it('takes name always, description/tags when set, and ignores the child own steps/params', () => {
    const wf = resolveWith(child('  params: { threads: 1 }\n', 'steps:\n  - { name: mine, type: bash, command: x }\nparams:\n  - name: mine\n'));
    expect(wf.name).toBe('child');
    expect(wf.description).toBe('parent description');
    expect(wf.tags).toEqual(['p']);
    expect(names(wf)).toEqual(['one', 'two', 'three']);
    expect(wf.params.map((p) => p.name)).toEqual(['threads', 'rate']);
    expect(wf.file_path).toBe('/virtual/child.yaml');
    expect(wf.extends).toBe('parent');
    const described = resolveWith(parse('kind: module\nname: c2\ndescription: mine\ntags: a,b\nextends: parent\n', '/virtual/c2.yaml'));
    expect(described.description).toBe('mine');
    expect(described.tags).toEqual(['a', 'b']);
  });
});

describe('inheritance through the loader (fixtures)', () => {
  const loader = new WorkflowLoader(FIX);

  it('resolves a chain c <- b <- a', () => {
    const wf = loader.loadFile(join(EXT, 'chain-a.yaml'));
    expect(wf.name).toBe('chain-a');
    expect(wf.description).toBe('top of the chain');
    expect(wf.tags).toEqual(['base']);
    expect(names(wf)).toEqual(['step-a', 'step-c', 'step-b']);
    expect(wf.params.map((p) => [p.name, p.default, p.required])).toEqual([
      ['param-c', 'c', false], ['shared', 'from-a', false], ['param-b', 'b', false], ['param-a', 'a', true],
    ]);
    expect(wf.dependencies.commands).toEqual(['echo', 'cat']);
    expect(wf.dependencies.files).toEqual(['x.txt']);
    expect(wf.preferences.heuristics_check).toBe('none');
    expect(wf.runner_config).toEqual({ env: { A: '1', B: '2' }, volumes: ['/a:/a', '/b:/b'], image: 'alpine' });
  });

  it('detects circular inheritance', () => {
    expect(() => loader.loadFile(join(EXT, 'circular-a.yaml'))).toThrow('circular inheritance detected: circular-a -> circular-b -> circular-a');
  });

  it('refuses a kind mismatch', () => {
    let err: unknown;
    try { loader.loadFile(join(EXT, 'kind-mismatch.yaml')); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(OsmError);
    expect((err as OsmError).message).toContain('kind mismatch: child kind-mismatch is module but parent base-flow is flow');
  });

  it('applies merge mode from the fixture', () => {
    const wf = loader.loadFile(join(EXT, 'merge-mode.yaml'));
    expect(names(wf)).toEqual(['probe', 'last', 'extra']);
    expect(wf.steps[0]!.command).toBe('echo "fast probe {{Target}}"');
    expect(wf.params).toEqual([{ name: 'threads', type: 'string', default: '10', required: false }]);
  });

  it('merges flow modules and replaces triggers', () => {
    const wf = loader.loadFile(join(EXT, 'flow-child.yaml'));
    expect(wf.modules.map((m) => m.name)).toEqual(['m1', 'm3', 'm4']);
    expect(wf.triggers).toEqual([{ name: 't-new', on: 'event', event: { topic: 'x.*' }, enabled: true }]);
  });

  it('rejects override.steps in a flow', () => {
    expect(() => loader.loadFile(join(EXT, 'steps-in-flow.yaml'))).toThrow(/override\.steps/);
  });

  it('reports a parent that cannot be found', () => {
    const wf = parse('kind: module\nname: orphan\nextends: no-such-parent\n', join(EXT, 'orphan.yaml'));
    expect(() => resolveInheritance(wf, (name) => { throw new OsmError('X', 404, `workflow not found: ${name}`); })).toThrow('workflow not found: no-such-parent');
  });
});
