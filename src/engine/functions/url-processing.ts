/**
 * URL processing functions (reference §10.2 "url_processing", workflow-engine §2.7). URLs are
 * split with the RFC 3986 regex (no normalisation), so untouched parts come back byte for byte,
 * as Go's net/url does for the reference.
 */
import type { FnImpl } from './registry.js';
import { argInt, argStr, asText, forEachLine, isMissing, LineWriter } from './helpers.js';
import { getPath, parseObjectLine } from './output.js';

export interface UrlParts {
  scheme: string;
  /** undefined when the URL has no `//authority`. */
  authority?: string;
  userinfo: string;
  host: string;
  port: string;
  /** Raw (still escaped) path. */
  path: string;
  query?: string;
  fragment?: string;
}

const RFC3986 = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#([\s\S]*))?$/;

/** Splits a URL into its raw parts; null when the authority is malformed (e.g. a bad port). */
export function splitUrl(raw: string): UrlParts | null {
  const m = RFC3986.exec(raw);
  if (!m) return null;
  const authority = m[2];
  let userinfo = '';
  let hostport = authority ?? '';
  const at = hostport.lastIndexOf('@');
  if (at >= 0) {
    userinfo = hostport.slice(0, at);
    hostport = hostport.slice(at + 1);
  }
  let host = hostport;
  let port = '';
  if (hostport.startsWith('[')) {
    const end = hostport.indexOf(']');
    if (end < 0) return null;
    host = hostport.slice(1, end);
    const after = hostport.slice(end + 1);
    if (after !== '' && !/^:\d*$/.test(after)) return null;
    port = after.slice(1);
  } else {
    const colon = hostport.lastIndexOf(':');
    if (colon >= 0) {
      port = hostport.slice(colon + 1);
      host = hostport.slice(0, colon);
      if (!/^\d*$/.test(port)) return null;
    }
  }
  return { scheme: (m[1] ?? '').toLowerCase(), authority, userinfo, host, port, path: m[3] ?? '', query: m[4], fragment: m[5] };
}

/** Reassembles parts (the inverse of splitUrl). */
export function joinUrl(u: UrlParts): string {
  let out = u.scheme ? `${u.scheme}:` : '';
  if (u.authority !== undefined) out += `//${u.authority}`;
  out += u.path;
  if (u.query !== undefined && u.query !== '') out += `?${u.query}`;
  if (u.fragment !== undefined && u.fragment !== '') out += `#${u.fragment}`;
  return out;
}

const unescape = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Go url.QueryEscape: everything but [A-Za-z0-9-_.~] escaped, spaces as '+'. */
export function queryEscape(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+');
}

/** Go's path escaping: like QueryEscape but keeps `$&+,/:;=@` and uses %20. */
function pathEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%(24|26|2B|2C|2F|3A|3B|3D|40)/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

const MULTI_PART_TLDS = new Set([
  'co.uk', 'com.au', 'co.jp', 'co.nz', 'co.za', 'com.br', 'com.cn', 'com.mx', 'com.tw', 'com.hk', 'com.sg', 'org.uk',
  'net.au', 'gov.uk', 'ac.uk', 'edu.au', 'co.in', 'com.ar', 'com.co', 'co.kr', 'or.jp', 'ne.jp', 'ac.jp', 'go.jp',
]);

/** sub.example.co.uk → [sub, example, co.uk] (the reference's fixed list of two-label suffixes). */
export function domainParts(domain: string): [string, string, string] {
  if (!domain) return ['', '', ''];
  const parts = domain.split('.');
  if (parts.length === 1) return ['', parts[0]!, ''];
  const two = parts.slice(-2).join('.');
  if (MULTI_PART_TLDS.has(two)) {
    if (parts.length === 2) return ['', '', two];
    return [parts.slice(0, -3).join('.'), parts[parts.length - 3]!, two];
  }
  return [parts.slice(0, -2).join('.'), parts[parts.length - 2]!, parts[parts.length - 1]!];
}

/** unfurl-style formatting of one URL; '' when it does not parse. */
export function formatUrl(raw: string, format: string): string {
  const u = splitUrl(raw);
  if (!u) return '';
  const [sub, root, tld] = domainParts(u.host);
  const path = unescape(u.path);
  const base = path.split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  const ext = dot >= 0 && dot < base.length - 1 ? base.slice(dot + 1) : '';
  const query = u.query ?? '';
  const fragment = unescape(u.fragment ?? '');
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%' || i + 1 >= format.length) {
      out += c;
      continue;
    }
    const d = format[++i]!;
    switch (d) {
      case '%': out += '%'; break;
      case 's': out += u.scheme; break;
      case 'u': out += u.userinfo; break;
      case 'd': out += u.host; break;
      case 'S': out += sub; break;
      case 'r': out += root; break;
      case 't': out += tld; break;
      case 'P': out += u.port; break;
      case 'p': out += path; break;
      case 'e': out += ext; break;
      case 'q': out += query; break;
      case 'f': out += fragment; break;
      case '@': if (u.userinfo) out += '@'; break;
      case ':': if (u.port) out += ':'; break;
      case '?': if (query) out += '?'; break;
      case '#': if (fragment) out += '#'; break;
      case 'a': out += `${u.userinfo ? `${u.userinfo}@` : ''}${u.host}${u.port ? `:${u.port}` : ''}`; break;
      default: out += `%${d}`;
    }
  }
  return out;
}

/** Drops the last path segment, keeps the trailing slash, drops query and fragment. */
export function parentUrl(raw: string): string {
  const u = splitUrl(raw);
  if (!u) return raw;
  let path = u.path;
  if (path === '' || path === '/') path = '/';
  else {
    const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
    const slash = trimmed.lastIndexOf('/');
    path = slash < 0 ? '/' : trimmed.slice(0, slash + 1);
  }
  return joinUrl({ ...u, path, query: undefined, fragment: undefined });
}

/** Query pairs in order (Go ParseQuery: '+' is a space). */
function queryPairs(query: string): [string, string][] {
  return [...new URLSearchParams(query)];
}

/** Every query value replaced (or appended to); keys re-encoded sorted, as Go's Values.Encode. */
export function replaceQuery(raw: string, value: string, mode: string): string {
  const u = splitUrl(raw);
  if (!u || !u.query) return raw;
  const pairs = queryPairs(u.query);
  if (pairs.length === 0) return raw;
  const keys = [...new Set(pairs.map(([k]) => k))].sort();
  const encoded = keys.flatMap((k) => pairs.filter(([pk]) => pk === k).map(([, v]) => `${queryEscape(k)}=${queryEscape(mode === 'append' ? v + value : value)}`));
  return joinUrl({ ...u, query: encoded.join('&') });
}

/** Replaces the 1-indexed path segment (≤0: every segment). */
export function replacePath(raw: string, value: string, position: number): string {
  const u = splitUrl(raw);
  if (!u) return raw;
  const path = u.path.replace(/^\//, '');
  if (path === '') return raw;
  const segments = path.split('/');
  const v = pathEscape(value);
  if (position <= 0) segments.fill(v);
  else if (position <= segments.length) segments[position - 1] = v;
  else return raw;
  return joinUrl({ ...u, path: `/${segments.join('/')}` });
}

const STATIC_RE = /\.(png|apng|bmp|gif|ico|cur|jpg|jpeg|jfif|pjp|pjpeg|svg|tif|tiff|webp|xbm|3gp|aac|flac|mpg|mpeg|mp3|mp4|m4a|m4v|m4p|oga|ogg|ogv|mov|wav|webm|eot|woff|woff2|ttf|otf|css)(?:\?|#|$)/i;
const NOISE_RES = [
  /(\d{2,4})(-|\/)(\d{1,2})(-|\/)(\d{1,2})/,
  /\/(articles|about|blog|event|events|shop|post|posts|product|products|docs|support|pages|media|careers|jobs|video|videos|resource|resources|news)\/.*/,
  /.*\/[0-9]+$/,
  /.*\/[0-9]+\.[a-z]+$/,
];

/** Dedupe key hostname|path|sorted param names, or null when a path segment looks generated. */
function urlKey(u: UrlParts): string | null {
  const path = unescape(u.path);
  for (const seg of path.split('/')) if (seg.length > 100 || (seg.match(/-/g)?.length ?? 0) > 3) return null;
  const names = [...new Set(queryPairs(u.query ?? '').map(([k]) => k))].sort();
  return `${u.host}-${path}-${names.join('-')}`;
}

/** interesting_urls: drop static files, dedupe by host+path+param names, one noisy URL per host. */
function interestingUrls(src: string, dest: string, jsonField: string): boolean {
  const seen = new Set<string>();
  const noisyHosts = new Set<string>();
  const out: string[] = [];
  const readable = forEachLine(src, (line) => {
    const raw = line.trim();
    if (!raw) return;
    let url = raw;
    if (jsonField) {
      const obj = parseObjectLine(raw);
      const v = obj ? getPath(obj, jsonField) : undefined;
      if (typeof v !== 'string' || v === '') return;
      url = v;
    }
    if (STATIC_RE.test(url)) return;
    const u = splitUrl(url);
    if (!u || !u.host) return;
    const key = urlKey(u);
    if (key === null || seen.has(key)) return;
    if (NOISE_RES.some((re) => re.test(url))) {
      if (!noisyHosts.has(u.host)) {
        noisyHosts.add(u.host);
        out.push(raw === url ? url : raw);
      }
      return;
    }
    seen.add(key);
    out.push(jsonField ? raw : url);
  });
  if (!readable) return false;
  try {
    const w = new LineWriter(dest);
    for (const l of out) w.write(l);
    w.close();
    return true;
  } catch {
    return false;
  }
}

/** The url processing functions, by snake_case name (aliases come from the catalogue). */
export const urlProcessingFunctions: Record<string, FnImpl> = {
  get_parent_url: (_c, u) => {
    const url = argStr(u);
    return url === null ? '' : parentUrl(url);
  },
  parse_url: (_c, u, f) => {
    const url = argStr(u);
    const format = argStr(f);
    return url === null || format === null ? '' : formatUrl(url, format);
  },
  parse_url_file: (_c, i, f, o) => {
    const input = argStr(i);
    const format = argStr(f);
    const output = argStr(o);
    if (input === null || format === null || output === null) return false;
    const seen = new Set<string>();
    const ok = forEachLine(input, (line) => {
      const t = line.trim();
      if (!t) return;
      const r = formatUrl(t, format);
      if (r) seen.add(r);
    });
    if (!ok) return false;
    try {
      const w = new LineWriter(output);
      for (const l of seen) w.write(l);
      w.close();
      return true;
    } catch {
      return false;
    }
  },
  query_replace: (_c, u, v, m) => {
    const url = argStr(u);
    if (url === null) return '';
    return replaceQuery(url, isMissing(v) ? '' : asText(v), argStr(m) ?? 'replace');
  },
  path_replace: (_c, u, v, p) => {
    const url = argStr(u);
    if (url === null) return '';
    return replacePath(url, isMissing(v) ? '' : asText(v), argInt(p, 1));
  },
  interesting_urls: (_c, s, d, f) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null) return false;
    return interestingUrls(src, dest, argStr(f) ?? '');
  },
};
