import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm } from '../../helpers/cli.js';
import { buildTarGz, FAKE_TOOL } from '../../fixtures/registry/archives.js';
import { startFileServer, type FileServer } from '../../fixtures/registry/file-server.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/registry');

let srv: FileServer;
let tmp: string;
let base: string;
let marker: string;
let registryFile: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  base = path.join(tmp, 'base');
  marker = path.join(tmp, 'command-ran');
  srv = await startFileServer({ '/osmfake-tgz_2.0.0.tar.gz': buildTarGz([{ name: 'osmfake-tgz', content: FAKE_TOOL, mode: 0o755 }]) });
  registryFile = path.join(tmp, 'registry.json');
  fs.writeFileSync(registryFile, fs.readFileSync(path.join(FIXTURES, 'registry.json'), 'utf8').replaceAll('__BASE_URL__', srv.url).replaceAll('__MARKER__', marker));
});

afterAll(async () => {
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const osm = (args: string[]) => runOsm(['-b', base, ...args]);

describe('osm install', () => {
  it('list shows the bundled registry (table and JSON)', async () => {
    const table = await osm(['install', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/Name.*Version.*Installed.*Path/);
    expect(table.stdout).toMatch(/subfinder\s+│\s+2\.6\.6/);
    const json = await osm(['install', 'list', '--json']);
    const body = JSON.parse(json.stdout);
    expect(body.registry_source).toBe('bundled');
    expect(Object.keys(body.binaries)).toContain('nuclei');
  });

  it('binary -n downloads from a registry file with a progress line per binary', async () => {
    const r = await osm(['install', 'binary', '-n', 'osmfake-tgz', '--registry-url', registryFile]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const bin = path.join(base, 'external-binaries', 'osmfake-tgz');
    expect(r.stdout).toContain('Installing osmfake-tgz…');
    expect(r.stdout).toContain(`osmfake-tgz → ${bin} (downloaded)`);
    expect(r.stdout).toContain('1 installed, 0 failed');
    expect(execFileSync(bin, { encoding: 'utf8' })).toBe('fake-tool-ok\n');

    const check = await osm(['install', 'binary', '--check', '-n', 'osmfake-tgz,osmfake-zip', '--registry-url', registryFile, '--json']);
    expect(check.code).toBe(1); // osmfake-zip is missing
    expect(JSON.parse(check.stdout).binaries).toEqual([
      { name: 'osmfake-tgz', known: true, installed: true, path: bin, version: '2.0.0' },
      { name: 'osmfake-zip', known: true, installed: false, path: '', version: '1.0.0' },
    ]);
  });

  it('never runs commands of a --registry-url registry without --trust-registry, and fails loudly', async () => {
    const r = await osm(['install', 'binary', '-n', 'osmfake-cmd', '-n', 'nope', '--registry-url', registryFile, '--json']);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout);
    expect(body.failed.map((f: { name: string }) => f.name)).toEqual(['osmfake-cmd', 'nope']);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('runs them when the operator trusts the registry explicitly', async () => {
    const r = await osm(['install', 'binary', '-n', 'osmfake-cmd', '--registry-url', registryFile, '--trust-registry', '--json']);
    // Trusted: its shell valide-command (`touch <marker>`) runs as the install check and exits 0.
    expect(fs.existsSync(marker)).toBe(true);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ installed: ['osmfake-cmd'], details: [{ name: 'osmfake-cmd', action: 'present', path: '' }] });
  });

  it('a trusted registry command installs into the binaries folder', async () => {
    const r = await osm(['install', 'binary', '-n', 'osmfake-made', '--registry-url', registryFile, '--trust-registry', '--json']);
    expect(r.code).toBe(0);
    const bin = path.join(base, 'external-binaries', 'osmfake-made');
    expect(JSON.parse(r.stdout).details).toEqual([{ name: 'osmfake-made', action: 'command', path: bin }]);
    expect(execFileSync(bin, { encoding: 'utf8' })).toBe('made\n');
  });

  it('needs names or --all', async () => {
    const r = await osm(['install', 'binary']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('Error: names array is required for binary installation (or set install_all=true)\n');
  });

  it('workflow <dir> replaces the workflows folder and keeps a backup', async () => {
    const r = await osm(['install', 'workflow', path.join(FIXTURES, 'workflow-pack'), '--json']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.message).toBe('Workflow installed successfully');
    expect(body.indexed.added).toBe(2);
    expect(fs.existsSync(path.join(body.workflow_folder, 'flows', 'pack-flow.yaml'))).toBe(true);
    expect(fs.existsSync(path.join(body.backup, 'flows', 'sample-flow.yaml'))).toBe(true);
    const bad = await osm(['install', 'workflow', path.join(tmp, 'missing')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(`Error: Failed to install workflow: unknown source type: ${path.join(tmp, 'missing')}\n`);
  });
});
