import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { generateSettingsText, loadSettings, parseSettingsText, resolveBaseFolder } from '../../../src/settings/load.js';
import { copySampleWorkflows, ensureSettingsFile } from '../../../src/settings/bootstrap.js';
import { expandEnv, resolveSettingsPath } from '../../../src/settings/paths.js';

let tmp: string;
const savedEnv = { ...process.env };
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
});

const ALNUM = /^[a-zA-Z0-9]+$/;

function secretsOf(text: string) {
  const doc = parse(text);
  return {
    api: doc.server.auth_api_key as string,
    jwt: doc.server.jwt.secret_signing_key as string,
    pw: doc.server.simple_user_map_key.osmedeus as string,
    prefix: doc.server.workspace_prefix_key as string,
  };
}

describe('settings creation on first use', () => {
  it('generates random secrets of the right lengths, different every time', () => {
    const a = secretsOf(generateSettingsText('/x'));
    const b = secretsOf(generateSettingsText('/x'));
    expect(a.api).toHaveLength(32);
    expect(a.jwt).toHaveLength(64);
    expect(a.pw).toHaveLength(12);
    expect(a.prefix).toHaveLength(16);
    for (const v of Object.values(a)) expect(v).toMatch(ALNUM);
    expect(a.api).not.toBe(b.api);
    expect(a.jwt).not.toBe(b.jwt);
    expect(a.pw).not.toBe(b.pw);
    expect(a.prefix).not.toBe(b.prefix);
  });

  it('the template validates, mirrors every section and carries no fixed credential', () => {
    const text = generateSettingsText('/base');
    const loaded = parseSettingsText(text, '/base');
    expect(loaded.warnings).toEqual([]);
    for (const section of ['base_folder', 'environments', 'database', 'server', 'scan_tactic', 'redis', 'global_vars', 'notification', 'storage', 'cloud', 'llm_config', 'acp']) {
      expect(text).toMatch(new RegExp(`^${section}:`, 'm'));
    }
    expect(text).not.toMatch(/change-this-secret|osmedeus-admin|password: "osmedeus"/);
    expect(loaded.settings.database.password).toBe('');
    expect(Object.keys(loaded.settings.global_vars)).toEqual(['GITHUB_API_KEY', 'SHODAN_API_KEY', 'CENSYS_API_KEY', 'PASSIVETOTAL_API_KEY']);
    expect(text).toContain('#'); // comments kept in the template
  });

  it('creates the file (mode 0600), the folders and reports created only once', () => {
    const base = path.join(tmp, 'base');
    const first = loadSettings({ baseFolder: base });
    expect(first.created).toBe(true);
    expect(first.file).toBe(path.join(base, 'osm-settings.yaml'));
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
    for (const dir of [first.paths.workspaces, first.paths.workflows, first.paths.uploads, first.paths.snapshot, first.paths.binaries]) {
      expect(fs.statSync(dir).isDirectory()).toBe(true);
    }
    expect(first.paths.workspaces).toBe(path.join(base, 'workspaces'));
    expect(first.paths.db).toBe(path.join(base, 'database-osm.sqlite'));
    expect(first.settings.server.auth_api_key).toHaveLength(32);
    const second = loadSettings({ baseFolder: base });
    expect(second.created).toBe(false);
    expect(second.settings.server.auth_api_key).toBe(first.settings.server.auth_api_key);

    const other = loadSettings({ baseFolder: path.join(tmp, 'other') });
    expect(other.settings.server.auth_api_key).not.toBe(first.settings.server.auth_api_key);
  });

  it('never overwrites an existing file', () => {
    const file = path.join(tmp, 'osm-settings.yaml');
    fs.writeFileSync(file, 'server: {port: 1234}\n');
    expect(ensureSettingsFile(file, tmp)).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('server: {port: 1234}\n');
    expect(fs.readdirSync(tmp)).toEqual(['osm-settings.yaml']);
  });

  it('warns when an existing file is readable by others', () => {
    fs.writeFileSync(path.join(tmp, 'osm-settings.yaml'), 'server: {port: 1234}\n', { mode: 0o644 });
    fs.chmodSync(path.join(tmp, 'osm-settings.yaml'), 0o644);
    const loaded = loadSettings({ baseFolder: tmp });
    expect(loaded.warnings.some((w) => w.includes('chmod 600'))).toBe(true);
    expect(fs.statSync(path.join(tmp, 'osm-settings.yaml')).mode & 0o777).toBe(0o644);
  });

  it('create: false does not touch the disk', () => {
    const base = path.join(tmp, 'nothing');
    const loaded = loadSettings({ baseFolder: base, create: false });
    expect(fs.existsSync(base)).toBe(false);
    expect(loaded.created).toBe(false);
    expect(loaded.settings.server.auth_api_key).toBe('');
    expect(loaded.warnings.join('\n')).toContain('settings file not found');
  });

  it('copies sample workflows only into a missing or empty folder, never overwriting', () => {
    const src = path.join(tmp, 'bundled');
    fs.mkdirSync(path.join(src, 'modules'), { recursive: true });
    fs.writeFileSync(path.join(src, 'modules', 'm.yaml'), 'name: m\n');
    const dest = path.join(tmp, 'wf');
    expect(copySampleWorkflows(dest, src)).toBe(1);
    expect(fs.readFileSync(path.join(dest, 'modules', 'm.yaml'), 'utf8')).toBe('name: m\n');
    fs.writeFileSync(path.join(dest, 'modules', 'm.yaml'), 'name: mine\n');
    copySampleWorkflows(dest, src);
    expect(fs.readFileSync(path.join(dest, 'modules', 'm.yaml'), 'utf8')).toBe('name: mine\n');
    expect(copySampleWorkflows(dest, path.join(tmp, 'missing'))).toBe(0);
  });

  it('copies the bundled workflows folder on first use but not into a -F folder', () => {
    const base = path.join(tmp, 'b');
    const loaded = loadSettings({ baseFolder: base });
    const bundled = fileURLToPath(new URL('../../../workflows/', import.meta.url));
    expect(fs.readdirSync(loaded.paths.workflows).sort()).toEqual(fs.readdirSync(bundled).sort());
    const own = path.join(tmp, 'own-workflows');
    fs.mkdirSync(own);
    loadSettings({ baseFolder: base, workflowFolder: own });
    expect(fs.readdirSync(own)).toEqual([]);
  });
});

describe('base folder and path resolution', () => {
  it('flag wins over OSM_BASE_FOLDER, which wins over ~/osmedeus-base', () => {
    process.env.OSM_BASE_FOLDER = path.join(tmp, 'env');
    expect(resolveBaseFolder(path.join(tmp, 'flag'))).toBe(path.join(tmp, 'flag'));
    expect(resolveBaseFolder()).toBe(path.join(tmp, 'env'));
    delete process.env.OSM_BASE_FOLDER;
    expect(resolveBaseFolder()).toBe(path.join(os.homedir(), 'osmedeus-base'));
    expect(resolveBaseFolder('~/x')).toBe(path.join(os.homedir(), 'x'));
  });

  it('resolves {{base_folder}}, $VAR, ${VAR}, ~ and relative paths', () => {
    process.env.OSM_T_DIR = '/data/osm';
    const text = [
      'environments:',
      '  workspaces: "$OSM_T_DIR/ws"',
      '  external_data: "${OSM_T_DIR}/data"',
      '  snapshot: "~/snaps"',
      '  external_scripts: "scripts"',
      '  workflows: "{{base_folder}}/wf"',
      '  external_configs: ""',
      'server:',
      '  ui_path: "{{ base_folder }}/ui/"',
      'database:',
      '  db_path: ""',
      'cloud:',
      '  cloud_path: "$OSM_T_UNSET/cloud"',
    ].join('\n');
    const { paths, settings } = parseSettingsText(text, '/srv/base');
    expect(paths.workspaces).toBe('/data/osm/ws');
    expect(paths.data).toBe('/data/osm/data');
    expect(paths.uploads).toBe('/data/osm/data/uploads');
    expect(paths.snapshot).toBe(path.join(os.homedir(), 'snaps'));
    expect(paths.scripts).toBe('/srv/base/scripts');
    expect(paths.workflows).toBe('/srv/base/wf');
    expect(paths.configs).toBe('/srv/base/external-configs');
    expect(paths.ui).toBe('/srv/base/ui');
    expect(paths.db).toBe('/srv/base/database-osm.sqlite');
    expect(settings.cloud.cloud_path).toBe('/cloud');
    expect(settings.cloud.cloud_settings).toBe('/srv/base/cloud/cloud-settings.yaml');
    expect(settings.environments.workspaces).toBe('/data/osm/ws');
    expect(settings.base_folder).toBe('/srv/base');
    expect(paths.base).toBe('/srv/base');
    expect(paths.settingsFile).toBe('/srv/base/osm-settings.yaml');
  });

  it('-F replaces the workflows path', () => {
    const { paths, settings } = parseSettingsText('environments: {workflows: "{{base_folder}}/wf"}', '/srv/base', { workflowFolder: '/my/flows' });
    expect(paths.workflows).toBe('/my/flows');
    expect(settings.environments.workflows).toBe('/my/flows');
  });

  it('the file base_folder is used with --settings-file when no base folder was given', () => {
    delete process.env.OSM_BASE_FOLDER;
    const file = path.join(tmp, 'custom.yaml');
    fs.writeFileSync(file, `base_folder: ${JSON.stringify(path.join(tmp, 'from-file'))}\n`, { mode: 0o600 });
    const loaded = loadSettings({ settingsFile: file, create: false });
    expect(loaded.paths.base).toBe(path.join(tmp, 'from-file'));
    expect(loaded.file).toBe(file);
    const flagged = loadSettings({ settingsFile: file, baseFolder: path.join(tmp, 'flag'), create: false });
    expect(flagged.paths.base).toBe(path.join(tmp, 'flag'));
  });

  it('expands only variable names, leaving other dollar text alone', () => {
    expect(expandEnv('a$-b${X_UNSET_Q}c', {})).toBe('a$-bc');
    expect(resolveSettingsPath('', '/b', '{{base_folder}}/d')).toBe('/b/d');
  });
});
