import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { WorkflowLoader } from '../../../src/workflow/loader.js';
import { OsmError } from '../../../src/errors.js';

let root: string;
let wfDir: string;

function write(rel: string, text: string, mtimeSec?: number): string {
  const full = path.join(wfDir, rel);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
  if (mtimeSec !== undefined) fs.utimesSync(full, mtimeSec, mtimeSec);
  return full;
}

const mod = (name: string, cmd = 'echo') => `kind: module\nname: ${name}\nsteps:\n  - { name: s, type: bash, command: ${cmd} }\n`;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wfDir = path.join(root, 'workflows');
  fs.mkdirSync(wfDir);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('WorkflowLoader cache', () => {
  it('returns the cached workflow while the file is unchanged and re-parses when its mtime changes', () => {
    const file = write('modules/a.yaml', mod('a', 'echo one'), 1_000_000);
    const loader = new WorkflowLoader(wfDir, { cwd: root });
    const first = loader.load('a');
    expect(loader.load('a')).toBe(first);
    // same size, different content: only the mtime tells them apart
    write('modules/a.yaml', mod('a', 'echo two'), 2_000_000);
    const second = loader.load('a');
    expect(second).not.toBe(first);
    expect(second.steps[0]!.command).toBe('echo two');
    expect(loader.loadFile(file)).toBe(second);
  });

  it('re-resolves a child when its parent changes', () => {
    write('base.yaml', mod('base', 'echo v1'), 1_000_000);
    write('child.yaml', 'kind: module\nname: child\nextends: base\n', 1_000_000);
    const loader = new WorkflowLoader(wfDir, { cwd: root });
    expect(loader.load('child').steps[0]!.command).toBe('echo v1');
    write('base.yaml', mod('base', 'echo v2'), 2_000_000);
    expect(loader.load('child').steps[0]!.command).toBe('echo v2');
  });
});

describe('WorkflowLoader checksum', () => {
  it('hashes the bytes on disk, even when they are not valid UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from(mod('bin')), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a])]);
    const file = path.join(wfDir, 'bin.yaml');
    fs.writeFileSync(file, bytes);
    const wf = new WorkflowLoader(wfDir, { cwd: root }).loadFile(file);
    expect(wf.checksum).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
  });
});

describe('WorkflowLoader errors', () => {
  it('throws workflowInvalid listing every error in the reference wording, with file and line', () => {
    write('bad.yaml', 'kind: module\nname: bad\nsteps:\n  - { name: a, type: bash }\n  - { name: b, type: http }\n');
    let err: OsmError | undefined;
    try { new WorkflowLoader(wfDir, { cwd: root }).load('bad'); } catch (e) { err = e as OsmError; }
    expect(err?.code).toBe('OSM_ERR_WORKFLOW_INVALID');
    const file = path.join(wfDir, 'bad.yaml');
    expect(err?.message).toBe([
      `validation error: steps[0] - bash step must have command, commands, or parallel_commands (${file}:4)`,
      `validation error: steps[1].url - http step must have url (${file}:5)`,
    ].join('\n'));
  });

  it('throws workflowNotFound for unknown names', () => {
    expect(() => new WorkflowLoader(wfDir, { cwd: root }).load('ghost')).toThrow(/^workflow not found: ghost/);
  });

  it('check() reports problems without throwing, including missing flow modules', () => {
    const flow = write('flows/f.yaml', 'kind: flow\nname: f\nmodules:\n  - name: m\n    path: modules/missing\n');
    const loader = new WorkflowLoader(wfDir, { cwd: root });
    const result = loader.check(flow);
    expect(result.workflow?.name).toBe('f');
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ severity: 'error', path: 'modules[0].path', line: 5, rule: 'module-path' });
    expect(result.issues[0]!.message).toMatch(/^workflow not found: modules\/missing; looked for:/);
  });
});

describe('WorkflowLoader modules of a flow', () => {
  beforeEach(() => {
    write('modules/one.yaml', 'kind: module\nname: one\nsteps:\n  - { name: a, type: bash, command: x }\n  - { name: b, type: bash, command: y }\n');
    write('flows/other-flow.yaml', 'kind: flow\nname: other\nmodules:\n  - { name: x, path: modules/one.yaml }\n');
    write('flows/main-flow.yaml', `kind: flow
name: main
modules:
  - { name: file, path: modules/one }
  - name: inline
    description: inline module
    steps:
      - { name: i1, type: bash, command: x }
      - { name: i2, type: bash, command: x }
      - { name: i3, type: bash, command: x }
  - { name: broken, path: modules/nope.yaml }
  - { name: wrong-kind, path: flows/other-flow.yaml }
`);
  });

  it('loads file modules, turns inline steps into a synthetic module and reports the rest', () => {
    const loader = new WorkflowLoader(wfDir, { cwd: root });
    const flow = loader.load('main');
    const mods = loader.flowModules(flow);
    expect(mods.map((m) => m.workflow?.name ?? `error: ${m.error?.split('\n')[0]}`)).toEqual([
      'one',
      'inline',
      'error: workflow not found: modules/nope.yaml',
      'error: module reference wrong-kind: flows/other-flow.yaml is a flow, not a module',
    ]);
    const inline = loader.loadModuleRef(flow.modules[1]!, flow);
    expect(inline).toMatchObject({ kind: 'module', name: 'inline', description: 'inline module', file_path: '', runner: 'host' });
    expect(inline.steps.map((s) => s.name)).toEqual(['i1', 'i2', 'i3']);
  });

  it('counts steps: a module its steps, a flow the sum with 1 per unloadable module', () => {
    const loader = new WorkflowLoader(wfDir, { cwd: root });
    expect(loader.stepCount(loader.load('one'))).toBe(2);
    expect(loader.stepCount(loader.load('main'))).toBe(2 + 3 + 1 + 1);
  });
});
