/**
 * Implementation of `osm config set|view|list`, imported lazily by commands/config.ts. Parsing
 * and formatting only: loading, typing, validation and redaction live in src/settings/.
 */
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { errors } from '../../errors.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { createUi, type Ui } from '../output.js';
import {
  ensureSettingsFile,
  getSettingValue,
  isSecretPath,
  loadSettings,
  REDACTED,
  redactSettings,
  resolveBaseFolder,
  resolveSettingsFile,
  setSettingValue,
  type LoadedSettings,
} from '../../settings/index.js';

interface ConfigOptions extends GlobalOptions {
  showSecrets?: boolean;
}

/** `osm config set <key> <value>` (also `key=value` and `key = value`). */
export async function configSet(command: Command, keyArg: string, valueArgs: string[]): Promise<void> {
  const opts = optionsOf<ConfigOptions>(command);
  const ui = createUi(opts);
  const [key, raw] = parseSetArgs(keyArg, valueArgs);
  const file = resolveSettingsFile(opts);
  // Only make sure the file exists: a broken file must still be fixable with `config set`.
  if (ensureSettingsFile(file, resolveBaseFolder(opts.baseFolder))) notice(ui, opts, `Created settings file ${file} (random secrets generated)`);
  const res = setSettingValue(file, key, raw);
  const shown = !opts.showSecrets && isSecretPath(res.key.split('.')) && res.value !== '' ? REDACTED : res.value;
  if (opts.json) {
    ui.json({ key: res.key, value: shown, file, backup: res.backup });
    return;
  }
  ui.success(`Set ${res.key} = ${formatScalar(shown)}`);
  if (!opts.silent) ui.out(`  file: ${file}${res.backup ? ` (previous version: ${res.backup})` : ''}`);
}

/** `osm config view <key>`: one value, redacted unless --show-secrets. */
export async function configView(command: Command, key: string): Promise<void> {
  const opts = optionsOf<ConfigOptions>(command);
  const ui = createUi(opts);
  const loaded = load(ui, opts);
  const source = opts.showSecrets ? loaded.settings : redactSettings(loaded.settings);
  const value = getSettingValue(source, key);
  if (opts.json) {
    ui.json(value);
  } else if (value !== null && typeof value === 'object') {
    process.stdout.write(stringify(value));
  } else {
    ui.out(formatScalar(value));
  }
}

/** `osm config list`: every leaf as `key = value`, sorted, redacted unless --show-secrets. */
export async function configList(command: Command): Promise<void> {
  const opts = optionsOf<ConfigOptions>(command);
  const ui = createUi(opts);
  const loaded = load(ui, opts);
  const source = opts.showSecrets ? loaded.settings : redactSettings(loaded.settings);
  if (opts.json) {
    ui.json(source);
    return;
  }
  const leaves: [string, unknown][] = [];
  flatten(source, '', leaves);
  leaves.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [k, v] of leaves) ui.out(`${k} = ${formatScalar(v)}`);
}

/** Accepts `key value…`, `key=value`, `key= value`, `key =value` and `key = value`. */
export function parseSetArgs(keyArg: string, valueArgs: string[]): [string, string] {
  let key = keyArg;
  let values = [...valueArgs];
  if (values.length === 0) {
    const eq = key.indexOf('=');
    if (eq < 0) throw errors.settingsKey('missing value: use `osm config set <key> <value>` or `osm config set <key>=<value>`');
    return [key.slice(0, eq).trim(), key.slice(eq + 1).trim()];
  }
  if (key.endsWith('=')) key = key.slice(0, -1);
  else if (values[0] === '=') values = values.slice(1);
  else if (values[0]!.startsWith('=')) values[0] = values[0]!.slice(1);
  return [key.trim(), values.join(' ')];
}

function load(ui: Ui, opts: ConfigOptions): LoadedSettings {
  const loaded = loadSettings({ baseFolder: opts.baseFolder, settingsFile: opts.settingsFile, workflowFolder: opts.workflowFolder });
  if (loaded.created) notice(ui, opts, `Created settings file ${loaded.file} (random secrets generated)`);
  for (const w of loaded.warnings) notice(ui, opts, `⚠ ${w}`);
  return loaded;
}

// Notices go to stderr so `osm config view` output stays machine-readable.
function notice(ui: Ui, opts: GlobalOptions, text: string): void {
  if (!opts.silent) ui.err(text);
}

function flatten(value: unknown, prefix: string, out: [string, unknown][]): void {
  const isObj = value !== null && typeof value === 'object';
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : isObj ? Object.entries(value as object) : [];
  if (!isObj || entries.length === 0) {
    out.push([prefix, value]);
    return;
  }
  for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
}

function formatScalar(v: unknown): string {
  if (typeof v === 'string') return /[\n\r]/.test(v) ? JSON.stringify(v) : v;
  if (v === undefined) return '';
  return JSON.stringify(v);
}
