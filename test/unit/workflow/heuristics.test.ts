import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeTarget, matchesTargetType, pathSafe, repoSlug } from '../../../src/workflow/heuristics.js';
import { crc32 } from '../../../src/workflow/tpl-net.js';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  fs.writeFileSync(path.join(dir, 'list_of_ips.txt'), '1.1.1.1\n');
  fs.mkdirSync(path.join(dir, 'folder'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('analyzeTarget', () => {
  it('domain → registrable domain as TargetSpace', () => {
    const a = analyzeTarget('example.com');
    expect(a.type).toBe('domain');
    expect(a.targetSpace).toBe('example.com');
    expect(a.vars).toMatchObject({ TargetType: 'domain', TargetRootDomain: 'example.com', TargetTLD: 'com', TargetSLD: 'example', Org: 'example', TargetIsWildcard: false });
  });

  it('subdomain → parent registrable domain', () => {
    expect(analyzeTarget('test.example.com').targetSpace).toBe('example.com');
    expect(analyzeTarget('Deep.Sub.Example.COM').targetSpace).toBe('example.com');
  });

  it('uses the public suffix list (co.uk)', () => {
    const a = analyzeTarget('sub.example.co.uk');
    expect(a.targetSpace).toBe('example.co.uk');
    expect(a.vars).toMatchObject({ TargetTLD: 'co.uk', TargetSLD: 'example' });
  });

  it('URL with port, path and query', () => {
    const a = analyzeTarget('http://api.example.com:8080/v1/users/list.php?id=1');
    expect(a.type).toBe('url');
    expect(a.targetSpace).toBe('example.com');
    expect(a.vars).toMatchObject({
      TargetType: 'url',
      TargetBaseURL: 'http://api.example.com:8080/v1/users/list.php?id=1',
      TargetRootURL: 'http://api.example.com:8080',
      TargetHostname: 'api.example.com:8080',
      TargetHost: 'api.example.com',
      TargetPort: '8080',
      TargetPath: '/v1/users',
      TargetFileExt: 'list.php',
      TargetScheme: 'http',
      TargetRootDomain: 'example.com',
      TargetRepoSlug: '',
    });
  });

  it('URL defaults: scheme added, default ports omitted, path "/"', () => {
    const a = analyzeTarget('example.com/x');
    expect(a.type).toBe('url');
    expect(a.vars).toMatchObject({ TargetBaseURL: 'https://example.com/x', TargetRootURL: 'https://example.com', TargetPort: '443', TargetPath: '/', TargetFileExt: 'x' });
    expect(analyzeTarget('https://example.com:443').vars).toMatchObject({ TargetRootURL: 'https://example.com', TargetPath: '/' });
    expect(analyzeTarget('http://example.com').vars).toMatchObject({ TargetPort: '80' });
  });

  it('IP and IP:port', () => {
    const a = analyzeTarget('10.1.2.3');
    expect(a).toMatchObject({ type: 'ip', targetSpace: '10.1.2.3' });
    expect(a.vars.TargetRootDomain).toBe('10.1.2.3');
    expect(analyzeTarget('10.1.2.3:8443')).toMatchObject({ type: 'ip', targetSpace: '10.1.2.3' });
    expect(analyzeTarget('2001:db8::1')).toMatchObject({ type: 'ip', targetSpace: '2001_db8__1' });
  });

  it('CIDR is its own type with a sanitized space', () => {
    expect(analyzeTarget('10.0.0.0/24')).toMatchObject({ type: 'cidr', targetSpace: '10.0.0.0_24' });
  });

  it('existing file → <basename with _→->-file', () => {
    const a = analyzeTarget(path.join(dir, 'list_of_ips.txt'));
    expect(a).toMatchObject({ type: 'file', targetSpace: 'list-of-ips-file' });
    expect(analyzeTarget('list_of_ips.txt', { cwd: dir }).targetSpace).toBe('list-of-ips-file');
    // a folder is not a file target
    expect(analyzeTarget(path.join(dir, 'folder')).type).toBe('url');
  });

  it('repo slugs for code-hosting URLs', () => {
    expect(analyzeTarget('https://github.com/owner/repo').targetSpace).toBe('owner__repo');
    expect(analyzeTarget('https://github.com/owner/repo/archive/refs/heads/main.zip').targetSpace).toBe('owner__repo');
    expect(analyzeTarget('https://gitlab.com/group/sub/proj/-/tree/main').targetSpace).toBe('group__sub__proj');
    expect(analyzeTarget('https://github.com/owner').targetSpace).toBe('github.com');
    expect(repoSlug('example.com', '/a/b')).toBe('');
    expect(analyzeTarget('https://codeberg.org/o/r/releases/tag/v1').vars.TargetRepoSlug).toBe('o__r');
  });

  it('unknown short targets are sanitized; long ones get the random form', () => {
    expect(analyzeTarget('weird:name*x')).toMatchObject({ type: 'unknown', targetSpace: 'weird_name_x' });
    const now = new Date(1_700_000_000_000);
    const long = analyzeTarget('x'.repeat(31), { now });
    expect(long.targetSpace).toMatch(/^xxxxxx-[a-z]{6}-1700000000$/);
  });

  it('level none skips classification and heuristic vars', () => {
    const a = analyzeTarget('sub.example.com', { level: 'none' });
    expect(a).toEqual({ type: 'unknown', targetSpace: 'sub.example.com', vars: {} });
  });

  it('-S overrides everything but is still made path-safe', () => {
    expect(analyzeTarget('sub.example.com', { space: 'custom' }).targetSpace).toBe('custom');
    expect(analyzeTarget('sub.example.com', { space: '../../etc' }).targetSpace).toBe('.._.._etc');
    expect(analyzeTarget('..', { level: 'none' }).targetSpace).toBe('__');
  });

  it('never probes the network: advanced-only vars are empty', () => {
    const a = analyzeTarget('example.com', { level: 'advanced' });
    expect(a.vars).toMatchObject({ TargetStatusCode: '', TargetContentLength: '', TargetResolvedIP: '', TargetIsWildcard: false });
  });
});

describe('pathSafe', () => {
  it('replaces unsafe characters in short values', () => {
    expect(pathSafe('a/b:c*d?e"f<g>h|i\\j')).toBe('a_b_c_d_e_f_g_h_i_j');
    expect(pathSafe('x'.repeat(30))).toBe('x'.repeat(30));
  });

  it('long values → 20 bytes + _ + crc32 of the original (29 chars, deterministic)', () => {
    const value = 'https://example.com/a/very/long/path?with=query';
    const safe = pathSafe(value);
    expect(safe).toHaveLength(29);
    expect(safe).toBe(`https___example.com__${crc32(value).toString(16).padStart(8, '0')}`);
    expect(pathSafe(value)).toBe(safe);
    // the CRC is of the original, so values that sanitize alike still differ
    expect(pathSafe('https://example.com/a/very/long/path?with=quer:')).not.toBe(pathSafe('https://example.com/a/very/long/path?with=quer/'));
  });

  it('crc32 matches the IEEE reference value', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });
});

describe('matchesTargetType', () => {
  it.each([
    ['example.com', 'domain', true],
    ['-bad-.com', 'domain', false],
    ['a.b.example.com', 'subdomain', true],
    ['example.com', 'subdomain', false],
    ['https://example.com/x', 'url', true],
    ['example.com/x', 'url', false],
    ['ftp://example.com', 'url', false],
    ['10.0.0.0/8', 'cidr', true],
    ['10.0.0.0/33', 'cidr', false],
    ['1.2.3.4', 'ip', true],
    ['::1', 'ip', true],
    ['1.2.3.4:80', 'ip', false],
    ['owner/repo', 'repo', true],
    ['https://github.com/o/r.git', 'repo', true],
    ['git@github.com:o/r.git', 'repo', true],
    ['ssh://host/o/r', 'repo', true],
    ['https://example.com/only', 'repo', false],
    ['anything', 'path', true],
    ['', 'path', false],
    ['-12.5', 'number', true],
    ['12a', 'number', false],
    ['whatever you like', 'string', true],
  ])('%s is %s → %s', (value, type, expected) => {
    expect(matchesTargetType(value, type)).toBe(expected);
  });

  it('checks the filesystem for file and folder', () => {
    expect(matchesTargetType(path.join(dir, 'list_of_ips.txt'), 'file')).toBe(true);
    expect(matchesTargetType(path.join(dir, 'folder'), 'file')).toBe(false);
    expect(matchesTargetType(path.join(dir, 'folder'), 'folder')).toBe(true);
    expect(matchesTargetType(path.join(dir, 'nope'), 'folder')).toBe(false);
    expect(matchesTargetType('list_of_ips.txt', 'file', { cwd: dir })).toBe(true);
    expect(matchesTargetType('not-there', 'file', { variable: true })).toBe(true);
  });

  it('accepts comma lists (any match) and rejects unknown type names', () => {
    expect(matchesTargetType('https://example.com', 'domain, url')).toBe(true);
    expect(matchesTargetType('1.2.3.4', 'domain,url')).toBe(false);
    expect(() => matchesTargetType('x', 'domain,bogus')).toThrow(/unknown target type: bogus/);
  });
});
