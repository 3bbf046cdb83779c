import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findWorkflow, findWorkflowByName, listWorkflowFiles, nearMisses, resolveModulePath } from '../../../src/workflow/lookup.js';
import { OsmError } from '../../../src/errors.js';

let root: string;
let wfDir: string;
let cwd: string;

const mod = (name: string) => `kind: module\nname: ${name}\nsteps:\n  - { name: s, type: bash, command: echo }\n`;

function write(rel: string, text: string, base = wfDir): string {
  const full = path.join(base, rel);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
  return full;
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wfDir = path.join(root, 'workflows');
  cwd = path.join(root, 'cwd');
  fs.mkdirSync(cwd, { recursive: true });
  write('modules/recon.yaml', mod('recon'));
  write('modules/portscan-module.yml', mod('portscan-module'));
  write('flows/general-flow.yaml', 'kind: flow\nname: general\nmodules:\n  - { name: a, path: modules/recon.yaml }\n');
  write('flows/zz/recon.yaml', mod('recon-deeper'));
  write('.hidden/secret.yaml', mod('secret'));
  write('modules/.git/inner.yaml', mod('inner'));
  write('modules/notes.yaml', 'title: not a workflow\n');
  write('modules/readme.txt', mod('txt'));
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('listWorkflowFiles', () => {
  it('walks recursively in lexical order, skipping hidden segments, non-YAML and non-workflows', () => {
    expect(listWorkflowFiles(wfDir).map((f) => path.relative(wfDir, f))).toEqual([
      'flows/general-flow.yaml', 'flows/zz/recon.yaml', 'modules/portscan-module.yml', 'modules/recon.yaml',
    ]);
  });
  it('sees a file that became a workflow, or stopped being one, at the next lookup (what sniffing found is kept per file version)', () => {
    const rel = (files: string[]) => files.map((f) => path.relative(wfDir, f));
    expect(rel(listWorkflowFiles(wfDir))).not.toContain('modules/notes.yaml');
    write('modules/notes.yaml', mod('notes'));
    expect(rel(listWorkflowFiles(wfDir))).toContain('modules/notes.yaml');
    expect(findWorkflow('notes', wfDir, cwd)).toBe(path.join(wfDir, 'modules/notes.yaml'));
    // Same size, same second: a rename onto the path is a new inode.
    const other = write('other.txt', mod('recon').replace('kind: module', 'kind: modulx'));
    fs.renameSync(other, path.join(wfDir, 'modules/recon.yaml'));
    expect(rel(listWorkflowFiles(wfDir))).not.toContain('modules/recon.yaml');
  });

  it('returns nothing for a missing folder', () => {
    expect(listWorkflowFiles(path.join(root, 'nope'))).toEqual([]);
  });
});

describe('findWorkflow by name', () => {
  it('takes the first basename match in walk order', () => {
    expect(findWorkflow('recon', wfDir, cwd)).toBe(path.join(wfDir, 'flows/zz/recon.yaml'));
  });
  it('falls back to NAME-flow and NAME-module', () => {
    expect(findWorkflow('general', wfDir, cwd)).toBe(path.join(wfDir, 'flows/general-flow.yaml'));
    expect(findWorkflow('portscan', wfDir, cwd)).toBe(path.join(wfDir, 'modules/portscan-module.yml'));
  });
  it('never finds workflows in hidden folders', () => {
    expect(() => findWorkflow('secret', wfDir, cwd)).toThrow(OsmError);
  });
  it('explains a miss: searched folder, near names and the list command', () => {
    let err: OsmError | undefined;
    try { findWorkflow('recno', wfDir, cwd); } catch (e) { err = e as OsmError; }
    expect(err?.code).toBe('OSM_ERR_WORKFLOW_NOT_FOUND');
    expect(err?.message.split('\n')).toEqual([
      'workflow not found: recno',
      `searched ${wfDir} (4 workflow files)`,
      'did you mean: recon?',
      "run 'osm workflow list' to see the available workflows",
    ]);
  });
  it('omits suggestions when nothing is close', () => {
    expect(() => findWorkflow('completely-different', wfDir, cwd)).toThrow(/^workflow not found: completely-different\nsearched .*\nrun 'osm workflow list'/);
  });
});

describe('findWorkflow by path', () => {
  it('accepts absolute paths', () => {
    const file = path.join(wfDir, 'modules/recon.yaml');
    expect(findWorkflow(file, wfDir, cwd)).toBe(file);
  });
  it('prefers a cwd-relative file, then the workflows folder', () => {
    const local = write('modules/recon.yaml', mod('local'), cwd);
    expect(findWorkflow('modules/recon.yaml', wfDir, cwd)).toBe(local);
    expect(findWorkflow('flows/general-flow.yaml', wfDir, cwd)).toBe(path.join(wfDir, 'flows/general-flow.yaml'));
  });
  it('does not fall back to the workflows folder for ./ and ../ paths', () => {
    expect(() => findWorkflow('./modules/recon.yaml', wfDir, cwd)).toThrow(/workflow not found: \.\/modules\/recon\.yaml/);
    expect(() => findWorkflow('../nope/recon.yaml', wfDir, cwd)).toThrow(OsmError);
  });
});

describe('findWorkflowByName', () => {
  it('finds names but refuses anything that looks like a path', () => {
    expect(findWorkflowByName('general', wfDir)).toBe(path.join(wfDir, 'flows/general-flow.yaml'));
    expect(() => findWorkflowByName('../workflows/modules/recon.yaml', wfDir)).toThrow(/give a workflow name, not a path/);
    expect(() => findWorkflowByName(path.join(wfDir, 'modules/recon.yaml'), wfDir)).toThrow(OsmError);
  });
});

describe('resolveModulePath', () => {
  it('resolves against cwd first, then the workflows root, and guesses .yaml/.yml', () => {
    expect(resolveModulePath('modules/recon.yaml', wfDir, cwd)).toBe(path.join(wfDir, 'modules/recon.yaml'));
    expect(resolveModulePath('modules/recon', wfDir, cwd)).toBe(path.join(wfDir, 'modules/recon.yaml'));
    expect(resolveModulePath('modules/portscan-module', wfDir, cwd)).toBe(path.join(wfDir, 'modules/portscan-module.yml'));
    const local = write('mine.yaml', mod('mine'), cwd);
    expect(resolveModulePath('./mine', wfDir, cwd)).toBe(local);
  });
  it('errors for missing files, listing what it tried', () => {
    expect(() => resolveModulePath('./modules/recon', wfDir, cwd)).toThrow(/looked for: .*cwd\/modules\/recon, .*recon\.yaml, .*recon\.yml/);
    expect(() => resolveModulePath('modules/ghost', wfDir, cwd)).toThrow(OsmError);
    expect(() => resolveModulePath('modules', wfDir, cwd)).toThrow(OsmError); // a folder is not a module
  });
});

describe('nearMisses', () => {
  it('ranks by edit distance and substring, at most 3', () => {
    expect(nearMisses('recon', ['recon-flow', 'rekon', 'subdomain', 'reco', 'xrecon', 'portscan'])).toEqual(['reco', 'recon-flow', 'rekon']);
  });
});
