/**
 * What a checked value is: a hostname, an IP address or a CIDR range, with an optional port.
 * Values come from targets, foreach items and imported rows (untrusted text); they are never
 * resolved (no DNS) and never fetched. See docs/scope.md for what reads as a network value.
 */
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

export type ValueKind = 'host' | 'ip' | 'cidr';

export interface ScopeValue {
  /** The text as given. */
  raw: string;
  kind: ValueKind;
  /** Normalised host: lower case, no trailing dot, punycode; an IP in canonical form; a CIDR as `addr/bits`. */
  host: string;
  /** Explicit port, or the scheme's default port of a URL. */
  port?: number;
  /** IP or CIDR network address (IPv4-mapped IPv6 addresses become IPv4). */
  addr?: ipaddr.IPv4 | ipaddr.IPv6;
  /** Prefix length of a CIDR value (32/128 for a single IP). */
  bits?: number;
}

/** Default ports of URL schemes (a URL without a port is checked on its scheme's port). */
export const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, ws: 80, wss: 443, ftp: 21, ssh: 22, smtp: 25, ldap: 389, ldaps: 636, rdp: 3389 };

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** A host name in canonical form (lower case, no trailing dot, punycode), or undefined if it is not one. */
export function normaliseHostname(text: string): string | undefined {
  let h = text.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (!h || h.length > 253) return undefined;
  if (/[^\x21-\x7e]/.test(h)) {
    const ascii = domainToASCII(h);
    if (!ascii) return undefined;
    h = ascii;
  }
  return h.split('.').every((l) => LABEL.test(l)) ? h : undefined;
}

/** An IP address (IPv4-mapped IPv6 → IPv4); loose IPv4 forms (`0x7f.1`) are read as inet_aton does. */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let t = text.trim();
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  if (t.includes('%')) t = t.slice(0, t.indexOf('%')); // zone id
  if (!ipaddr.isValid(t)) return undefined;
  // ipaddr reads `10` or `1.2.3` as IPv4 (inet_aton); only dotted text with 4 parts or hex/octal forms count here.
  if (!t.includes(':') && !/^(?:(?:0x[0-9a-f]+|\d+)\.){1,3}(?:0x[0-9a-f]+|\d+)$/i.test(t)) return undefined;
  const a = ipaddr.parse(t);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) return (a as ipaddr.IPv6).toIPv4Address();
  return a;
}

function ipValue(raw: string, a: ipaddr.IPv4 | ipaddr.IPv6, port?: number): ScopeValue {
  return { raw, kind: 'ip', host: a.toString(), addr: a, bits: a.kind() === 'ipv4' ? 32 : 128, ...(port !== undefined ? { port } : {}) };
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 0 && n <= 65535 ? n : undefined;
}

/** A host (name or IP) with an optional port, from `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6. */
function hostPort(raw: string, authority: string, port?: number): ScopeValue | undefined {
  let host = authority;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return undefined;
    const rest = host.slice(end + 1);
    host = host.slice(1, end);
    if (rest) {
      if (!rest.startsWith(':')) return undefined;
      port = parsePort(rest.slice(1));
      if (port === undefined) return undefined;
    }
    const a = parseIp(host);
    return a ? ipValue(raw, a, port) : undefined;
  }
  const colons = host.split(':').length - 1;
  if (colons > 1) {
    const a = parseIp(host);
    return a ? ipValue(raw, a, port) : undefined;
  }
  if (colons === 1) {
    const [h, p] = host.split(':') as [string, string];
    port = parsePort(p);
    if (port === undefined) return undefined;
    host = h;
  }
  const a = parseIp(host);
  if (a) return ipValue(raw, a, port);
  const name = normaliseHostname(host);
  return name ? { raw, kind: 'host', host: name, ...(port !== undefined ? { port } : {}) } : undefined;
}

/**
 * Reads a value as a network location: a URL (host and port, userinfo ignored, the scheme's default
 * port when none is written), `host`, `host:port`, `host/path`, `user@host`, an IP (v4/v6, `[v6]:port`)
 * or a CIDR. Undefined when it is none of these.
 */
export function parseValue(input: string): ScopeValue | undefined {
  const raw = input;
  const s = input.trim();
  if (!s || s.length > 2048 || /\s/.test(s)) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(s);
  if (scheme) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      return undefined;
    }
    const port = url.port ? Number(url.port) : DEFAULT_PORTS[scheme[1]!.toLowerCase()];
    if (!url.hostname) return undefined;
    return hostPort(raw, url.hostname.startsWith('[') ? url.hostname : url.hostname.replace(/\.$/, ''), port);
  }
  // A CIDR range.
  const cidr = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (cidr) {
    const a = parseIp(cidr[1]!);
    const bits = Number(cidr[2]);
    if (a && bits <= (a.kind() === 'ipv4' ? 32 : 128)) {
      const net = networkOf(a, bits);
      return { raw, kind: 'cidr', host: `${net.toString()}/${bits}`, addr: net, bits };
    }
  }
  // host[:port][/path][?query][#frag], userinfo dropped.
  let authority = s;
  const bare = parseIp(authority);
  if (bare) return ipValue(raw, bare);
  const cut = authority.search(/[/?#]/);
  if (cut >= 0) authority = authority.slice(0, cut);
  const at = authority.lastIndexOf('@');
  if (at >= 0) authority = authority.slice(at + 1);
  if (!authority) return undefined;
  return hostPort(raw, authority);
}

/** The network address of `a/bits`. */
export function networkOf(a: ipaddr.IPv4 | ipaddr.IPv6, bits: number): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = a.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes);
}

/**
 * Whether a value reads as a network target for the purpose of checking loop items and imported
 * rows: a URL, an IP or CIDR, a host with a port, or a host name with a dot whose last label is
 * alphabetic (so words, numbers and relative paths such as `lists/a` are not). `localhost` counts.
 */
export function isNetworkValue(v: ScopeValue | undefined): v is ScopeValue {
  if (!v) return false;
  if (v.kind !== 'host') return true;
  if (v.port !== undefined || /^[a-z][a-z0-9+.-]*:\/\//i.test(v.raw.trim())) return true;
  if (v.host === 'localhost') return true;
  const labels = v.host.split('.');
  return labels.length >= 2 && /^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(labels[labels.length - 1]!);
}

/** The network values of an item: its whitespace/comma separated tokens that read as one (paths excluded). */
export function networkTokens(item: string): ScopeValue[] {
  const out: ScopeValue[] = [];
  for (const tok of item.split(/[\s,;]+/)) {
    const t = tok.replace(/^["'<(]+|["'>)]+$/g, '');
    if (!t || t.startsWith('/') || t.startsWith('./') || t.startsWith('~')) continue;
    const v = parseValue(t);
    if (isNetworkValue(v)) out.push(v);
  }
  return out;
}
