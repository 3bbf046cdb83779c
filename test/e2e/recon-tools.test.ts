/**
 * The bundled recon modules run the REAL scanners from Debian (nmap, whatweb, ffuf, gobuster,
 * sslscan) through the built CLI against servers this test starts on loopback, and the exact
 * assets and findings stored are asserted. A missing tool skips its test with a visible message
 * locally and fails it under CI=true (.ci/run installs the tools).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandExists } from '../../src/engine/deps-check.js';
import { runOsm, ROOT } from '../helpers/cli.js';
import { startTlsTarget, startWebTarget, WORDLIST, type Target } from '../helpers/recon-targets.js';
import { tempDir } from '../helpers/tmp.js';

const WF = join(ROOT, 'workflows');
const CI = process.env.CI === 'true';
let web: Target;
let tls: Target;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  web = await startWebTarget();
  tls = await startTlsTarget();
});
afterAll(async () => {
  await web?.close();
  await tls?.close();
  while (cleanups.length) cleanups.pop()!();
});

/** `it` when every tool is installed; else a skip that says so (a failure under CI). */
function withTools(tools: string[], name: string, fn: () => Promise<void>, timeout = 120_000): void {
  const missing = tools.filter((t) => !commandExists(t, process.env.PATH ?? ''));
  if (missing.length === 0) {
    it(name, fn, timeout);
  } else if (CI) {
    it(name, () => {
      throw new Error(`CI needs ${missing.join(', ')} (.ci/run installs them with apt-get)`);
    });
  } else {
    process.stderr.write(`⚠ skipping "${name}": ${missing.join(', ')} not installed (apt-get install ${missing.join(' ')})\n`);
    it.skip(`${name} [needs ${missing.join(', ')}]`, fn);
  }
}

/** A fresh base folder; `osm` runs the built CLI on it with the bundled workflows. */
function freshBase() {
  const t = tempDir('osm-recon-');
  cleanups.push(t.cleanup);
  const osm = (args: string[]) => runOsm(['-b', t.dir, '-F', WF, ...args], { timeoutMs: 110_000 });
  const json = async (args: string[]) => {
    const r = await osm([...args, '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { data: Record<string, unknown>[] };
  };
  return { dir: t.dir, osm, assets: (ws: string) => json(['assets', '-w', ws, '--limit', '1000']), vulns: (ws: string) => json(['vulns', '-w', ws, '--limit', '1000']) };
}

async function runModule(osm: (a: string[]) => ReturnType<typeof runOsm>, args: string[]): Promise<string> {
  const r = await osm(['run', ...args]);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  expect(r.stdout).toContain('Status: completed');
  return r.stdout;
}

const urls = (rows: Record<string, unknown>[]) => rows.map((a) => [a.url, a.status_code]).sort((x, y) => String(x[0]).localeCompare(String(y[0])));

describe('recon modules on real tools', () => {
  withTools(['nmap'], 'service-scan (nmap -sV): the host, its open port and the service nmap identified', async () => {
    const b = freshBase();
    await runModule(b.osm, ['-m', 'service-scan', '-t', '127.0.0.1', '-p', `ports=${web.port}`]);
    const rows = (await b.assets('127.0.0.1')).data;
    expect(rows.map((a) => [a.asset_type, a.asset_value, a.open_ports]).sort()).toEqual([
      ['ip', '127.0.0.1', [`${web.port}/tcp`]],
      ['port', `127.0.0.1:${web.port}`, [`${web.port}/tcp`]],
    ]);
    const port = rows.find((a) => a.asset_type === 'port')!;
    expect(port).toMatchObject({ remarks: 'http', tech: ['Apache httpd 2.4.41'], host_ip: '127.0.0.1', source: 'nmap' });
    expect(readFileSync(join(b.dir, 'workspaces/127.0.0.1/recon/ports.txt'), 'utf8')).toBe(`127.0.0.1:${web.port}\n`);
  });

  withTools(['whatweb'], 'web-fingerprint (whatweb): title, server and technologies of the site', async () => {
    const b = freshBase();
    await runModule(b.osm, ['-m', 'web-fingerprint', '-t', web.url]);
    const rows = (await b.assets('127.0.0.1')).data;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      asset_type: 'http', asset_value: '127.0.0.1', url: web.url, status_code: 200, title: 'OSM Test Site', host_ip: '127.0.0.1',
      remarks: 'Apache/2.4.41 (Ubuntu)', tech: ['Apache:2.4.41', 'PHP:7.4.3', 'WordPress:5.8'], source: 'whatweb',
    });
  });

  const found = () => [
    [`${web.url}/admin`, 200],
    [`${web.url}/backup.zip`, 200],
    [`${web.url}/login`, 301],
    [`${web.url}/robots.txt`, 200],
  ];

  withTools(['ffuf'], 'content-ffuf (ffuf): exactly the known paths of the wordlist, nothing else; a rerun adds no row', async () => {
    const b = freshBase();
    // Few threads and a long timeout: the target is served by this test process, which shares two
    // cores with every other suite; a request ffuf gives up on is a path it never reports.
    const args = ['-m', 'content-ffuf', '-t', web.url, '-p', `wordlist=${WORDLIST}`, '-p', 'ffuf_threads=4', '-p', 'ffuf_flags=-timeout 60'];
    await runModule(b.osm, args);
    const rows = (await b.assets('127.0.0.1')).data;
    expect(urls(rows)).toEqual(found());
    expect(rows.find((a) => String(a.url).endsWith('/login'))).toMatchObject({ remarks: 'redirect: /login/', source: 'ffuf' });
    await runModule(b.osm, args);
    expect((await b.assets('127.0.0.1')).data).toHaveLength(4);
  });

  withTools(['gobuster'], 'content-gobuster (gobuster dir): the same paths', async () => {
    const b = freshBase();
    await runModule(b.osm, ['-m', 'content-gobuster', '-t', web.url, '-p', `wordlist=${WORDLIST}`]);
    const rows = (await b.assets('127.0.0.1')).data;
    expect(urls(rows)).toEqual(found());
    expect(new Set(rows.map((a) => a.source))).toEqual(new Set(['gobuster']));
  });

  withTools(['sslscan'], 'tls-sslscan (sslscan): TLS 1.0/1.1 and the expired self-signed certificate are findings', async () => {
    const b = freshBase();
    await runModule(b.osm, ['-m', 'tls-sslscan', '-t', `127.0.0.1:${tls.port}`]);
    const v = (await b.vulns('127.0.0.1')).data;
    expect(v.map((x) => [x.vuln_info, x.severity, x.asset_value]).sort()).toEqual([
      ['sslscan-cert-expired', 'high', `127.0.0.1:${tls.port}`],
      ['sslscan-cert-self-signed', 'medium', `127.0.0.1:${tls.port}`],
      ['sslscan-tls10-enabled', 'medium', `127.0.0.1:${tls.port}`],
      ['sslscan-tls11-enabled', 'low', `127.0.0.1:${tls.port}`],
    ]);
    expect(v.find((x) => x.vuln_info === 'sslscan-cert-expired')!.vuln_poc).toBe('subject osm-test.local, valid from Jan  1 00:00:00 2020 GMT to Feb  1 00:00:00 2020 GMT');
    const port = (await b.assets('127.0.0.1')).data[0]!;
    expect(port).toMatchObject({ asset_type: 'port', asset_value: `127.0.0.1:${tls.port}`, open_ports: [`${tls.port}/tcp`] });
  });

  withTools(['nmap', 'whatweb'], 'flow network: nmap finds the web service, whatweb fingerprints it, the report lists both', async () => {
    const b = freshBase();
    const out = await runModule(b.osm, ['-f', 'network', '-t', '127.0.0.1', '-p', `ports=${web.port}`]);
    expect(out).toMatch(/✔ completed\s+│ service-scan/);
    expect(out).toMatch(/✔ completed\s+│ web-fingerprint/);
    const rows = (await b.assets('127.0.0.1')).data;
    expect(rows.map((a) => [a.asset_type, a.asset_value, a.url]).sort()).toEqual([
      ['http', '127.0.0.1', web.url],
      ['ip', '127.0.0.1', ''],
      ['port', `127.0.0.1:${web.port}`, ''],
    ]);
    expect(rows.find((a) => a.asset_type === 'http')).toMatchObject({ title: 'OSM Test Site', status_code: 200 });
    const data = JSON.parse(readFileSync(join(b.dir, 'workspaces/127.0.0.1/report/report.json'), 'utf8'));
    expect(data.summary.assets_by_type).toEqual({ http: 1, ip: 1, port: 1 });
  });

  withTools(['whatweb', 'ffuf'], 'flow web: fingerprint and content discovery run, absent tools are skipped, the report is written', async () => {
    const b = freshBase();
    const out = await runModule(b.osm, ['-f', 'web', '-t', web.url, '-p', `wordlist=${WORDLIST}`]);
    expect(out).toMatch(/◌ skipped\s+│ content-gobuster/);
    expect(out).toMatch(/✔ completed\s+│ recon-report/);
    expect(urls((await b.assets('127.0.0.1')).data)).toEqual([[web.url, 200], ...found()]);
    const report = join(b.dir, 'workspaces/127.0.0.1/report');
    for (const f of ['report.html', 'report.md', 'report.json']) expect(existsSync(join(report, f)), f).toBe(true);
    const html = readFileSync(join(report, 'report.html'), 'utf8');
    expect(html).toContain('<h1>Recon report: 127.0.0.1</h1>');
    expect(html).toContain('OSM Test Site');
    const data = JSON.parse(readFileSync(join(report, 'report.json'), 'utf8'));
    expect(data.summary.assets_by_type).toEqual({ http: 5 });
    expect(data.changes.assets.summary.total_added).toBe(5);
    const cli = await b.osm(['report', '-w', '127.0.0.1', '--format', 'md']);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('| http | 5 |');
  });
});
