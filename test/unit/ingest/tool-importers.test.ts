/**
 * The tool importers on output files written by the real tools (nmap, whatweb, ffuf, gobuster,
 * sslscan, run against loopback servers — see test/fixtures/tools/README.md) and on files in the
 * documented formats of the tools not installed here. Each test asserts the exact rows stored and
 * that importing the same file again adds no row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/index.js';
import { importToolFile, importToolFileSync, TOOL_IMPORTERS, toolImporter, type ToolImportStats } from '../../../src/ingest/index.js';
import { ROOT } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const FX = path.join(ROOT, 'test/fixtures/tools');
const fx = (name: string) => path.join(FX, name);
const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});
function store(): Store {
  const s = openStore(':memory:');
  cleanups.push(() => s.close());
  return s;
}
function tmpFile(name: string, text: string): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const p = path.join(t.dir, name);
  fs.writeFileSync(p, text);
  return p;
}
const all = { offset: 0, limit: 1000 };
const assets = (s: Store) =>
  s.assets
    .list({ workspace: 'ws' }, all)
    .data.map((a) => ({ type: a.asset_type, value: a.asset_value, url: a.url, status: a.status_code, ports: a.open_ports, tech: a.tech, remarks: a.remarks, host_ip: a.host_ip, a: a.a, source: a.source }))
    .sort((x, y) => `${x.value} ${x.url}`.localeCompare(`${y.value} ${y.url}`));
const vulns = (s: Store) =>
  s.vulns
    .list({ workspace: 'ws' }, all)
    .data.map((v) => ({ id: v.vuln_info, severity: v.severity, asset: v.asset_value, matcher: v.matcher_name, title: v.vuln_title, poc: v.vuln_poc }))
    .sort((x, y) => `${x.id} ${x.matcher}`.localeCompare(`${y.id} ${y.matcher}`));

/** Imports twice; the second import must add nothing and change nothing. */
async function importTwice(s: Store, tool: string, file: string, opts = {}): Promise<ToolImportStats> {
  const first = await importToolFile(s, 'ws', toolImporter(tool)!, file, opts);
  const rows = [assets(s).length, vulns(s).length];
  const again = await importToolFile(s, 'ws', toolImporter(tool)!, file, opts);
  expect(again).toMatchObject({ new: 0, updated: 0, unchanged: first.new + first.updated + first.unchanged, errors: first.errors });
  expect([assets(s).length, vulns(s).length]).toEqual(rows);
  return first;
}

describe('nmap XML (real nmap 7.93 -sV output)', () => {
  it('stores the host with its open ports, one port asset per open port with the service, and skips the closed port', async () => {
    const s = store();
    const st = await importTwice(s, 'nmap', fx('nmap.xml'));
    expect(st).toMatchObject({ read: 1, new: 5, errors: 0 });
    const rows = assets(s);
    expect(rows.map((r) => [r.type, r.value, r.ports])).toEqual([
      ['ip', '127.0.0.1', ['5432/tcp', '6379/tcp', '39557/tcp', '46515/tcp']],
      ['port', '127.0.0.1:39557', ['39557/tcp']],
      ['port', '127.0.0.1:46515', ['46515/tcp']],
      ['port', '127.0.0.1:5432', ['5432/tcp']],
      ['port', '127.0.0.1:6379', ['6379/tcp']],
    ]);
    expect(rows.find((r) => r.value === '127.0.0.1:6379')).toMatchObject({ tech: ['Redis key-value store 7.0.15'], remarks: 'redis', host_ip: '127.0.0.1', source: 'nmap' });
    expect(rows.find((r) => r.value === '127.0.0.1:39557')).toMatchObject({ remarks: 'ssl/http' });
    const port = s.assets.list({ workspace: 'ws', search: '127.0.0.1:5432' }, all).data[0]!;
    expect(JSON.parse(port.port_json_data)).toEqual({ port: 5432, protocol: 'tcp', service: 'postgresql', product: 'PostgreSQL DB', version: '9.6.0 or later', cpe: ['cpe:/a:postgresql:postgresql'] });
  });

  it('the sync reader (workflow functions) stores the same rows', () => {
    const a = store();
    importToolFileSync(a, 'ws', toolImporter('nmap')!, fx('nmap.xml'));
    expect(assets(a).map((r) => r.value)).toEqual(['127.0.0.1', '127.0.0.1:39557', '127.0.0.1:46515', '127.0.0.1:5432', '127.0.0.1:6379']);
  });

  it('host names with a dot become domain assets; down hosts and hosts without open ports are skipped', async () => {
    const xml = `<?xml version="1.0"?><!DOCTYPE nmaprun><nmaprun>
<host><status state="up"/><address addr="192.0.2.5" addrtype="ipv4"/><address addr="00:11:22:33:44:55" addrtype="mac"/>
<hostnames><hostname name="scanme.example.org" type="user"/></hostnames>
<ports><port protocol="tcp" portid="22"><state state="open"/><service name="ssh" product="OpenSSH" version="9.2p1"/></port></ports></host>
<host><status state="down"/><address addr="192.0.2.6" addrtype="ipv4"/></host>
<host><status state="up"/><address addr="192.0.2.7" addrtype="ipv4"/><ports><port protocol="tcp" portid="80"><state state="filtered"/></port></ports></host>
</nmaprun>`;
    const s = store();
    const st = await importToolFile(s, 'ws', toolImporter('nmap')!, tmpFile('n.xml', xml));
    expect(st).toMatchObject({ read: 3, new: 3, skipped: 2, errors: 0 });
    expect(assets(s).map((r) => [r.type, r.value, r.host_ip])).toEqual([
      ['ip', '192.0.2.5', '192.0.2.5'],
      ['port', '192.0.2.5:22', '192.0.2.5'],
      ['domain', 'scanme.example.org', '192.0.2.5'],
    ]);
  });

  it('broken XML is reported as invalid, never half-parsed into rows; external entities are not resolved (no XXE)', async () => {
    const s = store();
    const broken = await importToolFile(s, 'ws', toolImporter('nmap')!, tmpFile('b.xml', '<nmaprun><host><address addr="192.0.2.9" addrtype="ipv4"/><ports>'));
    expect(broken).toMatchObject({ new: 0, errors: 1 });
    expect(broken.error_lines[0]!.message).toMatch(/^invalid XML/);
    const secret = tmpFile('secret.txt', 'TOP-SECRET');
    const xxe = `<?xml version="1.0"?><!DOCTYPE nmaprun [<!ENTITY x SYSTEM "file://${secret}">]><nmaprun><host><address addr="192.0.2.9" addrtype="ipv4"/><hostnames><hostname name="&x;.example.org"/></hostnames><ports><port protocol="tcp" portid="1"><state state="open"/></port></ports></host></nmaprun>`;
    const st = await importToolFile(s, 'ws', toolImporter('nmap')!, tmpFile('x.xml', xxe));
    expect(st.errors).toBe(1);
    expect(JSON.stringify(s.assets.list({ workspace: 'ws' }, all).data)).not.toContain('TOP-SECRET');
  });
});

describe('web content tools (real whatweb 0.5.5, ffuf 1.1.0, gobuster 3.5 output)', () => {
  it('whatweb: each target is a URL asset with title, IP, server and technologies', async () => {
    const s = store();
    expect(await importTwice(s, 'whatweb', fx('whatweb.json'))).toMatchObject({ read: 2, new: 2, errors: 0 });
    expect(assets(s)).toEqual([
      { type: 'http', value: '127.0.0.1', url: 'http://127.0.0.1:46515/', status: 200, ports: [], tech: ['PHP:7.4.3', 'WordPress:5.8'], remarks: 'osm-test-httpd/1.0', host_ip: '127.0.0.1', a: [], source: 'whatweb' },
      { type: 'http', value: '127.0.0.1', url: 'https://127.0.0.1:39557/admin', status: 200, ports: [], tech: ['PHP:7.4.3'], remarks: 'osm-test-httpd/1.0', host_ip: '127.0.0.1', a: [], source: 'whatweb' },
    ]);
    expect(s.assets.list({ workspace: 'ws' }, all).data.map((a) => a.title).sort()).toEqual(['Admin Panel', 'OSM Test Site']);
  });

  it('ffuf: each result is a URL asset with its status; the redirect goes to remarks', async () => {
    const s = store();
    expect(await importTwice(s, 'ffuf', fx('ffuf.json'))).toMatchObject({ read: 4, new: 4, errors: 0 });
    expect(assets(s).map((r) => [r.url, r.status, r.remarks])).toEqual([
      ['http://127.0.0.1:46515/admin', 200, ''],
      ['http://127.0.0.1:46515/backup.zip', 200, ''],
      ['http://127.0.0.1:46515/login', 301, 'redirect: /login/'],
      ['http://127.0.0.1:46515/robots.txt', 200, ''],
    ]);
  });

  it('gobuster: expanded (-e) lines stand alone; path lines need the base URL, and say so without it', async () => {
    const s = store();
    expect(await importTwice(s, 'gobuster', fx('gobuster-expanded.txt'))).toMatchObject({ read: 4, new: 4 });
    expect(assets(s).map((r) => [r.url, r.status])).toEqual([
      ['http://127.0.0.1:46515/admin', 200],
      ['http://127.0.0.1:46515/backup.zip', 200],
      ['http://127.0.0.1:46515/login', 301],
      ['http://127.0.0.1:46515/robots.txt', 200],
    ]);
    // The same results without -e merge into the same rows once the base URL is given.
    expect(await importToolFile(s, 'ws', toolImporter('gobuster')!, fx('gobuster.txt'), { baseUrl: 'http://127.0.0.1:46515' })).toMatchObject({ new: 0, unchanged: 4 });
    const noBase = await importToolFile(store(), 'ws', toolImporter('gobuster')!, fx('gobuster.txt'));
    expect(noBase).toMatchObject({ new: 0, errors: 4 });
    expect(noBase.error_lines[0]!.message).toMatch(/base URL/);
    const noStatus = store();
    expect(await importToolFile(noStatus, 'ws', toolImporter('gobuster')!, fx('gobuster-no-status.txt'), { baseUrl: 'http://127.0.0.1:46515/' })).toMatchObject({ new: 4, errors: 0 });
    expect(assets(noStatus).map((r) => [r.url, r.status])).toContainEqual(['http://127.0.0.1:46515/admin', 0]);
  });

  it('katana: crawled endpoints with status, method and technologies; the response body is not stored', async () => {
    const s = store();
    expect(await importTwice(s, 'katana', fx('katana.jsonl'))).toMatchObject({ read: 3, new: 3 });
    expect(assets(s).map((r) => [r.type, r.url, r.status, r.tech])).toEqual([
      ['http', 'https://www.example.com/api/search', 405, []],
      ['http', 'https://www.example.com/login', 200, ['Nginx']],
      ['url', 'https://www.example.com/static/app.js', 0, []],
    ]);
    expect(JSON.stringify(s.assets.list({ workspace: 'ws' }, all).data.map((a) => a.raw_json_data))).not.toContain('<title>Login');
  });
});

describe('TLS tools', () => {
  it('sslscan (real 2.0.7 output against a weak loopback server): protocols and certificate problems as findings, the TLS service as a port asset', async () => {
    const s = store();
    expect(await importTwice(s, 'sslscan', fx('sslscan.xml'))).toMatchObject({ read: 1, new: 5, errors: 0 });
    expect(vulns(s).map((v) => [v.id, v.severity, v.asset])).toEqual([
      ['sslscan-cert-expired', 'high', '127.0.0.1:39557'],
      ['sslscan-cert-self-signed', 'medium', '127.0.0.1:39557'],
      ['sslscan-tls10-enabled', 'medium', '127.0.0.1:39557'],
      ['sslscan-tls11-enabled', 'low', '127.0.0.1:39557'],
    ]);
    expect(vulns(s)[0]!.poc).toBe('subject osm-test.local, valid from Jan  1 00:00:00 2020 GMT to Feb  1 00:00:00 2020 GMT');
    const port = s.assets.list({ workspace: 'ws' }, all).data[0]!;
    expect(port).toMatchObject({ asset_value: '127.0.0.1:39557', asset_type: 'port', open_ports: ['39557/tcp'] });
    expect(JSON.parse(port.tls)).toMatchObject({ subject: 'osm-test.local', expired: true, self_signed: true, protocols: ['TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] });
  });

  it('sslscan: SSLv3, heartbleed, weak ciphers and a short key are findings too', async () => {
    const xml = `<document><ssltest host="192.0.2.8" port="443"><protocol type="ssl" version="3" enabled="1"/>
<heartbleed sslversion="TLSv1.2" vulnerable="1"/><renegotiation supported="1" secure="0"/>
<cipher status="accepted" sslversion="TLSv1.2" bits="56" cipher="DES-CBC-SHA" strength="weak"/>
<cipher status="accepted" sslversion="TLSv1.2" bits="0" cipher="NULL-SHA" strength="null"/>
<certificates><certificate><signature-algorithm>sha1WithRSAEncryption</signature-algorithm><pk type="RSA" bits="1024"/></certificate></certificates></ssltest></document>`;
    const s = store();
    await importToolFile(s, 'ws', toolImporter('sslscan')!, tmpFile('s.xml', xml));
    expect(vulns(s).map((v) => [v.id, v.severity, v.matcher])).toEqual([
      ['sslscan-heartbleed', 'critical', 'TLSv1.2'],
      ['sslscan-insecure-renegotiation', 'medium', ''],
      ['sslscan-sslv3-enabled', 'high', ''],
      ['sslscan-weak-cipher', 'medium', 'TLSv1.2 DES-CBC-SHA (56 bits)'],
      ['sslscan-weak-cipher', 'high', 'TLSv1.2 NULL-SHA (0 bits)'],
      ['sslscan-weak-key', 'medium', ''],
      ['sslscan-weak-signature', 'medium', ''],
    ]);
  });

  it('testssl: LOW..CRITICAL checks become findings on host:port; OK, INFO and WARN entries are skipped', async () => {
    const s = store();
    expect(await importTwice(s, 'testssl', fx('testssl.json'))).toMatchObject({ read: 9, new: 5, skipped: 4, errors: 0 });
    expect(vulns(s).map((v) => [v.id, v.severity, v.asset, v.title])).toEqual([
      ['testssl-cert_chain_of_trust', 'critical', 'www.example.com:443', 'Certificate chain of trust broken'],
      ['testssl-cert_expirationStatus', 'critical', 'www.example.com:443', 'Certificate expired'],
      ['testssl-SWEET32', 'low', 'www.example.com:443', 'SWEET32 (64-bit block ciphers)'],
      ['testssl-TLS1', 'low', 'www.example.com:443', 'TLS 1.0 offered'],
      ['testssl-TLS1_1', 'low', 'www.example.com:443', 'TLS 1.1 offered'],
    ]);
    expect(s.vulns.list({ workspace: 'ws', asset_value: 'www.example.com:443' }, all).data.find((v) => v.vuln_info === 'testssl-SWEET32')!.tags).toEqual([
      'tls', 'testssl', 'CVE-2016-2183', 'CVE-2016-6329', 'CWE-327',
    ]);
  });
});

describe('port scanners and DNS (documented output formats)', () => {
  it('masscan: one record per port accumulates the host\'s open ports; banners become the service', async () => {
    const s = store();
    expect(await importTwice(s, 'masscan', fx('masscan.json'))).toMatchObject({ read: 3, errors: 0 });
    expect(assets(s).map((r) => [r.type, r.value, r.ports, r.remarks])).toEqual([
      ['ip', '192.0.2.10', ['80/tcp', '443/tcp'], ''],
      ['port', '192.0.2.10:443', ['443/tcp'], ''],
      ['port', '192.0.2.10:80', ['80/tcp'], ''],
      ['ip', '192.0.2.11', ['22/tcp'], ''],
      ['port', '192.0.2.11:22', ['22/tcp'], 'ssh'],
    ]);
  });

  it('masscan 1.0 files (trailing comma, {finished: 1}) still import', async () => {
    const s = store();
    expect(await importToolFile(s, 'ws', toolImporter('masscan')!, fx('masscan-legacy.json'))).toMatchObject({ read: 2, errors: 0 });
    expect(assets(s).find((r) => r.type === 'ip')!.ports).toEqual(['8080/tcp', '8443/tcp']);
  });

  it('naabu: ports per host, TLS noted, the host name as a domain pointing at the IP', async () => {
    const s = store();
    expect(await importTwice(s, 'naabu', fx('naabu.jsonl'))).toMatchObject({ read: 3, errors: 0 });
    expect(assets(s).map((r) => [r.type, r.value, r.ports])).toEqual([
      ['ip', '93.184.215.14', ['80/tcp', '443/tcp']],
      ['port', '93.184.215.14:443', ['443/tcp']],
      ['port', '93.184.215.14:80', ['80/tcp']],
      ['ip', '93.184.215.20', ['8443/tcp']],
      ['port', '93.184.215.20:8443', ['8443/tcp']],
      ['domain', 'www.example.com', []],
    ]);
  });

  it('subfinder and dnsx: one domain asset per host; dnsx adds the records and skips NXDOMAIN', async () => {
    const s = store();
    expect(await importTwice(s, 'subfinder', fx('subfinder.jsonl'))).toMatchObject({ read: 3, new: 3 });
    expect(await importToolFile(s, 'ws', toolImporter('dnsx')!, fx('dnsx.jsonl'))).toMatchObject({ read: 3, new: 0, updated: 2, skipped: 1 });
    expect(assets(s).map((r) => [r.type, r.value, r.host_ip, r.a])).toEqual([
      ['domain', 'api.example.com', '93.184.215.20', ['93.184.215.20', '93.184.215.21', 'CNAME:api-lb.example.net']],
      ['domain', 'mail.example.com', '', []],
      ['domain', 'www.example.com', '93.184.215.14', ['93.184.215.14', 'AAAA:2606:2800:21f:cb07:6820:80da:af6b:8b2c']],
    ]);
  });

  it('zone-style DNS lines are grouped per name wherever they appear', async () => {
    const s = store();
    expect(await importTwice(s, 'dns', fx('dns-zone.txt'))).toMatchObject({ new: 2, errors: 0 });
    expect(assets(s).map((r) => [r.value, r.a])).toEqual([
      ['api.example.com', ['93.184.215.20', 'CNAME:api-lb.example.net']],
      ['www.example.com', ['93.184.215.14', 'AAAA:2606:2800:21f:cb07:6820:80da:af6b:8b2c', 'MX:10 mail.example.com.']],
    ]);
  });
});

describe('importer table', () => {
  it('httpx and nuclei go through the same table; SARIF results are findings with the rule severity', async () => {
    const s = store();
    expect(await importTwice(s, 'httpx', path.join(ROOT, 'test/fixtures/data/httpx-run1.jsonl'))).toMatchObject({ new: 5 });
    expect(await importTwice(s, 'nuclei', path.join(ROOT, 'test/fixtures/data/nuclei.jsonl'))).toMatchObject({ new: 6 });
    const sarif = store();
    expect(await importTwice(sarif, 'sarif', fx('sarif.json'))).toMatchObject({ new: 2 });
    expect(vulns(sarif).map((v) => [v.id, v.severity, v.asset, v.matcher])).toEqual([
      ['generic.secrets.gitleaks.generic-api-key', 'high', 'config/settings.yaml', '9c3fd0aa0b5e1e4b:1'],
      ['python.lang.security.audit.exec-detected', 'high', 'app/run.py', '42'],
    ]);
  });

  it('every importer rejects garbage with a reason instead of storing it', async () => {
    for (const t of TOOL_IMPORTERS) {
      const s = store();
      const file = tmpFile('junk', '{"not": "what the tool writes"\n<<<garbage>>>\n');
      const st = await importToolFile(s, 'ws', t, file, { baseUrl: 'http://127.0.0.1/' });
      expect(st.new, t.name).toBe(0);
      expect(st.errors + st.skipped, t.name).toBeGreaterThan(0);
    }
  });

  it('docs/importers.md documents every importer (a section and a table row)', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/importers.md'), 'utf8');
    for (const t of TOOL_IMPORTERS) {
      expect(doc, t.name).toMatch(new RegExp(`^### ${t.name.replace('.', '\\.')}( |$)`, 'm'));
      expect(doc, t.name).toMatch(new RegExp(`^\\| ${t.name} \\|`, 'm'));
    }
  });

  it('testssl.sh is an alias of testssl; unknown names are undefined', () => {
    expect(toolImporter('testssl.sh')?.name).toBe('testssl');
    expect(toolImporter('NMAP')?.name).toBe('nmap');
    expect(toolImporter('nessus')).toBeUndefined();
  });
});
