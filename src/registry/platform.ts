/**
 * How one registry entry installs on this OS/arch (server-api §8.1), as plain data: the
 * resolution order of the reference, and the `<auto_detect_package_manager>` placeholder turned
 * into a real, non-interactive package-manager invocation. Pure: the caller passes the platform
 * and a PATH probe, so all of it is unit-tested without touching the machine.
 */
import type { RegistryEntry } from './schema.js';

export interface Platform {
  /** linux | darwin | windows | other Node platform names */
  os: string;
  /** amd64 | arm64 | 386 | arm | other Node arch names */
  arch: string;
  /** Running as root (no sudo needed). */
  root: boolean;
}

export type InstallPlan =
  | { kind: 'commands'; commands: string[]; from: string }
  | { kind: 'url'; url: string; from: string }
  | { kind: 'go-getter' }
  | { kind: 'none'; error: string };

const OS_NAMES: Record<string, string> = { linux: 'linux', darwin: 'darwin', win32: 'windows' };
const ARCH_NAMES: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' };

/** This machine, in the registry's vocabulary. */
export function currentPlatform(): Platform {
  return {
    os: OS_NAMES[process.platform] ?? process.platform,
    arch: ARCH_NAMES[process.arch] ?? process.arch,
    root: typeof process.getuid === 'function' && process.getuid() === 0,
  };
}

const nonEmpty = (v: string | undefined): v is string => typeof v === 'string' && v.trim() !== '';

/**
 * The reference's order: multi-commands-<os> → command-dual.dual → command-<os>.dual →
 * command-<os>.<arch> → <os>.dual (a command) → <os>.<arch> (a download URL).
 */
export function resolveInstallPlan(entry: RegistryEntry, p: Platform): InstallPlan {
  if ((entry['package-manager'] ?? '').trim() === 'go-getter') return { kind: 'go-getter' };
  const { os, arch } = p;
  const multi = os === 'linux' ? entry['multi-commands-linux'] : os === 'darwin' ? entry['multi-commands-darwin'] : undefined;
  if (multi && multi.some(nonEmpty)) return { kind: 'commands', commands: multi.filter(nonEmpty), from: `multi-commands-${os}` };
  const dual = entry['command-dual']?.dual;
  if (nonEmpty(dual)) return { kind: 'commands', commands: [dual], from: 'command-dual.dual' };
  const cmdMap = os === 'linux' ? entry['command-linux'] : os === 'darwin' ? entry['command-darwin'] : undefined;
  if (nonEmpty(cmdMap?.dual)) return { kind: 'commands', commands: [cmdMap!.dual!], from: `command-${os}.dual` };
  if (nonEmpty(cmdMap?.[arch])) return { kind: 'commands', commands: [cmdMap![arch]!], from: `command-${os}.${arch}` };
  const urlMap = os === 'linux' ? entry.linux : os === 'darwin' ? entry.darwin : os === 'windows' ? entry.windows : undefined;
  if (nonEmpty(urlMap?.dual)) return { kind: 'commands', commands: [urlMap!.dual!], from: `${os}.dual` };
  if (nonEmpty(urlMap?.[arch])) return { kind: 'url', url: urlMap![arch]!.trim(), from: `${os}.${arch}` };
  return { kind: 'none', error: `no download/command available for ${os}/${arch}` };
}

export const PACKAGE_MANAGERS = ['apt', 'dnf', 'yum', 'pacman', 'zypper', 'apk'] as const;

/** brew on macOS, else the first of apt, dnf, yum, pacman, zypper, apk found (default apt). */
export function detectPackageManager(os: string, has: (cmd: string) => boolean): string {
  if (os === 'darwin') return 'brew';
  return PACKAGE_MANAGERS.find((pm) => has(pm === 'apt' ? 'apt-get' : pm)) ?? 'apt';
}

// `<pm> install x` spelled the way each manager understands it, without prompts.
const INSTALL_FORM: Record<string, string> = {
  apt: 'apt-get install -y',
  dnf: 'dnf install -y',
  yum: 'yum install -y',
  pacman: 'pacman -S --noconfirm',
  zypper: 'zypper --non-interactive install',
  apk: 'apk add',
  brew: 'brew install',
};

const TOKEN = '<auto_detect_package_manager>';

/** Replaces the package-manager placeholder (`sudo ` first when not root on Linux). */
export function expandPackageManager(command: string, pm: string, p: Platform): string {
  if (!command.includes(TOKEN)) return command;
  const sudo = p.os === 'linux' && !p.root && pm !== 'brew' ? 'sudo ' : '';
  return command
    .replace(/<auto_detect_package_manager>\s+install\b/g, `${sudo}${INSTALL_FORM[pm] ?? `${pm} install`}`)
    .replaceAll(TOKEN, `${sudo}${pm === 'apt' ? 'apt-get' : pm}`);
}
