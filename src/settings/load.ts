/**
 * Loading settings: find the base folder and file, create them on first use, parse + validate the
 * YAML (every issue at once), resolve paths. Parsing is pure (`parseSettingsText`) so the daemon's
 * hot reload and `PUT /settings/yaml` validate text exactly the way startup does.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import { errors } from '../errors.js';
import { ensureSettingsFile, ensureStandardFolders } from './bootstrap.js';
import { formatIssues, lintSettings } from './lint.js';
import { expandEnv, expandHome, resolveAllPaths, type ResolvedPaths } from './paths.js';
import { settingsSchema, type Settings } from './schema.js';

export type { ResolvedPaths } from './paths.js';
export { generateSettingsText } from './template.js';

export const SETTINGS_FILE_NAME = 'osm-settings.yaml';
export const BASE_FOLDER_ENV = 'OSM_BASE_FOLDER';

export interface LoadedSettings {
  settings: Settings;
  paths: ResolvedPaths;
  file: string;
  created: boolean;
  warnings: string[];
}

export interface LoadOptions {
  baseFolder?: string;
  settingsFile?: string;
  workflowFolder?: string;
  /** Create the settings file, standard folders and sample workflows when missing (default true). */
  create?: boolean;
}

/** The base folder: `-b` flag, else `$OSM_BASE_FOLDER`, else `~/osmedeus-base` (absolute). */
export function resolveBaseFolder(flag?: string): string {
  const chosen = flag?.trim() || process.env[BASE_FOLDER_ENV]?.trim() || join(homedir(), 'osmedeus-base');
  return resolve(expandHome(chosen));
}

/** The settings file path for the given options (`--settings-file` or `<base>/osm-settings.yaml`). */
export function resolveSettingsFile(opts: Pick<LoadOptions, 'baseFolder' | 'settingsFile'> = {}): string {
  if (opts.settingsFile?.trim()) return resolve(expandHome(opts.settingsFile.trim()));
  return join(resolveBaseFolder(opts.baseFolder), SETTINGS_FILE_NAME);
}

/**
 * Parses YAML settings text into a plain object. Syntax errors → settingsInvalid listing every
 * error with its line. An empty document is an empty mapping (all defaults).
 */
export function parseSettingsYaml(text: string): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw errors.settingsInvalid(doc.errors.map(yamlErrorText).join('; '));
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias without its anchor, or an alias bomb: the document is invalid, not the server.
    throw errors.settingsInvalid((err as Error).message);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw errors.settingsInvalid('(root): expected a mapping of sections');
  return dropNullMembers(raw) as Record<string, unknown>;
}

/** One YAML syntax error as `line L, column C: message` (the library repeats the position and a code frame). */
export function yamlErrorText(e: YAMLError): string {
  const pos = e.linePos?.[0];
  const msg = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  return pos ? `line ${pos.line}, column ${pos.col}: ${msg}` : msg;
}

/** Validates a plain settings object against the schema; all issues in one settingsInvalid error. */
export function validateSettingsObject(raw: Record<string, unknown>): Settings {
  const result = settingsSchema.safeParse(raw);
  if (!result.success) throw errors.settingsInvalid(formatIssues(result.error));
  return result.data;
}

/** Parses, validates and resolves settings text for `baseFolder`. Throws errors.settingsInvalid. */
export function parseSettingsText(text: string, baseFolder: string, overrides: { workflowFolder?: string; settingsFile?: string } = {}): LoadedSettings {
  const base = resolve(expandHome(baseFolder));
  const raw = parseSettingsYaml(text);
  const warnings = lintSettings(raw);
  const settings = validateSettingsObject(raw);
  // The folder the process was started with wins over the file's own base_folder (as the
  // reference does on reload); everything else is resolved relative to it.
  settings.base_folder = base;
  const file = overrides.settingsFile ? resolve(overrides.settingsFile) : join(base, SETTINGS_FILE_NAME);
  const paths = resolveAllPaths(settings, base, file, overrides.workflowFolder);
  return { settings, paths, file, created: false, warnings };
}

/** Loads the settings for `opts`, creating file, folders and sample workflows on first use. */
export function loadSettings(opts: LoadOptions = {}): LoadedSettings {
  const create = opts.create !== false;
  const file = resolveSettingsFile(opts);
  let base = resolveBaseFolder(opts.baseFolder);
  const explicitBase = Boolean(opts.baseFolder?.trim() || process.env[BASE_FOLDER_ENV]?.trim());
  let created = false;
  if (!existsSync(file)) {
    if (!create) {
      const loaded = parseSettingsText('', base, { settingsFile: file, workflowFolder: opts.workflowFolder });
      loaded.warnings.push(`settings file not found: ${file} (using built-in defaults)`);
      return loaded;
    }
    created = ensureSettingsFile(file, base);
  }
  const text = readSettingsFile(file);
  if (opts.settingsFile && !explicitBase) base = baseFolderFromText(text, dirname(file)) ?? base;
  const loaded = parseSettingsText(text, base, { settingsFile: file, workflowFolder: opts.workflowFolder });
  loaded.created = created;
  loaded.warnings.push(...permissionWarnings(file), ...baseFolderWarnings(loaded.paths.base));
  if (create) loaded.warnings.push(...ensureStandardFolders(loaded.paths, { copySamples: !opts.workflowFolder }));
  return loaded;
}

/** Reads the settings file; unreadable → settingsInvalid with the OS reason. */
export function readSettingsFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw errors.settingsInvalid(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** With `--settings-file` and no explicit base folder, the file's own `base_folder` is the base. */
function baseFolderFromText(text: string, relativeTo: string): string | undefined {
  const raw = parseSettingsYaml(text);
  const value = raw.base_folder;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return resolve(relativeTo, expandHome(expandEnv(value.trim())));
}

/** A base folder other users can enter exposes the database and scan results (never chmod-ed here: it may be shared on purpose). */
function baseFolderWarnings(base: string): string[] {
  if (process.platform === 'win32') return [];
  try {
    const mode = statSync(base).mode & 0o777;
    if (mode & 0o077) return [`base folder ${base} is accessible by other users (mode ${mode.toString(8)}); it holds the database, workspaces and secrets, consider chmod 700`];
  } catch {
    // not created yet (or unreadable): nothing to say
  }
  return [];
}

function permissionWarnings(file: string): string[] {
  if (process.platform === 'win32') return [];
  try {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) return [`settings file ${file} is accessible by other users (mode ${mode.toString(8)}); it holds secrets, consider chmod 600`];
  } catch {
    // unreadable files fail later with a clearer error
  }
  return [];
}

/** `key:` with nothing after it parses as null; treat it as absent so the default applies. */
function dropNullMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNullMembers);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    out[k] = dropNullMembers(v);
  }
  return out;
}
