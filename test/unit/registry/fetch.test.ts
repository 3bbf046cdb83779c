import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../../src/util/outbound.js';
import { checkHttpUrl, fetchBuffer, fetchToFile, FetchError, githubAuthHeader } from '../../../src/registry/fetch.js';
import { startFileServer, type FileServer } from '../../fixtures/registry/file-server.js';

describe('isPrivateAddress', () => {
  it('flags loopback, link-local, private, CGNAT, multicast, reserved and unspecified IPv4', () => {
    for (const ip of ['127.0.0.1', '127.255.255.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
  });

  it('lets public IPv4 through', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '140.82.112.3', '172.32.0.1', '100.128.0.1', '11.0.0.1']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
  });

  it('judges IPv6, including mapped and NAT64 forms by the IPv4 they carry', () => {
    for (const ip of ['::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '[::1]', 'fe80::1%eth0']) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ['2606:4700:4700::1111', '::ffff:8.8.8.8', '2a00:1450:4001::200e']) {
      expect(isPrivateAddress(ip), ip).toBe(false);
    }
    for (const ip of ['::127.0.0.1', '2002:7f00:1::1', '64:ff9b::7f00:1', '::ffff:0:127.0.0.1']) expect(isPrivateAddress(ip), ip).toBe(true);
  });

  it('treats anything that is not an IP as not allowed', () => {
    expect(isPrivateAddress('localhost')).toBe(true);
    expect(isPrivateAddress('')).toBe(true);
  });
});

describe('GitHub token attachment', () => {
  const token = 'ghp_secret';
  it('attaches only for exact GitHub hostnames over https', () => {
    expect(githubAuthHeader(new URL('https://github.com/a/b/releases/download/v1/x.zip'), token)).toBe(`Bearer ${token}`);
    expect(githubAuthHeader(new URL('https://API.GitHub.com/repos/x'), token)).toBe(`Bearer ${token}`);
    expect(githubAuthHeader(new URL('https://raw.githubusercontent.com/a/b/main/r.json'), token)).toBe(`Bearer ${token}`);
  });

  it('never by substring, userinfo tricks or plain http', () => {
    for (const u of [
      'https://api.github.com.evil.com/x',
      'https://evil.com/?api.github.com',
      'https://api.github.com@evil.com/x',
      'https://evil.com/github.com',
      'https://notgithub.com/x',
      'http://github.com/a/b',
      'https://user:pw@github.com/a',
      'https://objects.githubusercontent.com/x',
    ]) {
      expect(githubAuthHeader(new URL(u), token), u).toBeUndefined();
    }
    expect(githubAuthHeader(new URL('https://github.com/x'), undefined)).toBeUndefined();
  });
});

describe('bounded fetches', () => {
  let srv: FileServer;
  let dir: string;
  const opts = { maxBytes: 1024, timeoutMs: 10_000, allowPrivate: true };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    srv = await startFileServer({
      '/ok.json': '{"a":1}',
      '/big': Buffer.alloc(4096, 1),
      '/liar': { status: 200, body: 'x'.repeat(4096), headers: { 'content-length': '4096' } },
      '/r1': { status: 302, location: '/r2' },
      '/r2': { status: 301, location: '/r3' },
      '/r3': { status: 307, location: '/ok.json' },
      '/loop': { status: 302, location: '/loop' },
      '/to-file': { status: 302, location: 'file:///etc/passwd' },
      '/missing': { status: 404, body: 'no' },
    });
  });

  afterAll(async () => {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads a document and follows up to 3 redirects', async () => {
    expect((await fetchBuffer(`${srv.url}/ok.json`, opts)).toString()).toBe('{"a":1}');
    expect((await fetchBuffer(`${srv.url}/r1`, opts)).toString()).toBe('{"a":1}');
  });

  it('stops after 3 redirects and refuses non-http redirects', async () => {
    await expect(fetchBuffer(`${srv.url}/loop`, opts)).rejects.toThrow(/too many redirects/);
    const err = await fetchBuffer(`${srv.url}/to-file`, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).kind).toBe('refused');
  });

  it('caps the size, by Content-Length and while streaming', async () => {
    await expect(fetchBuffer(`${srv.url}/big`, opts)).rejects.toThrow(/larger than 1024 bytes/);
    await expect(fetchBuffer(`${srv.url}/liar`, opts)).rejects.toThrow(/larger than 1024 bytes/);
    const dest = path.join(dir, 'big.bin');
    await expect(fetchToFile(`${srv.url}/big`, dest, opts)).rejects.toThrow(/larger than 1024 bytes/);
  });

  it('reports HTTP errors by status', async () => {
    await expect(fetchBuffer(`${srv.url}/missing`, opts)).rejects.toThrow('HTTP status 404');
  });

  it('refuses loopback (literal and by name) unless private addresses are allowed', async () => {
    const strict = { ...opts, allowPrivate: false };
    for (const u of [`${srv.url}/ok.json`, srv.url.replace('127.0.0.1', 'localhost') + '/ok.json', srv.url.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/ok.json']) {
      const err = await fetchBuffer(u, strict).catch((e: unknown) => e);
      expect(err, u).toBeInstanceOf(FetchError);
      expect((err as FetchError).kind, u).toBe('refused');
      expect((err as Error).message, u).toMatch(/private address/);
    }
    expect(srv.hits.get('/ok.json') ?? 0).toBe(2); // only the two allowed reads above
  });

  it('accepts only http and https', () => {
    expect(() => checkHttpUrl('file:///etc/passwd')).toThrow(/unsupported URL scheme file/);
    expect(() => checkHttpUrl('gopher://x')).toThrow(FetchError);
    expect(() => checkHttpUrl('not a url')).toThrow(/invalid URL/);
  });
});
