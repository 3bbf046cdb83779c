import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'osm.js');
let tmp: string;

function newestMtime(files: string[]): number {
  return Math.max(...files.map((f) => fs.statSync(f).mtimeMs));
}

/** Builds dist/ when the config command's sources are newer than the build (or it is missing). */
function ensureBuilt(): void {
  const built = path.join(root, 'dist', 'cli', 'actions', 'config.js');
  const sources = [
    ...fs.readdirSync(path.join(root, 'src', 'settings')).map((f) => path.join(root, 'src', 'settings', f)),
    path.join(root, 'src', 'cli', 'actions', 'config.ts'),
    path.join(root, 'src', 'cli', 'commands', 'config.ts'),
    path.join(root, 'src', 'cli', 'commands', 'index.ts'),
  ];
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= newestMtime(sources)) return;
  // tsc emits even when files owned by others have type errors; the checks below catch a missing build.
  spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'ignore' });
  if (!fs.existsSync(built)) throw new Error('build failed: dist/cli/actions/config.js missing');
}

function osm(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.OSM_BASE_FOLDER;
  const r = spawnSync(process.execPath, [bin, '-b', tmp, ...args], { encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
}, 180_000);
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('osm config (built CLI)', () => {
  const file = () => path.join(tmp, 'osm-settings.yaml');

  it('set creates the settings file on first use and writes the value', () => {
    const r = osm('config', 'set', 'server.port', '9000');
    expect(r.stderr).not.toMatch(/^Error:/m);
    expect(r.code).toBe(0);
    expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file(), 'utf8')).toMatch(/^ {2}port: 9000$/m);
  });

  it('view prints the value', () => {
    const r = osm('config', 'view', 'server.port');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('9000');
    expect(osm('config', 'view', 'server.port', '--json').stdout.trim()).toBe('9000');
  });

  it('accepts key=value', () => {
    expect(osm('config', 'set', 'server.host=127.0.0.1').code).toBe(0);
    expect(osm('config', 'view', 'server.host').stdout.trim()).toBe('127.0.0.1');
  });

  it('list redacts secrets unless --show-secrets', () => {
    const key = /^ {2}auth_api_key: "([A-Za-z0-9]{32})"$/m.exec(fs.readFileSync(file(), 'utf8'))![1]!;
    const r = osm('config', 'list');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('server.auth_api_key = [REDACTED]');
    expect(r.stdout).toContain('server.port = 9000');
    expect(r.stdout).not.toContain(key);
    const lines = r.stdout.trim().split('\n');
    expect([...lines].sort()).toEqual(lines);

    const shown = osm('config', 'list', '--show-secrets');
    expect(shown.stdout).toContain(`server.auth_api_key = ${key}`);
    expect(shown.stdout).not.toContain('server.auth_api_key = [REDACTED]');

    const json = JSON.parse(osm('config', 'list', '--json').stdout);
    expect(json.server.auth_api_key).toBe('[REDACTED]');
    expect(osm('config', 'view', 'server.auth_api_key').stdout.trim()).toBe('[REDACTED]');
    expect(osm('config', 'view', 'server.auth_api_key', '--show-secrets').stdout.trim()).toBe(key);
  });

  it('an invalid value exits 1 with Error: on stderr and leaves the file unchanged', () => {
    const before = fs.readFileSync(file(), 'utf8');
    const r = osm('config', 'set', 'server.port', 'abc');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: server\.port must be a number$/m);
    expect(fs.readFileSync(file(), 'utf8')).toBe(before);

    const unknown = osm('config', 'set', 'nope.x', '1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^Error: unknown config section: nope$/m);
    expect(fs.readFileSync(file(), 'utf8')).toBe(before);

    const view = osm('config', 'view', 'server.nope');
    expect(view.code).toBe(1);
    expect(view.stderr).toMatch(/^Error: unknown config key: server\.nope$/m);
  });
});

describe('osm config: reference batch input, .clear, clean', () => {
  const file = () => path.join(tmp, 'osm-settings.yaml');
  const withInput = (input: string, ...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env.OSM_BASE_FOLDER;
    const r = spawnSync(process.execPath, [bin, '-b', tmp, ...args], { encoding: 'utf8', env, input });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('set reads `key value` lines from stdin or --from-file (comments, leading `osmedeus config set`)', () => {
    const r = withInput('# settings\nserver.port 9300\nosmedeus config set server.host=127.0.0.9\n', 'config', 'set');
    expect(r.code, r.stderr).toBe(0);
    expect(osm('config', 'view', 'server.port').stdout.trim()).toBe('9300');
    expect(osm('config', 'view', 'server.host').stdout.trim()).toBe('127.0.0.9');
    const f = path.join(tmp, 'pairs.txt');
    fs.writeFileSync(f, 'scan_tactic.default 7\nserver.enable_metrics t\n');
    expect(osm('config', 'set', '--from-file', f).code).toBe(0);
    expect(osm('config', 'view', 'scan_tactic.default').stdout.trim()).toBe('7');
    expect(osm('config', 'view', 'server.enable_metrics').stdout.trim()).toBe('true'); // Go ParseBool spelling
  });

  it('<key>.clear empties a list; view warns on stderr when it prints a redacted secret', () => {
    expect(osm('config', 'set', 'notification.webhooks.0.url', 'https://hooks.example.com/x').code).toBe(0);
    expect(osm('config', 'set', 'notification.webhooks.clear').code).toBe(0);
    expect(JSON.parse(osm('--json', 'config', 'view', 'notification.webhooks').stdout)).toEqual([]);
    const v = osm('config', 'view', 'server.auth_api_key');
    expect(v.stdout.trim()).toBe('[REDACTED]');
    expect(v.stderr).toContain('--show-secrets');
  });

  it('clean backs the file up and regenerates it with new secrets', () => {
    const before = osm('config', 'view', 'server.auth_api_key', '--show-secrets').stdout.trim();
    const r = osm('config', 'clean');
    expect(r.code).toBe(0);
    expect(fs.readFileSync(`${file()}.backup`, 'utf8')).toContain(before);
    const after = osm('config', 'view', 'server.auth_api_key', '--show-secrets').stdout.trim();
    expect(after).toHaveLength(32);
    expect(after).not.toBe(before);
  });
});
