/**
 * Target heuristics and the workspace name `TargetSpace` (reference workflow-engine §2.4), plus
 * the path-safe form of foreach values (§3.7) and target-type checks (§1.4).
 *
 * No network access at any level: the reference probes DNS for wildcards at `basic` and sends an
 * HTTP request / DNS lookup at `advanced`. Those probes make a plan depend on the network, leak
 * the target to resolvers before the operator ran anything, and cost seconds per target — so we
 * skip them: `TargetIsWildcard` is always false and `TargetStatusCode`, `TargetContentLength`,
 * `TargetResolvedIP` are always ''. A workflow that needs them can probe in a step.
 */
import { statSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import { randomInt } from 'node:crypto';
import { parse as parseDomainName } from 'tldts';
import { errors } from '../errors.js';
import { DOMAIN_RE, HEURISTIC_DOMAIN_RE, NUMBER_RE, crc32, isCidr, isHttpUrl, isIpAddress, isRepo, splitIpPort } from './tpl-net.js';

export type HeuristicsLevel = 'none' | 'basic' | 'advanced';
export type TargetKind = 'url' | 'domain' | 'ip' | 'cidr' | 'file' | 'unknown';

export interface AnalyzeOptions {
  level?: HeuristicsLevel;
  /** `-S/--space`: forces TargetSpace. */
  space?: string;
  /** Folder relative file targets are resolved against (default: process cwd). */
  cwd?: string;
  /** Clock for the random long-target form (tests). */
  now?: Date;
}

export interface TargetAnalysis {
  type: TargetKind;
  targetSpace: string;
  vars: Record<string, unknown>;
}

const UNSAFE_CHARS = /[/\\:*?"<>|]/g;
// Control characters never belong in a folder name, whatever the reference did.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;
const CODE_HOSTS = new Set(['github.com', 'gitlab.com', 'bitbucket.org', 'codeberg.org', 'gitea.com']);
const REPO_PATH_STOPS = ['/archive/', '/releases/', '/raw/', '/blob/', '/tree/', '/commit/', '/pull/', '/issues/', '/-/'];
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

function replaceUnsafe(value: string): string {
  return value.replace(UNSAFE_CHARS, '_').replace(CONTROL_CHARS, '_');
}

/** Never let a workspace name be `.`/`..`/empty: Output = Workspaces/<TargetSpace> must stay inside. */
function safeSpace(value: string): string {
  const cleaned = replaceUnsafe(value);
  if (cleaned === '' || /^\.+$/.test(cleaned)) return cleaned.replace(/\./g, '_') || '_';
  return cleaned;
}

function randomLower(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += LOWER[randomInt(LOWER.length)];
  return out;
}

/** Step 1 of §2.4: sanitized target, or `<first 6>-<6 random>-<unix ts>` when longer than 30 bytes. */
function defaultSpace(target: string, now: Date): string {
  const sanitized = safeSpace(target);
  if (Buffer.byteLength(sanitized, 'utf8') <= 30) return sanitized;
  return `${Array.from(sanitized).slice(0, 6).join('')}-${randomLower(6)}-${Math.floor(now.getTime() / 1000)}`;
}

/**
 * Path-safe form of a foreach value (`_<var>_`): unsafe characters become `_`; longer than 30
 * bytes → first 20 bytes + `_` + CRC-32 of the ORIGINAL value (8 hex). Multi-byte characters are
 * never split, so a non-ASCII value may yield fewer than 20 leading bytes.
 */
export function pathSafe(value: string): string {
  const sanitized = value.replace(UNSAFE_CHARS, '_');
  const bytes = Buffer.from(sanitized, 'utf8');
  if (bytes.length <= 30) return sanitized;
  let end = 20;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}_${crc32(value).toString(16).padStart(8, '0')}`;
}

function isRegularFile(target: string, cwd?: string): boolean {
  try {
    return statSync(resolve(cwd ?? process.cwd(), target)).isFile();
  } catch {
    return false;
  }
}

/** Classifies a target the way §2.4 does (file → cidr → url → ip → domain), without side effects beyond a stat. */
export function detectTargetType(target: string, cwd?: string): TargetKind {
  const value = target.trim();
  if (value === '') return 'unknown';
  if (isRegularFile(value, cwd)) return 'file';
  // The reference calls `10.0.0.0/24` a URL (it contains "/"); a CIDR is its own kind here.
  if (isCidr(value)) return 'cidr';
  if (/^https?:\/\//i.test(value) || value.includes('/')) return 'url';
  if (splitIpPort(value)) return 'ip';
  if (HEURISTIC_DOMAIN_RE.test(value)) return 'domain';
  return 'unknown';
}

function domainParts(host: string): { root: string; tld: string; sld: string } {
  const info = parseDomainName(host, { allowPrivateDomains: true });
  const labels = host.split('.');
  const root = info.domain ?? (labels.length >= 2 ? labels.slice(-2).join('.') : host);
  const tld = info.publicSuffix ?? '';
  const sld = root && tld ? (root.endsWith(`.${tld}`) ? root.slice(0, -(tld.length + 1)) : root) : '';
  return { root, tld, sld };
}

/** `owner__repo` for code-hosting URLs with at least two path segments, else ''. */
export function repoSlug(host: string, urlPath: string): string {
  if (!CODE_HOSTS.has(host.toLowerCase())) return '';
  // Cut at the EARLIEST marker: `/-/tree/x` must lose both `/-/` and `/tree/`.
  const lower = urlPath.toLowerCase();
  const cut = Math.min(...REPO_PATH_STOPS.map((stop) => lower.indexOf(stop)).filter((i) => i !== -1), urlPath.length);
  const segments = urlPath.slice(0, cut).replace(/^\/+|\/+$/g, '');
  if (segments === '') return '';
  const parts = segments.split('/');
  return parts.length >= 2 ? parts.join('__') : '';
}

function analyzeUrl(target: string): { vars: Record<string, unknown>; space: string } | undefined {
  const raw = /^https?:\/\//i.test(target) ? target : `https://${target}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const scheme = url.protocol.slice(0, -1);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port || (scheme === 'https' ? '443' : '80');
  // TargetHostname is host[:port] as the user wrote it (WHATWG drops default ports).
  const authority = raw.slice(raw.indexOf('://') + 3).split(/[/?#]/, 1)[0]!;
  const hostname = authority.slice(authority.lastIndexOf('@') + 1);
  const ipHost = isIpAddress(host);
  const { root, tld, sld } = ipHost ? { root: host, tld: '', sld: '' } : domainParts(host);
  const slug = repoSlug(host, url.pathname);
  const lastSlash = url.pathname.lastIndexOf('/');
  const dir = url.pathname.slice(0, lastSlash + 1).replace(/\/$/, '');
  const defaultPort = (scheme === 'https' && port === '443') || (scheme === 'http' && port === '80');
  const hostForUrl = host.includes(':') ? `[${host}]` : host;
  return {
    space: slug || root,
    vars: {
      TargetBaseURL: raw,
      TargetRootURL: defaultPort ? `${scheme}://${hostForUrl}` : `${scheme}://${hostForUrl}:${port}`,
      TargetHostname: hostname,
      TargetRootDomain: root,
      TargetTLD: tld,
      TargetSLD: sld,
      Org: sld,
      TargetHost: host,
      TargetPort: port,
      TargetPath: dir || '/',
      TargetFileExt: url.pathname.slice(lastSlash + 1),
      TargetScheme: scheme,
      TargetRepoSlug: slug,
    },
  };
}

/**
 * Analyzes a target: its kind, the workspace name (`TargetSpace`) and the heuristic variables.
 * `-S` (opts.space) wins over everything; every result is a single safe path component.
 */
export function analyzeTarget(target: string, opts: AnalyzeOptions = {}): TargetAnalysis {
  const level = opts.level ?? 'basic';
  const now = opts.now ?? new Date();
  let type: TargetKind = 'unknown';
  let space = defaultSpace(target, now);
  let vars: Record<string, unknown> = {};

  if (level !== 'none') {
    type = detectTargetType(target, opts.cwd);
    const value = target.trim();
    if (type === 'file') {
      const base = basename(value);
      space = `${base.slice(0, base.length - extname(base).length).replace(/_/g, '-')}-file`;
    } else if (type === 'cidr') {
      space = replaceUnsafe(value);
      vars = { TargetRootDomain: value };
    } else if (type === 'url') {
      const url = analyzeUrl(value);
      if (url) {
        vars = url.vars;
        if (url.space) space = url.space;
      } else {
        type = 'unknown';
      }
    } else if (type === 'ip') {
      // The reference keeps the port in the workspace name (`1.2.3.4:8080`); we name it after the
      // IP so the name stays a portable folder name and matches URL targets on the same host.
      const { ip } = splitIpPort(value)!;
      space = ip;
      vars = { TargetRootDomain: ip };
    } else if (type === 'domain') {
      const { root, tld, sld } = domainParts(value.toLowerCase());
      space = root;
      vars = { TargetRootDomain: root, TargetTLD: tld, TargetSLD: sld, Org: sld, TargetIsWildcard: false };
    }
    vars = { TargetType: type, ...vars, TargetStatusCode: '', TargetContentLength: '', TargetResolvedIP: '' };
  }

  if (opts.space) space = opts.space;
  return { type, targetSpace: safeSpace(space), vars };
}

const TARGET_TYPES = new Set(['domain', 'subdomain', 'url', 'cidr', 'ip', 'repo', 'path', 'file', 'folder', 'number', 'string']);

function statKind(value: string, cwd?: string): 'file' | 'dir' | undefined {
  try {
    const st = statSync(resolve(cwd ?? process.cwd(), value));
    return st.isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

function matchesOne(value: string, type: string, opts: { cwd?: string; variable?: boolean }): boolean {
  switch (type) {
    case 'domain':
      return DOMAIN_RE.test(value);
    case 'subdomain':
      return DOMAIN_RE.test(value) && value.split('.').length - 1 >= 2;
    case 'url':
      return isHttpUrl(value);
    case 'cidr':
      return isCidr(value);
    case 'ip':
      return isIpAddress(value);
    case 'repo':
      return isRepo(value);
    case 'number':
      return NUMBER_RE.test(value);
    case 'string':
      return true;
    case 'path':
      return value !== '';
    case 'file':
      return opts.variable ? value !== '' : statKind(value, opts.cwd) === 'file';
    case 'folder':
      return opts.variable ? value !== '' : statKind(value, opts.cwd) === 'dir';
    default:
      return false;
  }
}

/**
 * True when `value` matches `type` — or any type of a comma list such as `domain,url` (§1.4).
 * `file`/`folder` check the filesystem unless `opts.variable` (variable-type semantics: non-empty).
 * Throws a validation error naming unknown type names.
 */
export function matchesTargetType(value: string, type: string, opts: { cwd?: string; variable?: boolean } = {}): boolean {
  const types = type.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = types.filter((t) => !TARGET_TYPES.has(t));
  if (unknown.length > 0) throw errors.validation(`unknown target type: ${unknown.join(', ')}`);
  return types.some((t) => matchesOne(value, t, opts));
}
