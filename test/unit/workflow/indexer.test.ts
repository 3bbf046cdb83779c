import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asyncSqlite, openStore, type AsyncStore, type Store } from '../../../src/store/index.js';
import { indexWorkflows } from '../../../src/workflow/indexer.js';

let root: string;
let wfDir: string;
let store: Store;
let repos: AsyncStore;

function write(rel: string, text: string, mtimeSec?: number): string {
  const full = path.join(wfDir, rel);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
  if (mtimeSec !== undefined) fs.utimesSync(full, mtimeSec, mtimeSec);
  return full;
}

const MOD_A = `kind: module
name: mod-a
description: first module
tags: recon, web
params:
  - name: target
    required: true
  - name: threads
    required: true
    default: 10
  - name: tag
    generator: randomString(4)
steps:
  - { name: s1, type: bash, command: echo 1 }
  - { name: s2, type: bash, command: echo 2 }
`;

const FLOW = `kind: flow
name: flow-x
modules:
  - { name: a, path: modules/mod-a.yaml }
  - name: inline
    steps:
      - { name: i, type: bash, command: x }
`;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wfDir = path.join(root, 'workflows');
  store = openStore(':memory:');
  repos = asyncSqlite(store);
  write('modules/mod-a.yaml', MOD_A, 1_000_000);
  write('flows/flow-x.yaml', FLOW, 1_000_000);
});

afterEach(() => {
  store.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('indexWorkflows', () => {
  it('adds rows with the listing fields', async () => {
    const r = await indexWorkflows(repos, wfDir);
    expect(r).toEqual({ added: 2, updated: 0, removed: 0, unchanged: 0, errors: [] });
    const row = store.workflows.get('mod-a')!;
    expect(row).toMatchObject({
      name: 'mod-a', kind: 'module', description: 'first module', tags: ['recon', 'web'],
      file_path: path.join(wfDir, 'modules/mod-a.yaml'), step_count: 2, module_count: 0, hidden: false,
      required_params: ['target'],
      params: [
        { name: 'target', required: true, default: '', generator: '' },
        { name: 'threads', required: true, default: '10', generator: '' },
        { name: 'tag', required: false, default: '', generator: 'randomString(4)' },
      ],
    });
    expect(row.checksum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(row.indexed_at))).toBe(false);
    expect(store.workflows.get('flow-x')).toMatchObject({ kind: 'flow', step_count: 3, module_count: 2 });
  });

  it('counts unchanged rows as unchanged, rewrites them with force, and updates changed files', async () => {
    await indexWorkflows(repos, wfDir);
    expect(await indexWorkflows(repos, wfDir)).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 2, errors: [] });
    expect(await indexWorkflows(repos, wfDir, { force: true })).toEqual({ added: 0, updated: 2, removed: 0, unchanged: 0, errors: [] });
    write('modules/mod-a.yaml', MOD_A.replace('first module', 'changed module'), 2_000_000);
    expect(await indexWorkflows(repos, wfDir)).toEqual({ added: 0, updated: 1, removed: 0, unchanged: 1, errors: [] });
    expect(store.workflows.get('mod-a')!.description).toBe('changed module');
  });

  it('removes rows of workflows that disappeared', async () => {
    await indexWorkflows(repos, wfDir);
    fs.rmSync(path.join(wfDir, 'flows/flow-x.yaml'));
    expect(await indexWorkflows(repos, wfDir)).toEqual({ added: 0, updated: 0, removed: 1, unchanged: 1, errors: [] });
    expect(store.workflows.get('flow-x')).toBeUndefined();
  });

  it('keeps the first file of a duplicated name and reports the others; reports invalid files', async () => {
    write('zz/dup.yaml', MOD_A.replace('first module', 'the duplicate'));
    write('broken.yaml', 'kind: module\nname: broken\nsteps:\n  - { name: a, type: nope }\n');
    const r = await indexWorkflows(repos, wfDir);
    expect(r.added).toBe(2);
    expect(r.errors).toEqual([
      expect.stringMatching(/^broken\.yaml: validation error: steps\[0\]\.type - must be one of bash.*broken\.yaml:4\)/),
      "zz/dup.yaml: duplicate workflow name 'mod-a' (already indexed from modules/mod-a.yaml)",
    ]);
    expect(store.workflows.get('mod-a')!.description).toBe('first module');
    expect(store.workflows.get('broken')).toBeUndefined();
  });
});
