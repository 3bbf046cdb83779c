import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';

const t = tempDir();
afterAll(t.cleanup);

const NMAP_XML = `<?xml version="1.0"?>
<nmaprun scanner="nmap">
<host><status state="up"/>
<address addr="10.0.0.5" addrtype="ipv4"/><address addr="AA:BB:CC:DD:EE:FF" addrtype="mac"/>
<ports>
<port protocol="tcp" portid="22"><state state="open" reason="syn-ack"/><service name="ssh" product="OpenSSH" version="8.9" extrainfo="Ubuntu &amp; co"/></port>
<port protocol="tcp" portid="80"><state state="open"/><service name="http" method="table"/></port>
<port protocol="tcp" portid="81"><state state="closed"/></port>
</ports></host>
<host><address addr="10.0.0.6" addrtype="ipv4"/><ports></ports></host>
</nmaprun>
`;

const GNMAP = [
  '# Nmap 7.94 scan initiated',
  'Host: 10.0.0.7 (web.test)\tStatus: Up',
  'Host: 10.0.0.7 (web.test)\tPorts: 443/open/tcp//https//nginx 1.2/, 8080/filtered/tcp//http-proxy///\tIgnored State: closed (998)',
  '',
].join('\n');

const lines = (p: string) => fs.readFileSync(p, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

describe('nmap_to_jsonl', () => {
  it('converts nmap XML: one line per host with ports, open_ports as port/proto', () => {
    const out = path.join(t.dir, 'xml', 'ports.jsonl');
    expect(call('nmap_to_jsonl', t.file('scan.xml', NMAP_XML), out)).toBe(true);
    expect(lines(out)).toEqual([
      {
        asset_value: '10.0.0.5',
        host_ip: '10.0.0.5',
        asset_type: 'ip',
        open_ports: ['22/tcp', '80/tcp'],
        ports: {
          '22': { protocol: 'tcp', state: 'open', service: 'ssh', product: 'OpenSSH', version: '8.9', service_info: 'Ubuntu & co' },
          '80': { protocol: 'tcp', state: 'open', service: 'http', service_info: 'method=table' },
          '81': { protocol: 'tcp', state: 'closed' },
        },
      },
    ]);
  });

  it('converts grepable output (.gnmap)', () => {
    const out = path.join(t.dir, 'g.jsonl');
    expect(call('nmapToJsonl', t.file('scan.gnmap', GNMAP), out)).toBe(true);
    expect(lines(out)).toEqual([
      {
        asset_value: '10.0.0.7',
        host_ip: '10.0.0.7',
        asset_type: 'ip',
        open_ports: ['443/tcp', '8080/tcp'],
        ports: { '443': { protocol: 'tcp', state: 'open', service: 'https', version: 'nginx 1.2' }, '8080': { protocol: 'tcp', state: 'filtered', service: 'http-proxy' } },
      },
    ]);
  });

  it('answers false for missing arguments or an unreadable input', () => {
    expect(call('nmap_to_jsonl', path.join(t.dir, 'nope.xml'), path.join(t.dir, 'o.jsonl'))).toBe(false);
    expect(call('nmap_to_jsonl', undefined, path.join(t.dir, 'o.jsonl'))).toBe(false);
  });
});

describe('detect_language', () => {
  it('returns the most frequent source language, skipping vendored and test folders', () => {
    t.file('repo/main.go', 'package main');
    t.file('repo/pkg/a.go', 'package pkg');
    t.file('repo/tools/run', '#!/usr/bin/env python3\nprint(1)\n');
    t.file('repo/web/app.js', 'x');
    t.file('repo/node_modules/x/a.js', 'x');
    t.file('repo/node_modules/x/b.js', 'x');
    t.file('repo/node_modules/x/c.js', 'x');
    t.file('repo/README.md', '# r');
    expect(call('detect_language', path.join(t.dir, 'repo'))).toBe('golang');
  });

  it('answers unknown for a file, a missing path or a folder without sources', () => {
    t.file('docs/a.md', 'x');
    expect(call('detect_language', path.join(t.dir, 'docs'))).toBe('unknown');
    expect(call('detect_language', path.join(t.dir, 'docs/a.md'))).toBe('unknown');
    expect(call('detectLanguage', '')).toBe('unknown');
  });
});
