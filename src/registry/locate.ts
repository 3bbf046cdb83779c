/**
 * "Is it installed, and where?" answered by looking at the file system only: the binaries folder
 * first (the engine prepends it to PATH), then PATH. Nothing is executed here, which is what lets
 * `GET /registry-info` call it: a registry's `valide-command` is only ever used as a name to look
 * up when it is a bare word.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isSafeName } from '../util/fs-safe.js';
import type { RegistryEntry } from './schema.js';

/** Tools the system owns: found on PATH, they are never symlinked into the binaries folder. */
export const CORE_TOOLS = new Set([
  'sh', 'bash', 'zsh', 'git', 'curl', 'wget', 'sort', 'uniq', 'cat', 'grep', 'sed', 'awk', 'tar', 'unzip', 'zip', 'gzip',
  'make', 'gcc', 'python', 'python3', 'pip', 'pip3', 'perl', 'ruby', 'go', 'node', 'npm', 'rm', 'cp', 'mv', 'ls', 'find',
  'xargs', 'tee', 'head', 'tail', 'wc', 'cut', 'tr', 'chmod', 'mkdir', 'sudo', 'apt', 'apt-get', 'dnf', 'yum', 'pacman',
  'zypper', 'apk', 'brew', 'nix', 'openssl', 'ssh', 'env', 'which', 'timeout', 'diff', 'xxd',
]);

/** The folders searched, binaries folder first, without duplicates or empty entries. */
export function searchDirs(binaries: string, pathEnv: string = process.env.PATH ?? ''): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const d of [binaries, ...pathEnv.split(delimiter)]) {
    if (!d || seen.has(d)) continue;
    seen.add(d);
    out.push(d);
  }
  return out;
}

/** True for a regular (or symlinked-to-regular) file we may execute. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable named `name` in `dirs`; only single safe names are looked up. */
export function findExecutable(name: string, dirs: string[]): string | undefined {
  if (!isSafeName(name)) return undefined;
  for (const d of dirs) {
    const p = join(d, name);
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}

/** True when a `valide-command` is a single word (a name to look up), not a shell command. */
export function isBareWord(cmd: string | undefined): cmd is string {
  return typeof cmd === 'string' && /^[A-Za-z0-9._+-]+$/.test(cmd.trim()) && !cmd.trim().startsWith('-');
}

/** The name whose presence means "installed": a bare-word valide-command, else the binary name. */
export function probeName(name: string, entry?: RegistryEntry): string {
  const v = entry?.['valide-command'];
  return isBareWord(v) ? v.trim() : name;
}

export interface InstallStatus {
  installed: boolean;
  /** Where it was found ('' when not installed). */
  path: string;
}

/** Installed = an executable of that name in the binaries folder or on PATH. Never executes anything. */
export function installStatus(name: string, entry: RegistryEntry | undefined, binaries: string, pathEnv?: string): InstallStatus {
  const found = findExecutable(probeName(name, entry), searchDirs(binaries, pathEnv));
  return found ? { installed: true, path: found } : { installed: false, path: '' };
}
