/**
 * Installs one binary from a direct-fetch registry entry (server-api §8.1): already present →
 * done (linked into the binaries folder unless it is a core tool); a download URL → fetched
 * (size cap, timeout), unpacked safely, the executable copied to `<binaries>/<name>` 0755; install
 * commands → run with `sh -c` ONLY when the registry is trusted, then the result is linked in.
 * A failure is returned as data, never thrown: one bad binary must not stop the others.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { isInside, isSafeName } from '../util/fs-safe.js';
import { ArchiveError } from './archive-names.js';
import { failureText, runShell } from './exec.js';
import { unpack } from './extract.js';
import { checkHttpUrl, fetchToFile, FetchError } from './fetch.js';
import { CORE_TOOLS, findExecutable, isBareWord, probeName, searchDirs } from './locate.js';
import { linkBinary, pickExecutable, placeBinary } from './place.js';
import { detectPackageManager, expandPackageManager, resolveInstallPlan, type Platform } from './platform.js';
import type { RegistryEntry } from './schema.js';

export const BINARY_DOWNLOAD_MAX_BYTES = 512 * 1024 * 1024;
export const BINARY_DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
export const COMMAND_TIMEOUT_MS = 15 * 60_000;
const CHECK_TIMEOUT_MS = 30_000;

export interface BinaryInstallContext {
  binaries: string;
  platform: Platform;
  /** Commands (install and check) of this registry may run. */
  trusted: boolean;
  /** Downloads may reach loopback/private addresses. */
  allowPrivate: boolean;
  /** PATH to search (default process.env.PATH). */
  pathEnv?: string;
}

export type BinaryAction = 'present' | 'linked' | 'downloaded' | 'command' | 'nix';

export interface BinaryOutcome {
  name: string;
  ok: boolean;
  action?: BinaryAction;
  /** Where the binary now is. */
  path?: string;
  error?: string;
}

const fail = (name: string, error: string): BinaryOutcome => ({ name, ok: false, error });

/** The PATH installer commands and look-ups use: binaries folder, PATH, then the usual per-user bins. */
export function installPath(ctx: Pick<BinaryInstallContext, 'binaries' | 'pathEnv'>): string {
  const home = homedir();
  return searchDirs(ctx.binaries, [ctx.pathEnv ?? process.env.PATH ?? '', join(home, 'go', 'bin'), join(home, '.local', 'bin'), join(home, '.cargo', 'bin')].join(delimiter)).join(delimiter);
}

/**
 * Already installed? A PATH look-up, or — for a trusted registry only — its shell
 * `valide-command` (exit 0 = installed).
 */
async function presence(name: string, entry: RegistryEntry, ctx: BinaryInstallContext): Promise<{ installed: boolean; path?: string }> {
  const found = findExecutable(probeName(name, entry), searchDirs(ctx.binaries, ctx.pathEnv ?? process.env.PATH));
  if (found) return { installed: true, path: found };
  const check = entry['valide-command']?.trim();
  if (!ctx.trusted || !check || isBareWord(check)) return { installed: false };
  const r = await runShell(check, { timeoutMs: CHECK_TIMEOUT_MS, env: { ...process.env, PATH: installPath(ctx) } });
  return { installed: r.code === 0 };
}

/** Records a copy found on PATH in the binaries folder (symlink), unless it is a core tool. */
function adopt(name: string, found: string, ctx: BinaryInstallContext): BinaryOutcome {
  if (isInside(ctx.binaries, found) || CORE_TOOLS.has(basename(found))) return { name, ok: true, action: 'present', path: found };
  const link = linkBinary(found, ctx.binaries, basename(found));
  return link ? { name, ok: true, action: 'linked', path: link } : { name, ok: true, action: 'present', path: found };
}

/** Installs one binary; `entry` undefined means the registry does not know the name. */
export async function installOneBinary(name: string, entry: RegistryEntry | undefined, ctx: BinaryInstallContext): Promise<BinaryOutcome> {
  if (!entry) return fail(name, `binary '${name}' not found in registry`);
  if (!isSafeName(name)) return fail(name, `invalid binary name '${name}' (use letters, digits, '.', '_' and '-')`);
  try {
    const present = await presence(name, entry, ctx);
    if (present.path) return adopt(name, present.path, ctx);
    if (present.installed) return { name, ok: true, action: 'present', path: '' };

    const plan = resolveInstallPlan(entry, ctx.platform);
    switch (plan.kind) {
      case 'none':
        return fail(name, plan.error);
      case 'go-getter':
        return fail(name, `go-getter entries are not supported; install '${name}' manually`);
      case 'commands':
        return await runCommands(name, plan.commands, plan.from, ctx);
      case 'url':
        return await download(name, plan.url, ctx);
    }
  } catch (err) {
    return fail(name, (err as Error).message);
  }
}

async function runCommands(name: string, commands: string[], from: string, ctx: BinaryInstallContext): Promise<BinaryOutcome> {
  if (!ctx.trusted) {
    return fail(name, `refusing to run the install command (${from}) of an untrusted registry (caller-supplied registry_url); use the bundled registry or install '${name}' manually`);
  }
  const PATH = installPath(ctx);
  const pm = detectPackageManager(ctx.platform.os, (cmd) => findExecutable(cmd, PATH.split(delimiter)) !== undefined);
  mkdirSync(ctx.binaries, { recursive: true });
  // `go install` drops its binary straight into the binaries folder.
  const env = { ...process.env, PATH, GOBIN: ctx.binaries, DEBIAN_FRONTEND: 'noninteractive' };
  for (const raw of commands) {
    const command = expandPackageManager(raw, pm, ctx.platform);
    const r = await runShell(command, { timeoutMs: COMMAND_TIMEOUT_MS, env });
    if (r.code !== 0) return fail(name, `install command failed (${failureText(r, COMMAND_TIMEOUT_MS)})`);
  }
  const found = findExecutable(name, PATH.split(delimiter));
  if (!found) return fail(name, `install commands finished but '${name}' was not found on PATH`);
  return { ...adopt(name, found, ctx), action: 'command' };
}

async function download(name: string, urlText: string, ctx: BinaryInstallContext): Promise<BinaryOutcome> {
  let url: URL;
  try {
    url = checkHttpUrl(urlText);
  } catch (err) {
    return fail(name, `invalid download URL: ${(err as Error).message}`);
  }
  const work = mkdtempSync(join(tmpdir(), 'osm-install-'));
  try {
    const fileName = decodeURIComponent(basename(url.pathname)) || name;
    const archive = join(work, 'download');
    await fetchToFile(url.toString(), archive, { maxBytes: BINARY_DOWNLOAD_MAX_BYTES, timeoutMs: BINARY_DOWNLOAD_TIMEOUT_MS, allowPrivate: ctx.allowPrivate });
    const out = join(work, 'out');
    mkdirSync(out);
    await unpack(archive, out, { nameHint: fileName, rawName: name, workDir: work });
    const exe = pickExecutable(out, name);
    if (!exe) return fail(name, `no executable named '${name}' found in ${fileName}`);
    return { name, ok: true, action: 'downloaded', path: placeBinary(exe, ctx.binaries, name) };
  } catch (err) {
    if (err instanceof FetchError) return fail(name, `download failed: ${err.message}`);
    if (err instanceof ArchiveError) return fail(name, `unsafe or invalid archive: ${err.message}`);
    return fail(name, (err as Error).message);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
