/**
 * The bundled workflows (workflows/): every file passes `osm workflow validate` without an issue,
 * and every module and flow has a dry run. For the dry runs the scanners are empty stand-ins on
 * PATH (nothing executes in a dry run; the dependency check only looks for the executables).
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const WF = join(ROOT, 'workflows');
const TOOLS = ['subfinder', 'dnsx', 'naabu', 'nmap', 'httpx', 'whatweb', 'ffuf', 'gobuster', 'katana', 'sslscan', 'testssl.sh', 'nuclei'];
let base: string;
let stubs: string;
let cleanup: () => void;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : []));
}
const workflows = yamlFiles(WF).map((file) => ({ file, doc: parse(readFileSync(file, 'utf8')) as { kind: string; name: string; steps?: { name: string }[]; modules?: { name: string }[]; dependencies?: { target_types?: string[]; commands?: string[] } } }));

/** A target of the first type the workflow accepts. */
function targetFor(types: string[] = []): string {
  const t = types[0] ?? 'domain';
  return { domain: 'example.com', subdomain: 'www.example.com', url: 'https://app.example.com', ip: '192.0.2.10', cidr: '192.0.2.0/28', string: 'app.example.com:443' }[t] ?? 'example.com';
}

const osm = (args: string[], path = `${stubs}:${process.env.PATH}`) => runOsm(['-b', base, '-F', WF, ...args], { env: { PATH: path } });

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-bundled-'));
  stubs = join(base, 'stub-bin');
  mkdirSync(stubs);
  for (const t of TOOLS) {
    writeFileSync(join(stubs, t), '#!/bin/sh\necho "stand-in for a dry run only" >&2\nexit 99\n');
    chmodSync(join(stubs, t), 0o755);
  }
});
afterAll(() => cleanup());

describe('bundled workflows', () => {
  it('ship the recon modules and the four flows next to the samples', () => {
    const names = workflows.map((w) => w.doc.name).sort();
    expect(names).toEqual(expect.arrayContaining(['general', 'fast', 'web', 'network', 'sample-flow', 'sample-recon', 'sample-foreach']));
    expect(workflows.filter((w) => w.doc.kind === 'module' && w.file.includes('/modules/recon/')).length).toBe(13);
  });

  it('every file passes osm workflow validate without any issue', async () => {
    const r = await osm(['workflow', 'validate', WF, '--json']);
    expect(r.code, r.stdout).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ total: workflows.length, passed: workflows.length, failed: 0 });
    expect(report.results.flatMap((x: { issues: unknown[] }) => x.issues)).toEqual([]);
  });

  it('every recon module declares the scanner it runs', () => {
    for (const w of workflows.filter((x) => x.file.includes('/modules/recon/') && x.doc.name !== 'recon-report')) {
      const commands = w.doc.dependencies?.commands ?? [];
      expect(commands.length, w.doc.name).toBe(1);
      expect(TOOLS, w.doc.name).toContain(commands[0]);
      expect(readFileSync(w.file, 'utf8'), w.doc.name).toMatch(new RegExp(`db_import_|db_import_asset_from_file|db_import_vuln_from_file`));
    }
  });

  for (const w of workflows) {
    it(`${w.doc.kind} ${w.doc.name}: dry run`, async () => {
      const flag = w.doc.kind === 'flow' ? '-f' : '-m';
      const target = targetFor(w.doc.dependencies?.target_types);
      const r = await osm(['run', flag, w.doc.name, '-t', target, '--dry-run']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('DRY-RUN');
      for (const s of w.doc.steps ?? []) expect(r.stdout).toContain(s.name);
      for (const m of w.doc.modules ?? []) expect(r.stdout).toContain(`: ${m.name} (`);
      if (w.file.includes('/modules/recon/')) for (const tool of w.doc.dependencies?.commands ?? []) expect(r.stdout).toContain(tool);
    });
  }

  it('a flow run without any scanner installed skips each module, says which tool is missing, and still writes the report', async () => {
    const r = await osm(['run', '-f', 'fast', '-t', 'example.com'], join(base, 'no-tools-here'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Module subdomain-enum skipped (condition is false: command_exists('subfinder'))");
    expect(r.stdout).toContain("Module vuln-nuclei skipped (condition is false: command_exists('nuclei'))");
    expect(r.stdout).toMatch(/✔ completed\s+│ recon-report/);
    const json = JSON.parse(readFileSync(join(base, 'workspaces/example.com/report/report.json'), 'utf8'));
    expect(json).toMatchObject({ workspace: 'example.com', summary: { assets: 0, findings: 0 } });
  });

  it('a dry run names the tools that are not installed: a module fails, a flow lists what it would skip', async () => {
    const bare = '/usr/bin:/bin';
    const mod = await osm(['run', '-m', 'vuln-nuclei', '-t', 'https://app.example.com', '--dry-run'], bare);
    expect(mod.code).toBe(1);
    expect(mod.stderr).toContain('required command not found: nuclei');
    const flow = await osm(['run', '-f', 'general', '-t', 'example.com', '--dry-run'], join(base, 'no-such-dir'));
    expect(flow.code, flow.stderr).toBe(0);
    expect(flow.stdout).toContain('⚠ Tools not installed');
    expect(flow.stdout).toContain('  subfinder: needed by subdomain-enum');
    expect(flow.stdout).toContain('  nuclei: needed by vuln-nuclei');
  });
});
