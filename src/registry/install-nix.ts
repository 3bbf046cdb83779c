/**
 * nix-build mode (server-api §8.3): `nix profile add nixpkgs#<pkg>` (argv, no shell), then the
 * binary is located (PATH, ~/.nix-profile/bin, the default profile) and linked into the binaries
 * folder. An untrusted registry may only name a nixpkgs attribute; a full flake reference (which
 * could build and run anyone's code) is accepted from a trusted registry only.
 * Not exercised by the test suite: Nix is not installed on the CI machines.
 */
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { failureText, runProgram } from './exec.js';
import { findExecutable, searchDirs } from './locate.js';
import { installPath, type BinaryInstallContext, type BinaryOutcome } from './install-binary.js';
import { linkBinary } from './place.js';
import type { RegistryEntry } from './schema.js';
import { isInside } from '../util/fs-safe.js';

export const NIX_TIMEOUT_MS = 30 * 60_000;

/** True when `nix` is on PATH (or in the binaries folder). */
export function nixInstalled(binaries: string, pathEnv?: string): boolean {
  return findExecutable('nix', searchDirs(binaries, pathEnv ?? process.env.PATH)) !== undefined;
}

const ATTR = /^[A-Za-z0-9_][A-Za-z0-9._+-]*$/;
const FLAKE_REF = /^[A-Za-z0-9][A-Za-z0-9._+:/-]*#[A-Za-z0-9_][A-Za-z0-9._+-]*$/;

/** The installable for `name`: `nixpkgs#<attr>`, or the entry's own flake reference when trusted. */
export function nixInstallable(name: string, entry: RegistryEntry | undefined, trusted: boolean): string {
  const pkg = (entry?.nix_package ?? '').trim() || name;
  if (pkg.includes('#')) {
    if (!trusted) throw new Error(`flake reference '${pkg}' refused: an untrusted registry may only name nixpkgs packages`);
    if (!FLAKE_REF.test(pkg)) throw new Error(`invalid nix package reference '${pkg}'`);
    return pkg;
  }
  if (!ATTR.test(pkg)) throw new Error(`invalid nix package name '${pkg}'`);
  return `nixpkgs#${pkg}`;
}

/** Installs one binary with Nix and links it into the binaries folder. */
export async function installWithNix(name: string, entry: RegistryEntry | undefined, ctx: BinaryInstallContext): Promise<BinaryOutcome> {
  let installable: string;
  try {
    installable = nixInstallable(name, entry, ctx.trusted);
  } catch (err) {
    return { name, ok: false, error: (err as Error).message };
  }
  const env = { ...process.env, PATH: installPath(ctx) };
  let r = await runProgram('nix', ['--extra-experimental-features', 'nix-command flakes', 'profile', 'add', installable], { timeoutMs: NIX_TIMEOUT_MS, env });
  // `profile add` is the newer spelling of `profile install`.
  if (r.code !== 0 && !r.timedOut && /add/.test(r.output) && /(unrecogni[sz]ed|not a recogni[sz]ed|unknown) (command|subcommand)/i.test(r.output)) {
    r = await runProgram('nix', ['--extra-experimental-features', 'nix-command flakes', 'profile', 'install', installable], { timeoutMs: NIX_TIMEOUT_MS, env });
  }
  if (r.code !== 0) return { name, ok: false, error: `nix profile add ${installable} failed (${failureText(r, NIX_TIMEOUT_MS)})` };
  const dirs = [...env.PATH.split(delimiter), join(homedir(), '.nix-profile', 'bin'), '/nix/var/nix/profiles/default/bin'];
  const found = findExecutable(name, dirs);
  if (!found) return { name, ok: false, error: `nix installed ${installable} but '${name}' was not found on PATH` };
  const link = isInside(ctx.binaries, found) ? '' : linkBinary(found, ctx.binaries, name);
  return { name, ok: true, action: 'nix', path: link || found };
}
