/** The outbound (SSRF) policy: address classes, URL spellings, the allowlist and the connect-time lookup. */
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundGuard, outboundGuardMain, outboundPolicyOf, REFUSED_CODE } from '../../../src/util/outbound.js';

const strict = outboundGuard({ allowlist: [] });
const check = (url: string, allowlist: string[] = []) => outboundGuard({ allowlist }).checkUrl(new URL(url));

describe('URL hosts', () => {
  it('refuses loopback in every spelling WHATWG parsing normalises', () => {
    for (const url of ['http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://127.0.0.1.:8080/', 'http://0x7f.1/']) {
      expect(check(url), url).toBe('127.0.0.1 is a loopback address; add it to server.outbound_allowlist to allow it');
    }
    expect(check('http://0/')).toMatch(/^0\.0\.0\.0 is an unspecified address/);
  });

  it('refuses IPv6 loopback, ULA, link-local and IPv6 forms carrying a refused IPv4 address', () => {
    for (const url of ['http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[::127.0.0.1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::1]/', 'http://[::ffff:0:7f00:1]/']) {
      expect(check(url), url).toMatch(/ is a loopback address;/);
    }
    expect(check('http://[fd12:3456::1]/')).toMatch(/unique-local \(private\) address/);
    expect(check('http://[fe80::1]/')).toMatch(/link-local address/);
    expect(check('http://[::ffff:169.254.169.254]/')).toMatch(/link-local \(cloud metadata\) address/);
    expect(check('http://[::]/')).toMatch(/unspecified address/);
    expect(check('http://[ff02::1]/')).toMatch(/multicast address/);
  });

  it('refuses private, CGNAT, metadata, reserved, multicast and broadcast IPv4', () => {
    const kinds: [string, RegExp][] = [
      ['10.1.2.3', /private/],
      ['172.16.0.1', /private/],
      ['192.168.1.1', /private/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['169.254.169.254', /link-local \(cloud metadata\)/],
      ['169.254.1.1', /link-local address/],
      ['198.18.0.1', /reserved/],
      ['192.0.2.1', /reserved/],
      ['240.0.0.1', /reserved/],
      ['224.0.0.1', /multicast/],
      ['255.255.255.255', /broadcast/],
    ];
    for (const [ip, kind] of kinds) expect(check(`http://${ip}/`), ip).toMatch(kind);
  });

  it('refuses localhost names; lets public addresses and other names through (names are judged at connect time)', () => {
    for (const url of ['http://localhost/', 'http://LocalHost./', 'http://api.localhost/']) expect(check(url), url).toMatch(/ is a loopback name; add it to server\.outbound_allowlist/);
    for (const url of ['http://8.8.8.8/', 'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/', 'https://example.com/', 'http://172.32.0.1/', 'http://100.128.0.1/']) {
      expect(check(url), url).toBeNull();
    }
  });
});

describe('server.outbound_allowlist', () => {
  it('opens exact IPs (any spelling of them), CIDRs, host names and *.suffixes, and nothing else', () => {
    const list = ['127.0.0.1', '10.0.0.0/8', '[fd00::1]', 'intranet.local', '*.corp.example', '.lab.example', 'not an entry', '300.1.1.1/99'];
    expect(check('http://127.0.0.1/', list)).toBeNull();
    expect(check('http://2130706433/', list)).toBeNull();
    expect(check('http://[::ffff:127.0.0.1]/', list)).toBeNull();
    expect(check('http://127.0.0.2/', list)).toMatch(/127\.0\.0\.2 is a loopback address/);
    expect(check('http://10.200.3.4/', list)).toBeNull();
    expect(check('http://11.0.0.1/', list)).toBeNull(); // public anyway
    expect(check('http://192.168.0.1/', list)).toMatch(/private/);
    expect(check('http://[fd00::1]/', list)).toBeNull();
    expect(check('http://[fd00::2]/', list)).toMatch(/unique-local/);
    expect(check('http://localhost/', ['localhost'])).toBeNull();
    expect(check('http://localhost/', list)).toMatch(/loopback name/);
  });

  it('is read from settings in either shape', () => {
    expect(outboundPolicyOf({ settings: { server: { outbound_allowlist: ['a', 1, 'b'] } } })).toEqual({ allowlist: ['a', 'b'] });
    expect(outboundPolicyOf({ server: { outbound_allowlist: ['c'] } })).toEqual({ allowlist: ['c'] });
    expect(outboundPolicyOf(undefined)).toEqual({ allowlist: [] });
  });
});

describe('connect-time lookup (no DNS-rebinding window)', () => {
  let server: http.Server;
  let port = 0;
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  // A resolver under the test's control: public-looking names that answer loopback, or a mix.
  const answers: Record<string, { address: string; family: number }[]> = {
    'rebind.test': [{ address: '127.0.0.1', family: 4 }],
    'mixed.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ],
  };
  const fakeLookup = ((host: string, _opts: unknown, cb: (err: Error | null, list?: unknown) => void) => {
    const list = answers[host];
    if (!list) return cb(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    cb(null, list);
  }) as unknown as typeof dns.lookup;

  async function fetchVia(host: string, allowlist: string[]): Promise<{ status?: number; error?: string; refused?: string }> {
    let refused: string | undefined;
    const guard = outboundGuardMain(ipaddr, fakeLookup, allowlist, 'server.outbound_allowlist', REFUSED_CODE);
    const agent = new Agent({ connect: { lookup: guard.lookup((why) => (refused = why)) } });
    try {
      const res = await request(`http://${host}:${port}/${host}`, { dispatcher: agent });
      await res.body.dump();
      return { status: res.statusCode, refused };
    } catch (err) {
      return { error: (err as Error).message, refused };
    } finally {
      await agent.close();
    }
  }

  it('refuses a name whose answer is loopback, inside the socket lookup: the server sees nothing', async () => {
    const r = await fetchVia('rebind.test', []);
    expect(r.status).toBeUndefined();
    expect(r.refused).toBe('rebind.test (127.0.0.1) is a loopback address; add it to server.outbound_allowlist to allow it');
    const mixed = await fetchVia('mixed.test', []);
    expect(mixed.refused).toMatch(/^mixed\.test \(127\.0\.0\.1\) is a loopback address/);
    expect(hits).toEqual([]);
  });

  it('connects when the answer, or the name itself, is allowlisted', async () => {
    expect(await fetchVia('rebind.test', ['127.0.0.1'])).toMatchObject({ status: 200, refused: undefined });
    expect(await fetchVia('rebind.test', ['rebind.test'])).toMatchObject({ status: 200, refused: undefined });
    expect(await fetchVia('rebind.test', ['*.test'])).toMatchObject({ status: 200, refused: undefined });
    expect(hits).toEqual(['/rebind.test', '/rebind.test', '/rebind.test']);
  });

  it('the real resolver is used by default (localhost is refused by name before any lookup)', () => {
    expect(strict.checkUrl(new URL('http://localhost/'))).toMatch(/loopback name/);
    expect(strict.addressKind('not-an-ip')).toBeNull();
    expect(strict.addressKind('8.8.8.8')).toBe('');
  });
});
