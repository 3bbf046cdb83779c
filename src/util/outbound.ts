/**
 * The outbound (SSRF) policy of server-side requests made for an API client: which hosts and
 * addresses such a request may reach.
 *
 * Loopback, link-local (cloud metadata at 169.254.169.254), private, unique-local, CGNAT,
 * multicast, broadcast, reserved and unspecified addresses are refused, and so are `localhost`
 * names; IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address. Address classes come from
 * ipaddr.js. URL hosts are judged after WHATWG parsing, which already turns `2130706433`,
 * `0x7f000001`, `0177.0.0.1` and `127.1` into `127.0.0.1`. A name is judged by every address it
 * resolves to, inside the socket's own lookup, so the address judged is the address connected
 * to (no DNS-rebinding window); redirects are followed by hand and every hop is judged again.
 *
 * `server.outbound_allowlist` opens what a deployment needs: exact host names, `*.domain` (or
 * `.domain`) suffixes, IP addresses and CIDR ranges. An allowlisted name is trusted whatever it
 * resolves to.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The policy as plain data (it crosses process boundaries inside a function context). */
export interface OutboundPolicy {
  /** `server.outbound_allowlist`: host names, `*.suffix`, IPs and CIDRs. */
  allowlist: string[];
}

/** The setting a refusal names. */
export const ALLOWLIST_SETTING = 'server.outbound_allowlist';

/** The error code of a connect-time refusal (the socket's lookup fails with it). */
export const REFUSED_CODE = 'EOSMOUTBOUND';

type Ipaddr = typeof ipaddr;
type DnsLookup = typeof dnsLookup;

/** A guard built from one allowlist. */
export interface OutboundGuard {
  /** Why the URL's host may not be contacted, or null (a name's addresses are checked at connect time). */
  checkUrl(url: URL): string | null;
  /** Why a literal address may not be contacted (null: allowed); `name` is shown with it. */
  checkAddress(ip: string, name?: string): string | null;
  /** A socket lookup that fails with REFUSED_CODE (and reports why) for a refused answer. */
  lookup(onRefused?: (why: string) => void): LookupFunction;
  /** The class of a non-public address ('loopback', 'private' …), '' for a public one, null for no IP. */
  addressKind(ip: string): string | null;
}

/**
 * The whole policy as one self-contained function of its two modules: it is also serialised into
 * the http child process (src/engine/functions/http-child.ts), so it must not reference anything
 * outside its own body.
 */
export function outboundGuardMain(ip: Ipaddr, lookupFn: DnsLookup, allowlist: readonly string[], setting: string, refusedCode: string): OutboundGuard {
  type Addr = ReturnType<Ipaddr['parse']>;
  const LABELS: Record<string, string> = {
    loopback: 'loopback',
    private: 'private',
    linkLocal: 'link-local',
    uniqueLocal: 'unique-local (private)',
    carrierGradeNat: 'carrier-grade NAT',
    unspecified: 'unspecified',
    broadcast: 'broadcast',
    multicast: 'multicast',
    deprecatedSiteLocal: 'site-local (private)',
  };
  const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254']);
  const isLiteral = (h: string) => ip.IPv4.isValidFourPartDecimal(h) || ip.IPv6.isValid(h);
  const bare = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);
  const normName = (h: string) => h.toLowerCase().replace(/\.$/, '');

  /** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
  const embedded = (a: Addr): Addr | undefined => {
    if (a.kind() !== 'ipv6') return undefined;
    const p = (a as InstanceType<Ipaddr['IPv6']>).parts;
    const v4 = (hi: number, lo: number) => new ip.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
    const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
    if (zeros(0, 5) && (p[5] === 0xffff || p[5] === 0)) return v4(p[6]!, p[7]!); // ::ffff:a.b.c.d, ::a.b.c.d
    if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!); // ::ffff:0:a.b.c.d
    if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!); // NAT64
    if (p[0] === 0x2002) return v4(p[1]!, p[2]!); // 6to4
    return undefined;
  };

  const parse = (text: string): Addr | null => {
    const h = bare(text);
    if (!isLiteral(h)) return null;
    try {
      return ip.parse(h);
    } catch {
      return null;
    }
  };

  const kindOf = (a: Addr): string => {
    const inner = embedded(a);
    const range = a.range();
    if (inner && range !== 'unspecified' && range !== 'loopback') return kindOf(inner);
    if (range === 'unicast') return '';
    if (METADATA.has(a.toString())) return 'link-local (cloud metadata)';
    return LABELS[range] ?? 'reserved';
  };

  const names = new Set<string>();
  const suffixes: string[] = [];
  const ranges: [Addr, number][] = [];
  for (const raw of allowlist) {
    const entry = normName(String(raw ?? '').trim());
    if (!entry) continue;
    if (entry.includes('/')) {
      try {
        const [addr, bits] = ip.parseCIDR(bare(entry.split('/')[0]!) + '/' + entry.split('/')[1]);
        ranges.push([addr, bits]);
      } catch {
        /* not a CIDR: never matches */
      }
      continue;
    }
    const literal = parse(entry);
    if (literal) ranges.push([literal, literal.kind() === 'ipv4' ? 32 : 128]);
    else if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
    else if (entry.startsWith('.')) suffixes.push(entry);
    else names.add(entry);
  }

  const listed = (a: Addr): boolean => {
    const forms = [a];
    const inner = embedded(a);
    if (inner) forms.push(inner);
    return forms.some((f) => ranges.some(([base, bits]) => base.kind() === f.kind() && f.match(base, bits)));
  };
  const trustedName = (host: string): boolean => {
    const h = normName(host);
    return names.has(h) || suffixes.some((s) => h.endsWith(s));
  };
  const refusal = (shown: string, kind: string) => `${shown} is ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address; add it to ${setting} to allow it`;

  const checkAddress = (text: string, name?: string): string | null => {
    const a = parse(text);
    const shown = name && normName(name) !== bare(text) ? `${name} (${bare(text)})` : bare(text);
    if (!a) return refusal(shown, 'unrecognised');
    const kind = kindOf(a);
    if (kind === '' || listed(a)) return null;
    return refusal(shown, kind);
  };

  const checkHost = (hostname: string): string | null => {
    const h = bare(hostname);
    if (isLiteral(h)) return checkAddress(h);
    if (trustedName(h)) return null;
    const n = normName(h);
    if (n === '' || n === 'localhost' || n.endsWith('.localhost')) return `${hostname} is a loopback name; add it to ${setting} to allow it`;
    return null;
  };

  return {
    checkUrl: (url) => checkHost(url.hostname),
    checkAddress,
    addressKind: (text) => {
      const a = parse(text);
      return a ? kindOf(a) : null;
    },
    lookup: (onRefused) =>
      ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        lookupFn(hostname, { ...options, all: true }, (err, addresses) => {
          if (err) return callback(err, '');
          const list = addresses as { address: string; family: number }[];
          const trusted = trustedName(hostname);
          let why = list.length === 0 ? `${hostname} has no address` : null;
          for (const a of list) why ??= trusted ? null : checkAddress(a.address, hostname);
          if (why) {
            onRefused?.(why);
            const e = new Error(why) as Error & { code?: string };
            e.code = refusedCode;
            return callback(e, '');
          }
          if (options.all) return callback(null, list);
          return callback(null, list[0]!.address, list[0]!.family);
        });
      }) as unknown as LookupFunction,
  };
}

/** The guard of `policy` in this process. */
export function outboundGuard(policy: OutboundPolicy): OutboundGuard {
  return outboundGuardMain(ipaddr, dnsLookup, policy.allowlist ?? [], ALLOWLIST_SETTING, REFUSED_CODE);
}

/** The policy of the current settings (`server.outbound_allowlist`). */
export function outboundPolicyOf(settings: unknown): OutboundPolicy {
  const s = settings as { settings?: { server?: { outbound_allowlist?: unknown } }; server?: { outbound_allowlist?: unknown } } | undefined;
  const list = s?.settings?.server?.outbound_allowlist ?? s?.server?.outbound_allowlist;
  return { allowlist: Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [] };
}

const strict = outboundGuard({ allowlist: [] });

/** True when `ip` (v4 or v6 text, brackets allowed) is not a public unicast address, or not an IP at all. */
export function isPrivateAddress(ip: string): boolean {
  return strict.addressKind(ip.split('%')[0]!) !== '';
}
