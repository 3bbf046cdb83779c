/**
 * Recon helpers the public Osmedeus v5 workflows call: `nmap_to_jsonl` (probe-port: nmap XML or
 * grepable output → one JSON object per host with open ports, the input of db_import_port_assets)
 * and `detect_language` (do-scan-repo: the dominant programming language of a source folder).
 */
import { closeSync, openSync, readdirSync, readSync, type Dirent } from 'node:fs';
import { extname, join } from 'node:path';
import type { FnImpl } from './registry.js';
import { argStr, isDirectory, readText, splitLines, writeText } from './helpers.js';

interface PortDetail {
  protocol?: string;
  state?: string;
  service?: string;
  product?: string;
  version?: string;
  service_info?: string;
}

interface HostRecord {
  asset_value: string;
  host_ip: string;
  asset_type: 'ip';
  open_ports: string[];
  ports: Record<string, PortDetail>;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
    }
    return XML_ENTITIES[e.toLowerCase()] ?? whole;
  });
}

/** Attributes of the first `<tag …>` in `xml` (undefined when absent). */
function attrsOf(xml: string, tag: string): Record<string, string> | undefined {
  const m = new RegExp(`<${tag}\\b([^>]*)>`).exec(xml);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  for (const a of m[1]!.matchAll(/([\w:-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) out[a[1]!] = unescapeXml(a[3] ?? a[4] ?? '');
  return out;
}

function compactDetail(d: PortDetail): PortDetail {
  const out: PortDetail = {};
  for (const [k, v] of Object.entries(d) as [keyof PortDetail, string | undefined][]) if (v) out[k] = v;
  return out;
}

/** Hosts of an nmap XML report (`-oX` / `-oA`); hosts without any port entry are left out. */
export function parseNmapXml(text: string): HostRecord[] {
  const hosts: HostRecord[] = [];
  for (const block of text.matchAll(/<host\b[^>]*>([\s\S]*?)<\/host>/g)) {
    const body = block[1]!;
    // Prefer the IP address when nmap also reports a MAC address.
    const addresses = [...body.matchAll(/<address\b([^>]*)\/?>/g)].map((m) => attrsOf(`<address${m[1]}>`, 'address') ?? {});
    const addr = addresses.find((a) => a.addrtype === 'ipv4' || a.addrtype === 'ipv6') ?? addresses[0];
    const ip = addr?.addr ?? '';
    if (!ip) continue;
    const rec: HostRecord = { asset_value: ip, host_ip: ip, asset_type: 'ip', open_ports: [], ports: {} };
    for (const pm of body.matchAll(/<port\b([^>]*)>([\s\S]*?)<\/port>|<port\b([^>]*)\/>/g)) {
      const attrs = attrsOf(`<port${pm[1] ?? pm[3] ?? ''}>`, 'port') ?? {};
      const inner = pm[2] ?? '';
      const id = attrs.portid ?? '';
      if (!id) continue;
      const state = attrsOf(inner, 'state')?.state ?? '';
      const svc = attrsOf(inner, 'service') ?? {};
      const protocol = attrs.protocol ?? '';
      if (state === 'open' || state === 'filtered') rec.open_ports.push(`${id}/${protocol}`);
      rec.ports[id] = compactDetail({
        protocol,
        state,
        service: svc.name,
        product: svc.product,
        version: svc.version,
        service_info: svc.extrainfo || (svc.method ? `method=${svc.method}` : undefined),
      });
    }
    if (Object.keys(rec.ports).length > 0) hosts.push(rec);
  }
  return hosts;
}

/** Hosts of an nmap grepable report (`-oG`, `.gnmap`): `Host: ip (name)\tPorts: 80/open/tcp//http///, …`. */
export function parseNmapGrepable(text: string): HostRecord[] {
  const hosts: HostRecord[] = [];
  for (const line of splitLines(text)) {
    if (!line.startsWith('Host:') || !line.includes('Ports:')) continue;
    const fields = line.split('\t');
    const ip = fields[0]!.replace(/^Host:\s*/, '').trim().split(/\s+/)[0] ?? '';
    if (!ip) continue;
    const rec: HostRecord = { asset_value: ip, host_ip: ip, asset_type: 'ip', open_ports: [], ports: {} };
    const portsField = fields.find((f) => f.startsWith('Ports:'));
    for (const entry of (portsField ?? '').replace(/^Ports:\s*/, '').split(', ')) {
      const parts = entry.split('/');
      if (parts.length < 3 || !parts[0]) continue;
      const [id, state, protocol] = [parts[0]!.trim(), parts[1] ?? '', parts[2] ?? ''];
      if (state === 'open' || state === 'filtered') rec.open_ports.push(`${id}/${protocol}`);
      rec.ports[id] = compactDetail({ protocol, state, service: parts[4], version: parts[6] });
    }
    if (Object.keys(rec.ports).length > 0) hosts.push(rec);
  }
  return hosts;
}

// Extension → language, and shebang fragments → language, for detect_language.
const EXT_LANG: Record<string, string> = {
  '.go': 'golang', '.py': 'python', '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.jsx': 'javascript',
  '.ts': 'typescript', '.tsx': 'typescript', '.java': 'java', '.kt': 'kotlin', '.kts': 'kotlin', '.scala': 'scala',
  '.rb': 'ruby', '.php': 'php', '.cs': 'csharp', '.c': 'c', '.h': 'c', '.cpp': 'cpp', '.cc': 'cpp', '.cxx': 'cpp',
  '.hpp': 'cpp', '.rs': 'rust', '.swift': 'swift', '.m': 'objective-c', '.pl': 'perl', '.pm': 'perl', '.sh': 'shell',
  '.bash': 'shell', '.lua': 'lua', '.r': 'r', '.ex': 'elixir', '.exs': 'elixir', '.erl': 'erlang', '.hs': 'haskell',
  '.clj': 'clojure', '.groovy': 'groovy', '.dart': 'dart', '.vue': 'vue', '.svelte': 'svelte', '.sol': 'solidity',
};
const SHEBANG_LANG: [string, string][] = [
  ['python', 'python'], ['node', 'javascript'], ['ruby', 'ruby'], ['perl', 'perl'], ['bash', 'shell'], ['/bin/sh', 'shell'], ['lua', 'lua'],
];
// Folders that hold tests, vendored code or build output rather than the project's own sources.
const SKIP_DIRS = new Set([
  'test', 'tests', '__tests__', 'testdata', 'test_data', 'testing', 'static', 'public', 'assets', 'dist', 'build', 'out',
  'node_modules', 'vendor', 'third_party', 'third-party', 'external', '.git', '.svn', '.hg', '__pycache__', '.tox', '.mypy_cache',
]);
const MAX_FILES = 200_000;

function shebangLanguage(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(128);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const first = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    if (!first.startsWith('#!')) return undefined;
    return SHEBANG_LANG.find(([frag]) => first.includes(frag))?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The most frequent source language below `root` ("unknown" when none or not a folder). */
export function detectFolderLanguage(root: string): string {
  if (!isDirectory(root)) return 'unknown';
  const counts = new Map<string, number>();
  const stack = [root];
  let seen = 0;
  while (stack.length > 0 && seen < MAX_FILES) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name.toLowerCase())) stack.push(p);
        continue;
      }
      if (!e.isFile()) continue;
      seen++;
      const ext = extname(e.name).toLowerCase();
      const lang = EXT_LANG[ext] ?? (ext === '' ? shebangLanguage(p) : undefined);
      if (lang) counts.set(lang, (counts.get(lang) ?? 0) + 1);
    }
  }
  let best = 'unknown';
  let bestCount = 0;
  for (const [lang, n] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (n > bestCount) {
      best = lang;
      bestCount = n;
    }
  }
  return best;
}

export const reconFormatFunctions: Record<string, FnImpl> = {
  nmap_to_jsonl: (_c, i, o) => {
    const input = argStr(i);
    const output = argStr(o);
    if (input === null || output === null) return false;
    const text = readText(input);
    if (text === null) return false;
    const hosts = input.toLowerCase().endsWith('.gnmap') ? parseNmapGrepable(text) : parseNmapXml(text);
    return writeText(output, hosts.map((h) => `${JSON.stringify(h)}\n`).join(''));
  },
  detect_language: (_c, p) => {
    const path = argStr(p);
    return path === null ? 'unknown' : detectFolderLanguage(path);
  },
};
