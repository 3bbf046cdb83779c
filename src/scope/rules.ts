/**
 * Scope entries (one rule each) and how a rule matches a value. Syntax (docs/scope.md):
 *
 *   example.com          that host only
 *   *.example.com        any subdomain, at any depth — NOT example.com itself
 *   .example.com         example.com and any subdomain
 *   *                    any host or address
 *   10.0.0.1  2001:db8::1            one address
 *   10.0.0.0/8  2001:db8::/32        a range
 *   re:^api\d+\.example\.com$  or  /^api\d+\.example\.com$/   a regex on the host (RE2: linear time)
 *   <host rule>:443  <host rule>:80,443  <host rule>:8000-8100  [2001:db8::/32]:443   with ports
 *
 * Regexes use RE2 (re2js): no backtracking, so an untrusted pattern cannot stall the engine.
 */
import ipaddr from 'ipaddr.js';
import { RE2JS } from 're2js';
import { networkOf, normaliseHostname, parseIp, type ScopeValue } from './value.js';

export type RuleKind = 'domain' | 'wildcard' | 'suffix' | 'any' | 'ip' | 'cidr' | 'regex';

export interface ScopeRule {
  /** The entry as written (without the `!`). */
  text: string;
  /** 1-based line in its file (0 when the entry came from a list without lines). */
  line: number;
  kind: RuleKind;
  /** domain / wildcard / suffix: the normalised name (without `*.` / `.`); ip/cidr: the address text. */
  host: string;
  addr?: ipaddr.IPv4 | ipaddr.IPv6;
  bits?: number;
  regex?: RE2JS;
  /** Allowed port ranges; absent = any port. */
  ports?: [number, number][];
}

export const MAX_REGEX_LENGTH = 1000;
const MAX_ENTRY_LENGTH = 2048;

function parsePorts(spec: string): [number, number][] {
  if (spec === '*') return [[0, 65535]];
  const out: [number, number][] = [];
  for (const part of spec.split(',')) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part.trim());
    if (!m) throw new Error(`invalid port ${JSON.stringify(part)} (a port, a range like 8000-8100, a comma list, or *)`);
    const lo = Number(m[1]);
    const hi = m[2] !== undefined ? Number(m[2]) : lo;
    if (lo > 65535 || hi > 65535) throw new Error(`port out of range: ${part} (0-65535)`);
    if (lo > hi) throw new Error(`invalid port range ${part}: start is after end`);
    out.push([lo, hi]);
  }
  return out;
}

function hostRule(text: string, line: number, host: string, ports: [number, number][] | undefined): ScopeRule {
  const base = { text, line, ...(ports ? { ports } : {}) };
  if (host === '*') return { ...base, kind: 'any', host: '*' };
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(host);
  if (cidr) {
    const bare = cidr[1]!.replace(/^\[|\]$/g, '');
    const a = ipaddr.IPv4.isValidFourPartDecimal(bare) || (bare.includes(':') && ipaddr.IPv6.isValid(bare)) ? parseIp(bare) : undefined;
    if (!a) throw new Error(`invalid CIDR ${JSON.stringify(host)}`);
    const bits = Number(cidr[2]);
    const max = a.kind() === 'ipv4' ? 32 : 128;
    if (bits > max) throw new Error(`invalid CIDR ${JSON.stringify(host)}: prefix longer than ${max}`);
    const net = networkOf(a, bits);
    return { ...base, kind: 'cidr', host: `${net.toString()}/${bits}`, addr: net, bits };
  }
  if (host.includes(':') || /^\d+(\.\d+){3}$/.test(host)) {
    // Rules are strict: dotted-quad IPv4 or valid IPv6 only.
    const bare = host.replace(/^\[|\]$/g, '');
    if (!(ipaddr.IPv4.isValidFourPartDecimal(bare) || (bare.includes(':') && ipaddr.IPv6.isValid(bare)))) throw new Error(`invalid IP address ${JSON.stringify(host)}`);
    const a = parseIp(bare)!;
    return { ...base, kind: 'ip', host: a.toString(), addr: a, bits: a.kind() === 'ipv4' ? 32 : 128 };
  }
  let kind: RuleKind = 'domain';
  let name = host;
  if (name.startsWith('*.')) {
    kind = 'wildcard';
    name = name.slice(2);
  } else if (name.startsWith('.')) {
    kind = 'suffix';
    name = name.slice(1);
  }
  if (name.includes('*')) throw new Error(`wildcards are only allowed as a leading "*." (got ${JSON.stringify(host)}); use a regex (re:...) for other patterns`);
  const norm = normaliseHostname(name);
  if (!norm) throw new Error(`invalid host name ${JSON.stringify(host)}`);
  return { ...base, kind, host: norm };
}

/** One entry (no `!`, no comment) as a rule; throws with a message on a bad entry. */
export function parseRule(entry: string, line = 0): ScopeRule {
  const text = entry.trim();
  if (!text) throw new Error('empty entry');
  if (text.length > MAX_ENTRY_LENGTH) throw new Error(`entry longer than ${MAX_ENTRY_LENGTH} characters`);
  let pattern: string | undefined;
  if (text.startsWith('re:')) pattern = text.slice(3);
  else if (text.length >= 2 && text.startsWith('/') && text.endsWith('/')) pattern = text.slice(1, -1);
  if (pattern !== undefined) {
    if (!pattern) throw new Error('empty regex');
    if (pattern.length > MAX_REGEX_LENGTH) throw new Error(`regex longer than ${MAX_REGEX_LENGTH} characters`);
    let regex: RE2JS;
    try {
      regex = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    } catch (err) {
      throw new Error(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
    return { text, line, kind: 'regex', host: pattern, regex };
  }
  if (/\s/.test(text)) throw new Error(`an entry must not contain spaces: ${JSON.stringify(text)}`);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new Error(`a URL is not a scope entry (${JSON.stringify(text)}); write its host, e.g. example.com or example.com:443`);
  // Port suffix: `[v6…]:ports`, or `host:ports` when there is exactly one colon.
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) throw new Error(`missing "]" in ${JSON.stringify(text)}`);
    const rest = text.slice(end + 1);
    if (rest && !rest.startsWith(':')) throw new Error(`unexpected text after "]" in ${JSON.stringify(text)}`);
    const inner = text.slice(1, end);
    if (!inner.includes(':')) throw new Error(`brackets are only for IPv6 addresses: ${JSON.stringify(text)}`);
    return hostRule(text, line, inner, rest ? parsePorts(rest.slice(1)) : undefined);
  }
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    const i = text.indexOf(':');
    const host = text.slice(0, i);
    if (!host) throw new Error(`missing host before ":" in ${JSON.stringify(text)}`);
    return hostRule(text, line, host, parsePorts(text.slice(i + 1)));
  }
  return hostRule(text, line, text, undefined);
}

function portMatches(rule: ScopeRule, v: ScopeValue): boolean {
  if (!rule.ports) return true;
  if (v.port === undefined) return false;
  return rule.ports.some(([lo, hi]) => v.port! >= lo && v.port! <= hi);
}

function sameFamily(a: ipaddr.IPv4 | ipaddr.IPv6, b: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return a.kind() === b.kind();
}

/** `a/abits` contains `b/bbits`. */
function contains(a: ipaddr.IPv4 | ipaddr.IPv6, abits: number, b: ipaddr.IPv4 | ipaddr.IPv6, bbits: number): boolean {
  if (!sameFamily(a, b) || bbits < abits) return false;
  return (b as ipaddr.IPv4).match(a as ipaddr.IPv4, abits);
}

/**
 * Whether `rule` matches `v`. `mode` matters for ranges only: an include rule must contain the whole
 * range of a CIDR value; an exclude rule matches as soon as the ranges overlap.
 */
export function ruleMatches(rule: ScopeRule, v: ScopeValue, mode: 'include' | 'exclude'): boolean {
  if (!portMatches(rule, v)) return false;
  switch (rule.kind) {
    case 'any':
      return true;
    case 'regex':
      return rule.regex!.matcher(v.host).find();
    case 'domain':
      return v.kind === 'host' && v.host === rule.host;
    case 'wildcard':
      return v.kind === 'host' && v.host.endsWith(`.${rule.host}`);
    case 'suffix':
      return v.kind === 'host' && (v.host === rule.host || v.host.endsWith(`.${rule.host}`));
    case 'ip':
    case 'cidr': {
      if (v.kind === 'host' || !v.addr || v.bits === undefined) return false;
      if (contains(rule.addr!, rule.bits!, v.addr, v.bits)) return true;
      return mode === 'exclude' && contains(v.addr, v.bits, rule.addr!, rule.bits!);
    }
  }
}
