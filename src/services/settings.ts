import { parseSettingsText } from '../settings/load.js';
/**
 * Settings use cases of the API: the redacted file, replacing it, reloading it and the hot-reload
 * status. Validation, backup, atomic write and the live swap belong to the SettingsManager.
 */
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { errors, messageOf } from '../errors.js';
import { REDACTED, redactYamlText, secretAliases } from '../settings/index.js';
import { isMaskedUrlPath, maskUrlPassword } from '../settings/redact.js';
import type { AppContext } from './context.js';

/** The settings file as text with every secret replaced by `[REDACTED]`. */
export function readRedactedSettings(app: AppContext): string {
  let text: string;
  try {
    text = readFileSync(app.manager.path, 'utf8');
  } catch (err) {
    throw errors.internal(`Failed to read config file: ${messageOf(err)}`);
  }
  return redactYamlText(text);
}

function pathText(path: (string | number)[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[');
}

/** The value at `path` of a plain object, or undefined. */
function valueAt(obj: unknown, path: (string | number)[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}

/** The YAML text of a scalar value put back in place of `"[REDACTED]"` (a JSON string is valid YAML). */
function scalarText(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(String(value));
}

/**
 * Puts the current secrets back where `text` still says `[REDACTED]` (a client edited the text
 * `GET /settings/yaml` returned). A `[REDACTED]` with no current value to restore is refused, so
 * the literal placeholder is never written as a password or key.
 */
export function mergeRedactedSecrets(text: string, currentText: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return text; // replaceText reports the syntax errors
  const spans: { start: number; end: number; path: (string | number)[]; masked?: string }[] = [];
  const walk = (node: Node | null | undefined, path: (string | number)[]) => {
    if (!node) return;
    if (isMap(node)) {
      for (const pair of node.items) walk(pair.value as Node | null, [...path, isScalar(pair.key) ? String(pair.key.value) : String(pair.key)]);
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item as Node | null, [...path, i]));
    } else if (isScalar(node) && !isAlias(node) && node.value === REDACTED && node.range) {
      spans.push({ start: node.range[0], end: node.range[1], path });
    } else if (isScalar(node) && !isAlias(node) && isMaskedUrlPath(path) && typeof node.value === 'string' && node.value.includes(REDACTED) && node.range) {
      // A connection URL shown with its password masked: kept when it still reads as the current one.
      spans.push({ start: node.range[0], end: node.range[1], path, masked: node.value });
    }
  };
  walk(doc.contents as Node | null, []);
  if (spans.length === 0) return text;
  let current: unknown;
  try {
    current = parseDocument(currentText).toJS({ maxAliasCount: 100 });
  } catch {
    current = undefined;
  }
  const missing: string[] = [];
  const replacements = spans.map((s) => {
    const v = valueAt(current, s.path);
    if (v === undefined || v === null || typeof v === 'object' || v === REDACTED) missing.push(pathText(s.path));
    else if (s.masked !== undefined && maskUrlPassword(String(v)) !== s.masked) missing.push(pathText(s.path));
    return { ...s, value: v };
  });
  if (missing.length > 0) {
    throw errors.settingsInvalid(`${missing.join(', ')}: "${REDACTED}" can only keep an existing secret, and the current settings have no value there; send the real value`);
  }
  let out = text;
  for (const r of replacements.sort((a, b) => b.start - a.start)) {
    const old = out.slice(r.start, r.end);
    out = out.slice(0, r.start) + scalarText(r.value) + (old.endsWith('\n') ? '\n' : '') + out.slice(r.end);
  }
  return out;
}

/** PUT /settings/yaml: validate, back up, write atomically, reload (secrets left redacted are kept). */
export function replaceSettings(app: AppContext, yamlText: string): { message: string; path: string; backup: string } {
  if (typeof yamlText !== 'string' || yamlText.trim() === '') {
    throw errors.settingsInvalid('the body is empty (an empty file would reset every setting, including the API key)');
  }
  let currentText = '';
  try {
    currentText = readFileSync(app.manager.path, 'utf8');
  } catch {
    // No current file: nothing to merge; [REDACTED] values are then refused.
  }
  // Checked on the client's text, before the secrets are merged back: an alias of a redacted
  // value must not become a copy of the real one somewhere that is shown.
  const aliases = secretAliases(yamlText);
  if (aliases.length > 0) {
    throw errors.settingsInvalid(`aliases of secret values are not allowed (${aliases.join(', ')}); write the value itself`);
  }
  const merged = mergeRedactedSecrets(yamlText, currentText);
  checkReplacement(app, merged);
  const res = app.manager.replaceText(merged);
  return { message: 'Configuration updated successfully', path: res.path, backup: res.backup };
}

/** POST /settings/reload: re-reads the file; a bad file keeps the old settings (500 with the reason). */
export function reloadSettings(app: AppContext): { message: string; path: string; version: number } {
  app.manager.reload();
  return { message: 'Configuration reloaded successfully', path: app.manager.path, version: app.manager.version };
}

/** GET /settings/status. */
export function settingsStatus(app: AppContext): { path: string; last_reload: string; is_watching: boolean; error: string; version: number } {
  return app.manager.status();
}

/**
 * What the settings schema alone lets through but PUT must not: unknown keys (the reference parses
 * strictly here — a typo would otherwise be dropped silently) and a file that leaves no way to
 * authenticate (no API key and no user who can log in): every client, this one included, would be
 * locked out of the API until someone edits the file by hand.
 */
function checkReplacement(app: AppContext, text: string): void {
  const loaded = parseSettingsText(text, app.settings().paths.base, { settingsFile: app.manager.path });
  const unknown = loaded.warnings.filter((w) => w.startsWith('unknown key ignored: ')).map((w) => w.slice('unknown key ignored: '.length));
  if (unknown.length > 0) throw errors.settingsInvalid(`unknown key${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  const srv = loaded.settings.server as { enabled_auth_api?: boolean; auth_api_key?: string; jwt?: { secret_signing_key?: string }; simple_user_map_key?: Record<string, string> };
  const apiKey = srv.enabled_auth_api !== false && String(srv.auth_api_key ?? '').trim() !== '';
  const login = String(srv.jwt?.secret_signing_key ?? '').trim() !== '' && Object.values(srv.simple_user_map_key ?? {}).some((p) => String(p ?? '').trim() !== '');
  if (!apiKey && !login) {
    throw errors.settingsInvalid('server: no credentials would be left (auth_api_key is empty or disabled, and no user of simple_user_map_key can log in with a jwt.secret_signing_key); every API client would be locked out');
  }
}
