/** `osm import <tool> <file> -w <workspace>` through the built CLI. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { TOOL_IMPORTERS } from '../../src/ingest/index.js';
import { IMPORT_TOOLS_HELP } from '../../src/cli/commands/import.js';

const fx = (name: string) => join(ROOT, 'test/fixtures/tools', name);
let base: string;
let cleanup: () => void;
const osm = (args: string[]) => runOsm(['-b', base, ...args]);

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-import-'));
});
afterAll(() => cleanup());

describe('osm import', () => {
  it('prints the counts; a second import of the same file inserts nothing', async () => {
    const first = await osm(['import', 'nmap', fx('nmap.xml'), '-w', 'lab']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('read: 1  inserted: 5  updated: 0  unchanged: 0  skipped: 0  invalid: 0');
    const again = await osm(['import', 'nmap', fx('nmap.xml'), '-w', 'lab', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ workspace: 'lab', tool: 'nmap', read: 1, new: 0, updated: 0, unchanged: 5, errors: 0 });
    const assets = JSON.parse((await osm(['assets', '-w', 'lab', '--json'])).stdout);
    expect(assets.total).toBe(5);
  });

  it('sslscan findings land in osm vulns; gobuster path lines use --base-url', async () => {
    expect((await osm(['import', 'sslscan', fx('sslscan.xml'), '-w', 'tls'])).code).toBe(0);
    const v = JSON.parse((await osm(['vulns', '-w', 'tls', '--json'])).stdout);
    expect(v.data.map((x: { vuln_info: string }) => x.vuln_info).sort()).toEqual(['sslscan-cert-expired', 'sslscan-cert-self-signed', 'sslscan-tls10-enabled', 'sslscan-tls11-enabled']);
    const g = await osm(['import', 'gobuster', fx('gobuster.txt'), '-w', 'web', '--base-url', 'http://127.0.0.1:46515', '--json']);
    expect(JSON.parse(g.stdout)).toMatchObject({ new: 4, errors: 0 });
  });

  it('an unknown tool is a usage error listing the supported tools', async () => {
    const r = await osm(['import', 'nessus', fx('nmap.xml'), '-w', 'lab']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`unknown tool 'nessus': supported tools are ${TOOL_IMPORTERS.map((t) => t.name).join(', ')}`);
  });

  it('a file with no importable record exits 1 and names the bad records; a missing file is an error', async () => {
    const bad = join(base, 'bad.jsonl');
    writeFileSync(bad, 'not json\n{"broken": \n');
    const r = await osm(['import', 'nuclei', bad, '-w', 'lab']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('invalid: 2');
    expect(r.stdout).toMatch(/record 1: invalid JSON/);
    const missing = await osm(['import', 'ffuf', join(base, 'nope.json'), '-w', 'lab']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Import file not found');
    const noWs = await osm(['import', 'ffuf', fx('ffuf.json')]);
    expect(noWs.code).not.toBe(0);
    expect(noWs.stderr).toMatch(/--workspace/);
    const badWs = await osm(['import', 'ffuf', fx('ffuf.json'), '-w', '../etc']);
    expect(badWs.code).toBe(1);
    expect(badWs.stderr).toContain('Invalid workspace name');
  });

  it('big files show progress on stderr', async () => {
    const big = join(base, 'big.jsonl');
    const line = (i: number) => JSON.stringify({ 'template-id': `t-${i}`, host: `h${i % 50}.example.com`, info: { name: 'x'.repeat(300), severity: 'low' } });
    writeFileSync(big, `${Array.from({ length: 14_000 }, (_, i) => line(i)).join('\n')}\n`);
    const r = await osm(['import', 'nuclei', big, '-w', 'big', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('◆ importing: 100%');
    expect(JSON.parse(r.stdout)).toMatchObject({ new: 14_000, errors: 0 });
  });

  it('osm report writes html, md or json; bad formats and unknown workspaces are clear errors', async () => {
    const out = join(base, 'out', 'lab.html');
    const r = await osm(['report', '-w', 'lab', '--format', 'html', '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`report of lab written to ${out}`);
    const html = (await import('node:fs')).readFileSync(out, 'utf8');
    expect(html).toContain('<h3>port (4)</h3>');
    const json = await osm(['report', '-w', 'lab', '--format', 'json']);
    expect(JSON.parse(json.stdout).summary).toMatchObject({ assets: 5, assets_by_type: { ip: 1, port: 4 } });
    const bad = await osm(['report', '-w', 'lab', '--format', 'pdf']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("unknown report format 'pdf': use html, md or json");
    const none = await osm(['report', '-w', 'no-such-ws']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Workspace not found: no-such-ws');
    const folder = join(base, 'out');
    const intoFolder = await osm(['report', '-w', 'lab', '--format', 'md', '-o', folder]);
    expect(intoFolder.code).toBe(1);
    expect(intoFolder.stderr).toContain(`-o ${folder} is a folder: give the report's file name (e.g. ${join(folder, 'lab.md')})`);
    expect((await import('node:fs')).readdirSync(base).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const since = await osm(['report', '-w', 'lab', '--format', 'md', '--since', 'yesterday']);
    expect(since.code).toBe(1);
    expect(since.stderr).toContain('invalid --since time format');
  });

  it('--help lists every importer of the table', async () => {
    for (const t of TOOL_IMPORTERS) expect(IMPORT_TOOLS_HELP).toMatch(new RegExp(`^  ${t.name} `, 'm'));
    const r = await osm(['import', '--help']);
    expect(r.stdout).toContain('sslscan    XML (sslscan --xml=out.xml host:port)');
  });
});
