import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryForResponse, isOptional, parseRegistryText, RegistryParseError, type RegistryEntry } from '../../../src/registry/schema.js';
import { detectPackageManager, expandPackageManager, resolveInstallPlan, type Platform } from '../../../src/registry/platform.js';
import { loadBundledRegistry, loadRegistry } from '../../../src/registry/source.js';
import { installStatus, isBareWord, probeName } from '../../../src/registry/locate.js';
import { categoryName } from '../../../src/registry/info.js';
import { defaultSettings, settingsSchema } from '../../../src/settings/schema.js';
import { isOsmError } from '../../../src/errors.js';

const linux: Platform = { os: 'linux', arch: 'amd64', root: false };

describe('registry JSON', () => {
  it('skips _metadata keys and keeps entries in file order', () => {
    const r = parseRegistryText('{"_last_update_at":"2026-05-29T14:55:48Z","_x":[1],"b":{"version":"1"},"a":{"tags":["optional"]}}');
    expect([...r.entries.keys()]).toEqual(['b', 'a']);
    expect(r.lastUpdateAt).toBe('2026-05-29T14:55:48Z');
    expect(isOptional(r.entries.get('a')!)).toBe(true);
    expect(isOptional(r.entries.get('b')!)).toBe(false);
  });

  it('reports every invalid field as name.path: message', () => {
    const err = (() => {
      try {
        parseRegistryText('{"a":{"tags":"x"},"b":{"linux":{"amd64":3}},"c":"nope"}');
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a parse error');
    })();
    expect(err).toBeInstanceOf(RegistryParseError);
    expect(err.message).toMatch(/^failed to parse registry JSON: /);
    expect(err.message).toContain('a.tags:');
    expect(err.message).toContain('b.linux.amd64:');
    expect(err.message).toMatch(/(^|; )c: /);
  });

  it('never quotes the input in a JSON syntax error', () => {
    const secret = 'root:x:0:0:root:/root:/bin/bash';
    try {
      parseRegistryText(`${secret}\n`);
      throw new Error('expected a parse error');
    } catch (e) {
      expect((e as Error).message).toMatch(/^failed to parse registry JSON: invalid JSON/);
      expect((e as Error).message).not.toContain('root');
    }
  });

  it('shows only known, non-empty keys', () => {
    const e: RegistryEntry = { desc: 'd', version: '', tags: [], linux: { amd64: 'u' }, 'package-manager': 'github-release', go_install: 'x' };
    expect(entryForResponse(e)).toEqual({ desc: 'd', linux: { amd64: 'u' } });
  });

  it('bundled registry: trusted, valid, with real GitHub release URLs for the common tools', () => {
    const b = loadBundledRegistry();
    expect(b.trusted).toBe(true);
    expect(b.source).toBe('bundled');
    expect(b.registry.lastUpdateAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    for (const name of ['subfinder', 'httpx', 'nuclei', 'dnsx', 'naabu', 'katana', 'jq']) {
      const e = b.registry.entries.get(name);
      expect(e, name).toBeDefined();
      expect(e!.linux?.amd64, name).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+\/releases\/download\//);
      expect(e!.tags?.length, name).toBeGreaterThan(0);
    }
  });
});

describe('registry sources', () => {
  it('refuses a local file for API callers unless allowed, and reads it when allowed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    try {
      const file = path.join(dir, 'r.json');
      fs.writeFileSync(file, '{"tool":{"version":"9"}}');
      const refused = await loadRegistry({ url: file, allowPrivate: false }).catch((e: unknown) => e);
      expect(isOsmError(refused) && refused.status).toBe(400);
      const ok = await loadRegistry({ url: file, allowPrivate: true });
      expect(ok.source).toBe('file');
      expect(ok.trusted).toBe(false);
      expect(ok.registry.entries.get('tool')?.version).toBe('9');
      expect((await loadRegistry({ url: file, allowPrivate: true, trustCustom: true })).trusted).toBe(true);
      const missing = await loadRegistry({ url: path.join(dir, 'nope.json'), allowPrivate: true }).catch((e: unknown) => e);
      expect(isOsmError(missing) && missing.status).toBe(500);
      expect((missing as Error).message).toBe('Failed to load registry: cannot read registry file: no such file');
      const scheme = await loadRegistry({ url: 'ftp://example.com/r.json', allowPrivate: false }).catch((e: unknown) => e);
      expect((scheme as Error).message).toMatch(/^Failed to load registry: unsupported URL scheme ftp/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('install plan resolution (reference order)', () => {
  const full: RegistryEntry = {
    'multi-commands-linux': ['m1', 'm2'],
    'command-dual': { dual: 'cd' },
    'command-linux': { dual: 'cld', amd64: 'cla' },
    linux: { dual: 'ld', amd64: 'https://x/amd64.zip' },
  };

  it('walks multi-commands → command-dual → command-<os>.dual → command-<os>.<arch> → <os>.dual → <os>.<arch>', () => {
    const steps: RegistryEntry[] = [full];
    let e: RegistryEntry = { ...full };
    delete e['multi-commands-linux'];
    steps.push(e);
    e = { ...e };
    delete e['command-dual'];
    steps.push(e);
    e = { ...e, 'command-linux': { amd64: 'cla' } };
    steps.push(e);
    e = { ...e };
    delete e['command-linux'];
    steps.push(e);
    e = { ...e, linux: { amd64: 'https://x/amd64.zip' } };
    steps.push(e);
    expect(steps.map((s) => resolveInstallPlan(s, linux))).toEqual([
      { kind: 'commands', commands: ['m1', 'm2'], from: 'multi-commands-linux' },
      { kind: 'commands', commands: ['cd'], from: 'command-dual.dual' },
      { kind: 'commands', commands: ['cld'], from: 'command-linux.dual' },
      { kind: 'commands', commands: ['cla'], from: 'command-linux.amd64' },
      { kind: 'commands', commands: ['ld'], from: 'linux.dual' },
      { kind: 'url', url: 'https://x/amd64.zip', from: 'linux.amd64' },
    ]);
  });

  it('reports what is missing for this OS/arch, and go-getter entries', () => {
    expect(resolveInstallPlan({ darwin: { arm64: 'u' } }, linux)).toEqual({ kind: 'none', error: 'no download/command available for linux/amd64' });
    expect(resolveInstallPlan({ linux: { arm64: 'u' } }, linux).kind).toBe('none');
    expect(resolveInstallPlan({ 'package-manager': 'go-getter', 'command-dual': { dual: 'x' } }, linux)).toEqual({ kind: 'go-getter' });
  });

  it('expands <auto_detect_package_manager> into a non-interactive install, with sudo when not root', () => {
    const cmd = '<auto_detect_package_manager> install build-essential';
    expect(expandPackageManager(cmd, 'apt', linux)).toBe('sudo apt-get install -y build-essential');
    expect(expandPackageManager(cmd, 'apt', { ...linux, root: true })).toBe('apt-get install -y build-essential');
    expect(expandPackageManager(cmd, 'pacman', { ...linux, root: true })).toBe('pacman -S --noconfirm build-essential');
    expect(expandPackageManager(cmd, 'apk', { ...linux, root: true })).toBe('apk add build-essential');
    expect(expandPackageManager(cmd, 'brew', { os: 'darwin', arch: 'arm64', root: false })).toBe('brew install build-essential');
    expect(expandPackageManager('echo hi', 'apt', linux)).toBe('echo hi');
  });

  it('detects the package manager: brew on macOS, first found on Linux, apt by default', () => {
    expect(detectPackageManager('darwin', () => false)).toBe('brew');
    expect(detectPackageManager('linux', (c) => c === 'dnf' || c === 'apk')).toBe('dnf');
    expect(detectPackageManager('linux', (c) => c === 'apt-get')).toBe('apt');
    expect(detectPackageManager('linux', () => false)).toBe('apt');
  });
});

describe('installed detection (file system only)', () => {
  it('uses a bare-word valide-command as the name, never a shell command', () => {
    expect(isBareWord('subfinder')).toBe(true);
    expect(isBareWord('touch /tmp/x')).toBe(false);
    expect(isBareWord('-rf')).toBe(false);
    expect(probeName('tool', { 'valide-command': 'tool-bin' })).toBe('tool-bin');
    expect(probeName('tool', { 'valide-command': 'tool --version' })).toBe('tool');
  });

  it('finds executables in the binaries folder before PATH, and ignores unsafe names', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    try {
      const bin = path.join(dir, 'bin');
      const other = path.join(dir, 'other');
      fs.mkdirSync(bin);
      fs.mkdirSync(other);
      fs.writeFileSync(path.join(other, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
      fs.writeFileSync(path.join(other, 'plain'), 'not executable', { mode: 0o644 });
      expect(installStatus('tool', undefined, bin, other)).toEqual({ installed: true, path: path.join(other, 'tool') });
      fs.writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
      expect(installStatus('tool', undefined, bin, other).path).toBe(path.join(bin, 'tool'));
      expect(installStatus('plain', undefined, bin, other)).toEqual({ installed: false, path: '' });
      expect(installStatus('../other/tool', undefined, bin, other).installed).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names nix-build categories after the first non-optional tag', () => {
    expect(categoryName({ tags: ['port-scan', 'recon'] })).toBe('Port Scan');
    expect(categoryName({ tags: ['optional', 'utility'] })).toBe('Utility');
    expect(categoryName({})).toBe('Other');
  });
});

describe('server.allow_private_registry setting', () => {
  it('defaults to false and accepts true', () => {
    expect(defaultSettings().server.allow_private_registry).toBe(false);
    expect(settingsSchema.parse({ server: { allow_private_registry: true } }).server.allow_private_registry).toBe(true);
    expect(settingsSchema.safeParse({ server: { allow_private_registry: 'maybe' } }).success).toBe(false);
  });
});
