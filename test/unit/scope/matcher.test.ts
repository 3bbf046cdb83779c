import { describe, expect, it } from 'vitest';
import { compileLayers, parseRule, parseScopeSpec, parseScopeText, parseValue, ScopeParseError, ScopeSet, networkTokens } from '../../../src/scope/index.js';

const set = (text: string) => new ScopeSet([parseScopeText(text, 'run')]);
const inScope = (s: ScopeSet, v: string) => s.decide(v).in_scope;

describe('scope values', () => {
  it('reads URLs: userinfo, IPv6 brackets, upper case, trailing dot, default ports', () => {
    expect(parseValue('https://User:Pw@API.Example.COM./x?y#z')).toMatchObject({ kind: 'host', host: 'api.example.com', port: 443 });
    expect(parseValue('http://[2001:DB8::1]:8080/')).toMatchObject({ kind: 'ip', host: '2001:db8::1', port: 8080 });
    expect(parseValue('http://example.com')).toMatchObject({ port: 80 });
    expect(parseValue('EXAMPLE.com:8443')).toMatchObject({ kind: 'host', host: 'example.com', port: 8443 });
    expect(parseValue('[::1]:22')).toMatchObject({ kind: 'ip', host: '::1', port: 22 });
    expect(parseValue('2001:db8::5')).toMatchObject({ kind: 'ip', host: '2001:db8::5' });
    expect(parseValue('::ffff:10.0.0.1')).toMatchObject({ kind: 'ip', host: '10.0.0.1' });
    expect(parseValue('10.0.0.0/24')).toMatchObject({ kind: 'cidr', host: '10.0.0.0/24', bits: 24 });
    expect(parseValue('example.com/admin')).toMatchObject({ host: 'example.com' });
    expect(parseValue('bücher.de')).toMatchObject({ host: 'xn--bcher-kva.de' });
    expect(parseValue('http://0x7f.1/')).toMatchObject({ kind: 'ip', host: '127.0.0.1' });
    expect(parseValue('not a host')).toBeUndefined();
    expect(parseValue('example.com:99999')).toBeUndefined();
  });

  it('picks the network tokens of an item (paths and words are not)', () => {
    expect(networkTokens('a.example.com 443 /tmp/x.txt word').map((v) => v.host)).toEqual(['a.example.com']);
    expect(networkTokens('10.0.0.1,https://b.example.org').map((v) => v.host)).toEqual(['10.0.0.1', 'b.example.org']);
    expect(networkTokens('lists/words admin 42')).toEqual([]);
  });
});

describe('scope rules', () => {
  it('wildcards match subdomains at any depth but not the apex; a leading dot matches both', () => {
    const s = set('*.example.com');
    expect(inScope(s, 'a.example.com')).toBe(true);
    expect(inScope(s, 'x.y.example.com')).toBe(true);
    expect(inScope(s, 'example.com')).toBe(false);
    expect(inScope(s, 'badexample.com')).toBe(false);
    expect(inScope(s, 'example.com.evil.net')).toBe(false);
    const d = set('.example.com');
    expect(inScope(d, 'example.com')).toBe(true);
    expect(inScope(d, 'a.example.com')).toBe(true);
    expect(inScope(d, 'notexample.com')).toBe(false);
    const exact = set('example.com');
    expect(inScope(exact, 'EXAMPLE.COM.')).toBe(true);
    expect(inScope(exact, 'a.example.com')).toBe(false);
  });

  it('exclude wins over include, and an empty include list admits everything not excluded', () => {
    const s = set('*.example.com\n!admin.example.com\n# comment\n\n');
    expect(inScope(s, 'www.example.com')).toBe(true);
    const d = s.decide('https://ADMIN.example.com/login');
    expect(d.in_scope).toBe(false);
    expect(d.rule).toEqual({ text: 'admin.example.com', line: 2, list: 'exclude' });
    const onlyEx = set('!10.0.0.0/8');
    expect(inScope(onlyEx, 'anything.org')).toBe(true);
    expect(inScope(onlyEx, '10.1.2.3')).toBe(false);
  });

  it('matches IPv4 and IPv6 addresses and CIDRs; CIDR values must fit an include, and any overlap with an exclude refuses', () => {
    const s = set('10.0.0.0/8\n2001:db8::/32\n!10.0.5.0/24\n192.168.1.1');
    expect(inScope(s, '10.1.2.3')).toBe(true);
    expect(inScope(s, '10.0.5.9')).toBe(false);
    expect(inScope(s, '11.0.0.1')).toBe(false);
    expect(inScope(s, '2001:db8:1::7')).toBe(true);
    expect(inScope(s, '[2001:db9::1]:443')).toBe(false);
    expect(inScope(s, '192.168.1.1')).toBe(true);
    expect(inScope(s, '192.168.1.2')).toBe(false);
    expect(inScope(s, '10.1.0.0/16')).toBe(true);
    expect(inScope(s, '10.0.0.0/16')).toBe(false); // overlaps the excluded /24
    expect(inScope(s, '0.0.0.0/0')).toBe(false); // wider than the include
    expect(inScope(s, 'http://[::ffff:10.0.5.1]/')).toBe(false); // mapped IPv6 is IPv4
  });

  it('domain rules never match IPs and IP rules never match names (no DNS)', () => {
    expect(inScope(set('example.com'), '93.184.216.34')).toBe(false);
    expect(inScope(set('10.0.0.0/8'), 'intranet.example.com')).toBe(false);
  });

  it('ports: single, list, range; a port rule needs a port on the value', () => {
    const s = set('example.com:443\n*.example.com:80,8000-8100\n10.0.0.0/8:22\n[2001:db8::/32]:443\n*:8443');
    expect(inScope(s, 'https://example.com/')).toBe(true);
    expect(inScope(s, 'http://example.com/')).toBe(false);
    expect(inScope(s, 'example.com')).toBe(false);
    expect(inScope(s, 'a.example.com:8050')).toBe(true);
    expect(inScope(s, 'a.example.com:8101')).toBe(false);
    expect(inScope(s, '10.9.9.9:22')).toBe(true);
    expect(inScope(s, 'ssh://10.9.9.9')).toBe(true);
    expect(inScope(s, '10.9.9.9:23')).toBe(false);
    expect(inScope(s, 'https://[2001:db8::9]/')).toBe(true);
    expect(inScope(s, 'other.org:8443')).toBe(true);
    // An excluded port does not exclude the host on other ports.
    const ex = set('!example.com:22');
    expect(inScope(ex, 'example.com:443')).toBe(true);
    expect(inScope(ex, 'example.com:22')).toBe(false);
  });

  it('regexes (RE2) match the host, case-insensitively', () => {
    const s = set('re:^api[0-9]+\\.example\\.com$\n/\\.internal$/');
    expect(inScope(s, 'https://API7.example.com/')).toBe(true);
    expect(inScope(s, 'apix.example.com')).toBe(false);
    expect(inScope(s, 'db.internal')).toBe(true);
  });

  it('a hostile regex cannot backtrack: it is matched in linear time, or refused', () => {
    const s = set('re:^(a+)+$');
    // With a backtracking engine this takes ages; RE2 answers at once.
    expect(inScope(s, `${'a'.repeat(5000)}b.com`)).toBe(false);
    expect(() => parseRule('re:(a)\\1')).toThrow(/invalid regex/); // backreferences are not RE2
    expect(() => parseRule(`re:${'a'.repeat(2000)}`)).toThrow(/longer than/);
  });

  it('an empty scope admits everything; a configured scope refuses values that are not network values', () => {
    expect(new ScopeSet([]).decide('anything at all').in_scope).toBe(true);
    expect(set('example.com').decide('not a host').in_scope).toBe(false);
    expect(set('example.com').admitsItem('just words')).toBe(true);
    expect(set('example.com').admitsItem('example.com 443')).toBe(true);
    expect(set('example.com').admitsItem('example.com other.org')).toBe(false);
  });
});

describe('scope layers', () => {
  it('each layer can only narrow (intersection) and the decision names the layer', () => {
    const s = compileLayers([
      { name: 'settings', include: ['.example.com'], exclude: [] },
      { name: 'run', include: ['*.dev.example.com'], exclude: ['!ignored'.slice(1)] },
    ]);
    expect(s.decide('a.dev.example.com').in_scope).toBe(true);
    const d = s.decide('www.example.com');
    expect(d.in_scope).toBe(false);
    expect(d.layer).toBe('run');
    expect(s.decide('other.org').layer).toBe('settings');
  });
});

describe('scope files', () => {
  it('reports every invalid entry at once, with line numbers', () => {
    let err: ScopeParseError | undefined;
    try {
      parseScopeText('example.com\nfoo*.example.com\n!10.0.0.0/33\n# fine\nexample.com:70000\nre:(\nhttp://x.com\n', 'run', 'scope.txt');
    } catch (e) {
      err = e as ScopeParseError;
    }
    expect(err).toBeInstanceOf(ScopeParseError);
    expect(err!.issues.map((i) => i.line)).toEqual([2, 3, 5, 6, 7]);
    expect(err!.message).toMatch(/line 2: wildcards are only allowed/);
  });

  it('accepts the YAML form with include: and exclude: lists (line numbers kept)', () => {
    const layer = parseScopeText('# scope\ninclude:\n  - "*.example.com"\n  - 10.0.0.0/8\nexclude:\n  - admin.example.com\n', 'run');
    expect(layer.include.map((r) => r.text)).toEqual(['*.example.com', '10.0.0.0/8']);
    expect(layer.exclude[0]).toMatchObject({ text: 'admin.example.com', line: 6 });
    expect(() => parseScopeText('include:\n  - ok.com\n  - "bad*.com"\nexclude: nope\n', 'run')).toThrow(/line 3.*wildcards|exclude must be a list/);
  });

  it('parses an API spec; "!" entries of include go to exclude', () => {
    const l = parseScopeSpec({ include: ['example.com', '!www.example.com'], exclude: ['10.0.0.1'] }, 'run');
    expect(l.include.map((r) => r.text)).toEqual(['example.com']);
    expect(l.exclude.map((r) => r.text)).toEqual(['www.example.com', '10.0.0.1']);
    expect(() => parseScopeSpec({ include: ['a b'] }, 'run')).toThrow(/include\[0\]/);
  });
});
