/**
 * Installer functions (reference server-api §10.2 "installer"):
 *
 * - `go_getter(url, dest)`: the subset of hashicorp go-getter osm supports. An http(s) URL (an
 *   optional `http::`/`https::` forcing prefix is accepted) is downloaded into the folder `dest`
 *   under the URL's last path segment (sanitised: the name never leaves `dest`); an archive (.zip,
 *   .tar.gz/.tgz, .tar.bz2, .tar.xz) is extracted into `dest` and removed, unless the URL carries
 *   `?archive=false`. `git::<url>` clones the repository into `dest`. Other getters (s3::, gcs::,
 *   hg:: …) fail loudly. Requests follow the outbound policy of the context (src/util/outbound.ts)
 *   like `wget`. True on success; false with a warning on a failed download.
 * - `go_getter_with_sshkey(key, git_url, dest)`: `git clone --depth 1` of a repository over SSH
 *   (an optional `git::` prefix is accepted) with the private key file `key` and no other identity
 *   (`ssh -i key -o IdentitiesOnly=yes -o BatchMode=yes`, never prompting). True on success; false
 *   with a warning when the key file is missing or the clone fails.
 * - `nix_install(package, dest?)`: `nix profile install nixpkgs#<package>` (into the profile `dest`
 *   when given), run with arguments as argv — never through a shell. Without `nix` on PATH it
 *   throws an error naming the missing `nix`. True when nix exited 0, false (with its stderr) when not.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, ok, runProgram } from './helpers.js';
import { refuseUrl, runNetChild } from './http-child.js';
import { archiveFunctions } from './archive.js';
import { unixCommandFunctions } from './unix-commands.js';
import { commandExists } from '../deps-check.js';

const DEFAULT_UA = 'Mozilla/5.0 (compatible; osm go_getter)';
const ARCHIVE_RE = /\.(zip|tar\.gz|tgz|tar\.bz2|tar\.xz)$/i;

function warn(ctx: FnContext, message: string): void {
  (ctx.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(`[WARN] ${message}`);
}

/** The file name a URL is saved under: its last path segment, reduced to a safe single name. */
export function downloadName(url: URL): string {
  let last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // keep the raw segment
  }
  const name = last.replace(/[^A-Za-z0-9._+-]/g, '_').replace(/^\.+/, '');
  return name === '' ? 'download' : name.slice(0, 200);
}

function goGetter(ctx: FnContext, rawUrl: string, dest: string): boolean {
  let src = rawUrl.trim();
  const forced = /^([a-z0-9]+)::/i.exec(src);
  if (forced) {
    const getter = forced[1]!.toLowerCase();
    src = src.slice(forced[0].length);
    if (getter === 'git') return unixCommandFunctions.git_clone!(ctx, src, dest) === true;
    if (getter !== 'http' && getter !== 'https') throw new Error(`not supported in osm: go_getter with the '${getter}::' getter (supported: http(s) URLs and git::)`);
  }
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    throw new Error(`go_getter: not a URL: ${JSON.stringify(src.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`not supported in osm: go_getter for ${url.protocol} URLs (supported: http(s) URLs and git::)`);
  const extract = url.searchParams.get('archive') !== 'false';
  url.searchParams.delete('archive');
  const refused = refuseUrl(ctx.outbound, url.href);
  if (refused) {
    warn(ctx, `go_getter: ${refused}`);
    return false;
  }
  mkdirSync(dest, { recursive: true });
  const name = downloadName(url);
  const archive = extract && ARCHIVE_RE.test(name);
  // An archive is fetched next to dest's contents, never inside it, then extracted (confined).
  const work = archive ? mkdtempSync(join(tmpdir(), 'osm-getter-')) : '';
  try {
    const output = join(archive ? work : dest, name);
    const r = runNetChild<{ ok: boolean; error?: string }>(ctx, { kind: 'download', url: url.href, output, ua: DEFAULT_UA, timeoutMs: 30 * 60_000 }, 60 * 60_000, ctx.outbound);
    if (r?.ok !== true) {
      warn(ctx, `go_getter: download of ${url.origin}${url.pathname} failed${r?.error ? `: ${r.error}` : ''}`);
      return false;
    }
    if (archive && archiveFunctions.extract_to!(ctx, output, dest) !== true) {
      warn(ctx, `go_getter: ${url.pathname} is not a valid archive`);
      return false;
    }
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
  }
  return true;
}

/** A word for `sh -c`: single-quoted, inner quotes escaped. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function goGetterWithSshKey(ctx: FnContext, key: string, rawUrl: string, dest: string): boolean {
  const url = rawUrl.trim().replace(/^git::/i, '');
  if (url === '' || url.startsWith('-') || /[\s\0]/.test(url)) throw new Error(`go_getter_with_sshkey: not a repository URL: ${JSON.stringify(rawUrl.slice(0, 200))}`);
  if (!existsSync(key) || !statSync(key).isFile()) {
    warn(ctx, `go_getter_with_sshkey: the key file ${key} does not exist`);
    return false;
  }
  // git runs GIT_SSH_COMMAND through the shell: the key path is one quoted word.
  const ssh = `ssh -i ${shellQuote(key)} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new`;
  const env = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: ssh };
  const r = runProgram(ctx, 'git', ['clone', '--depth', '1', '--', url, dest], { stdio: ['ignore', 'pipe', 'pipe'], env });
  if (ok(r)) return true;
  warn(ctx, `go_getter_with_sshkey: clone of ${url} failed (exit ${r.status ?? 'none'}): ${(r.error ?? r.stderr).trim().slice(0, 500)}`);
  return false;
}

/** True when `nix` is an executable on PATH. */
function findNix(): boolean {
  return commandExists('nix', process.env.PATH ?? '');
}

const NIX_PACKAGE = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;

export const installerFunctions: Record<string, FnImpl> = {
  go_getter: (ctx, u, d) => {
    const url = argStr(u);
    const dest = argStr(d);
    if (url === null || dest === null) throw new Error('go_getter(url, dest): url and dest are required');
    return goGetter(ctx, url, dest);
  },
  go_getter_with_sshkey: (ctx, k, u, d) => {
    const key = argStr(k);
    const url = argStr(u);
    const dest = argStr(d);
    if (key === null || url === null || dest === null) throw new Error('go_getter_with_sshkey(key, git_url, dest): key, git_url and dest are required');
    return goGetterWithSshKey(ctx, key, url, dest);
  },
  nix_install: (ctx, p, d) => {
    const pkg = argStr(p);
    if (pkg === null || !NIX_PACKAGE.test(pkg)) throw new Error(`nix_install: invalid package name ${JSON.stringify(String(p ?? '').slice(0, 100))}`);
    if (!findNix()) throw new Error(`nix_install: 'nix' is not installed (not found on PATH); install Nix (https://nixos.org/download) to use nix_install`);
    const dest = argStr(d);
    const args = ['--extra-experimental-features', 'nix-command flakes', 'profile', 'install'];
    if (dest) {
      mkdirSync(join(dest, '..'), { recursive: true });
      args.push('--profile', dest);
    }
    args.push(`nixpkgs#${pkg}`);
    const r = runProgram(ctx, 'nix', args, { stdio: ['ignore', 'pipe', 'pipe'], capMs: 60 * 60_000 });
    if (r.error === undefined && r.status === 0) return true;
    warn(ctx, `nix_install ${pkg} failed (exit ${r.status ?? 'none'}): ${(r.error ?? r.stderr).trim().slice(0, 500)}`);
    return false;
  },
};
