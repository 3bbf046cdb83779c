/**
 * Implementation of `osm config set|view|list`, imported lazily by commands/config.ts. Parsing
 * and formatting only: loading, typing, validation and redaction live in src/settings/.
 */
import { existsSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
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
  clearSettingValue,
  type LoadedSettings,
} from '../../settings/index.js';

interface ConfigOptions extends GlobalOptions {
  showSecrets?: boolean;
}

/**
 * `osm config set <key> <value>` (also `key=value` and `key = value`), several pairs with
 * `--from-file <f>` or on stdin (one per line, `#` comments, an optional leading
 * `osmedeus config set ` / `osm config set `), and `<key>.clear` without a value.
 */
export async function configSet(command: Command, keyArg: string | undefined, valueArgs: string[]): Promise<void> {
  const opts = optionsOf<ConfigOptions & { fromFile?: string }>(command);
  const ui = createUi(opts);
  const file = resolveSettingsFile(opts);
  // Only make sure the file exists: a broken file must still be fixable with `config set`.
  if (ensureSettingsFile(file, resolveBaseFolder(opts.baseFolder))) notice(ui, opts, `Created settings file ${file} (random secrets generated)`);
  let pairs: [string, string | undefined][];
  if (keyArg === undefined && opts.fromFile === undefined && process.stdin.isTTY) {
    throw errors.settingsKey('missing key: use `osm config set <key> <value>`, --from-file <file>, or pipe `key value` lines');
  }
  if (opts.fromFile !== undefined || keyArg === undefined || keyArg === '-') {
    const source = opts.fromFile && opts.fromFile !== '-' ? readFileSync(opts.fromFile, 'utf8') : readStdin();
    pairs = batchPairs(source);
    if (pairs.length === 0) throw errors.settingsKey('no `key value` lines found (use `osm config set <key> <value>`)');
  } else {
    pairs = [keyArg.trim().endsWith('.clear') && valueArgs.length === 0 ? [keyArg.trim(), undefined] : parseSetArgs(keyArg, valueArgs)];
  }
  const results: { key: string; value: unknown; backup: string }[] = [];
  for (const [key, raw] of pairs) {
    if (raw === undefined) {
      const r = clearSettingValue(file, key.slice(0, -'.clear'.length));
      results.push({ key: r.key, value: '(cleared)', backup: r.backup });
      continue;
    }
    const res = setSettingValue(file, key, raw);
    const shown = !opts.showSecrets && isSecretPath(res.key.split('.')) && res.value !== '' ? REDACTED : res.value;
    results.push({ key: res.key, value: shown, backup: res.backup });
  }
  if (opts.json) {
    ui.json(results.length === 1 ? { ...results[0], file } : results.map((r) => ({ ...r, file })));
    return;
  }
  for (const r of results) ui.success(`Set ${r.key} = ${formatScalar(r.value)}`);
  if (!opts.silent) ui.out(`  file: ${file}${results[0]?.backup ? ` (previous version: ${results[0].backup})` : ''}`);
}

/** `key value` / `key=value` lines; `#` comments; an optional leading `osm(edeus) config set `. */
export function batchPairs(text: string): [string, string | undefined][] {
  const out: [string, string | undefined][] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim().replace(/^(osmedeus|osm)\s+config\s+set\s+/, '');
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+?)(?:\s*=\s*|\s+)(.*)$/.exec(line);
    if (!m) {
      if (line.endsWith('.clear')) out.push([line, undefined]);
      else throw errors.settingsKey(`missing value in line: ${line}`);
      continue;
    }
    out.push([m[1]!, m[2]!.trim().replace(/^(["'])(.*)\1$/, '$2')]);
  }
  return out;
}

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

/** `osm config clean [--clean-ws]`: the settings file is moved to `<file>.backup` and regenerated. */
export async function configClean(command: Command): Promise<void> {
  const opts = optionsOf<ConfigOptions & { cleanWs?: boolean }>(command);
  const ui = createUi(opts);
  const file = resolveSettingsFile(opts);
  const base = resolveBaseFolder(opts.baseFolder);
  let backup = '';
  let workspaces = '';
  if (existsSync(file)) {
    if (opts.cleanWs) {
      try {
        workspaces = loadSettings({ baseFolder: opts.baseFolder, settingsFile: opts.settingsFile }).paths.workspaces;
      } catch {
        workspaces = '';
      }
    }
    backup = `${file}.backup`;
    renameSync(file, backup);
  }
  ensureSettingsFile(file, base);
  ui.success(`Settings file ${file} regenerated with new random secrets${backup ? ` (previous file: ${backup})` : ''}`);
  if (opts.cleanWs) {
    const dir = workspaces || loadSettings({ baseFolder: opts.baseFolder, settingsFile: opts.settingsFile }).paths.workspaces;
    if (existsSync(dir)) {
      const entries = readdirSync(dir);
      for (const e of entries) rmSync(join(dir, e), { recursive: true, force: true });
      ui.out(`  removed ${entries.length} workspace folder(s) from ${dir}`);
    }
  }
}

/** `osm config view <key>`: one value, redacted unless --show-secrets. */
export async function configView(command: Command, key: string): Promise<void> {
  const opts = optionsOf<ConfigOptions>(command);
  const ui = createUi(opts);
  const loaded = load(ui, opts);
  const source = opts.showSecrets ? loaded.settings : redactSettings(loaded.settings);
  const value = getSettingValue(source, key);
  // Scripts reading a secret (`KEY=$(osm config view server.auth_api_key)`) must not take the
  // placeholder for the value silently.
  if (!opts.showSecrets && JSON.stringify(value ?? null).includes(REDACTED)) notice(ui, opts, `⚠ secrets are shown as ${REDACTED}; add --show-secrets to print them`);
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
