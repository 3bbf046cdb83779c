/**
 * `osm config set` and `config view`: dotted keys into the settings file. Writing edits the YAML
 * document in place so comments and layout survive; the value is typed by the schema, the whole
 * result is validated before anything is written, and the previous file is kept as `.backup`.
 */
import { isDeepStrictEqual } from 'node:util';
import { Document, isMap, isScalar, isSeq, parseDocument, Scalar, type Document as YamlDocument } from 'yaml';
import { errors } from '../errors.js';
import { atomicWriteFile, backupFile } from '../util/fs-safe.js';
import { childSchema, schemaKind, type LeafType } from './introspect.js';
import { parseSettingsYaml, readSettingsFile, validateSettingsObject, yamlErrorText } from './load.js';
import { settingsSchema } from './schema.js';

type Seg = string | number;

/** Sets `dottedKey` to `rawValue` (typed by the schema) in `file`; validates, backs up, writes 0600. */
export function setSettingValue(file: string, dottedKey: string, rawValue: string): { key: string; value: unknown; backup: string } {
  const text = readSettingsFile(file);
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw errors.settingsInvalid(doc.errors.map(yamlErrorText).join('; '));
  const segs = splitKey(dottedKey);

  let edit: { path: Seg[]; value: unknown; target: unknown };
  if (segs.length === 2 && segs[0] === 'server' && segs[1] === 'username') {
    edit = renamePrimaryUser(doc, rawValue.trim(), dottedKey);
  } else {
    const logical = segs.length === 2 && segs[0] === 'server' && segs[1] === 'password' ? ['server', 'simple_user_map_key', primaryUserOf(doc.getIn(['server', 'simple_user_map_key'])) ?? 'osmedeus']
      : segs.length === 2 && segs[0] === 'global_vars' ? ['global_vars', segs[1]!, 'value'] // keeps as_env
      : segs;
    const { path, types } = typedPath(logical, doc, dottedKey);
    const value = coerce(rawValue, types, dottedKey);
    const target = doc.getIn(path, true);
    replaceEmptyParents(doc, path);
    doc.setIn(path, value);
    edit = { path, value, target };
  }

  const newText = minimalEdit(text, doc, edit.target) ?? doc.toString();
  // Validate the exact text we are about to write, not the in-memory document.
  validateSettingsObject(parseSettingsYaml(newText));
  const backup = backupFile(file);
  atomicWriteFile(file, newText, 0o600);
  return { key: edit.path.join('.'), value: edit.value, backup };
}

/**
 * `config set <key>.clear` (reference server-api §9.4): empties the list, map or value at `<key>`
 * — `notification.webhooks.clear` removes every webhook. Validated and written like a set.
 */
export function clearSettingValue(file: string, dottedKey: string): { key: string; backup: string } {
  const text = readSettingsFile(file);
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw errors.settingsInvalid(doc.errors.map(yamlErrorText).join('; '));
  const segs = splitKey(dottedKey);
  const current = doc.getIn(segs);
  if (current === undefined) {
    getSettingValue(validateSettingsObject(parseSettingsYaml(text)), dottedKey); // unknown key → the usual error
  }
  const json = (current as { toJSON?: () => unknown } | undefined)?.toJSON?.() ?? current;
  const empty = Array.isArray(json) ? [] : json !== null && typeof json === 'object' ? {} : '';
  doc.setIn(segs, doc.createNode(empty));
  const newText = doc.toString();
  validateSettingsObject(parseSettingsYaml(newText));
  const backup = backupFile(file);
  atomicWriteFile(file, newText, 0o600);
  return { key: segs.join('.'), backup };
}

/** The value at `dottedKey` in a settings object (`server.username`/`server.password` mean the primary user). */
export function getSettingValue(settings: unknown, dottedKey: string): unknown {
  const segs = splitKey(dottedKey);
  if (segs.length === 2 && segs[0] === 'server' && (segs[1] === 'username' || segs[1] === 'password')) {
    const users = (settings as { server?: { simple_user_map_key?: Record<string, unknown> } } | null)?.server?.simple_user_map_key;
    const primary = primaryUserOf(users);
    if (primary === undefined) throw errors.settingsKey('no user configured under server.simple_user_map_key');
    return segs[1] === 'username' ? primary : users![primary];
  }
  let cur: unknown = settings;
  for (const seg of segs) {
    if (cur !== null && typeof cur === 'object' && Object.prototype.hasOwnProperty.call(cur, seg)) {
      cur = (cur as Record<string, unknown>)[seg];
    } else {
      throw errors.settingsKey(`unknown config key: ${dottedKey}`);
    }
  }
  return cur;
}

function splitKey(dottedKey: string): string[] {
  const key = dottedKey.trim();
  const segs = key.split('.');
  if (key === '' || segs.some((s) => s === '')) throw errors.settingsKey(`invalid config key: ${JSON.stringify(dottedKey)}`);
  return segs;
}

/**
 * Checks the key against the schema, turning list indexes into numbers, and returns the leaf
 * types. A list may grow by one (index == current length), like the reference's auto-extend.
 */
function typedPath(segs: string[], doc: YamlDocument, dottedKey: string): { path: Seg[]; types: LeafType[] } {
  let schema: import('zod').ZodType = settingsSchema;
  const path: Seg[] = [];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const kind = schemaKind(schema);
    if (kind.kind === 'leaf') throw errors.settingsKey(`${path.join('.')} is a value, not a section`);
    let key: Seg = seg;
    if (kind.kind === 'array') {
      if (!/^\d+$/.test(seg)) throw errors.settingsKey(`${path.join('.')} is a list: use an index, e.g. ${path.join('.')}.0`);
      key = Number(seg);
      const list = doc.getIn(path, true);
      const length = isSeq(list) ? list.items.length : 0;
      if (key > length) throw errors.settingsKey(`index ${key} is out of range for ${path.join('.')} (it has ${length} item${length === 1 ? '' : 's'}; use ${length} to append)`);
    }
    const next = childSchema(schema, key);
    if (!next) {
      throw errors.settingsKey(i === 0 ? `unknown config section: ${seg}` : `unknown ${path.join('.')} field: ${seg}`);
    }
    path.push(key);
    schema = next;
  }
  const leaf = schemaKind(schema);
  if (leaf.kind !== 'leaf') {
    const hint = leaf.kind === 'object' ? ` (fields: ${leaf.keys.join(', ')})` : '';
    throw errors.settingsKey(`${dottedKey} is a section, not a value; set one of its fields${hint}`);
  }
  return { path, types: leaf.types };
}

// Go's ParseBool spellings (the reference) plus yes/no.
const TRUE = new Set(['true', '1', 'yes', 't']);
const FALSE = new Set(['false', '0', 'no', 'f']);

/** Types a raw CLI value: the first of the schema's accepted types that fits wins. */
function coerce(raw: string, types: LeafType[], key: string): unknown {
  const text = raw.trim();
  for (const t of types) {
    if (t === 'string') return raw;
    if (t === 'boolean') {
      if (TRUE.has(text.toLowerCase())) return true;
      if (FALSE.has(text.toLowerCase())) return false;
    }
    if (t === 'int' && /^[+-]?\d+$/.test(text)) return Number(text);
    if (t === 'number' && text !== '' && Number.isFinite(Number(text))) return Number(text);
  }
  const first = types[0];
  if (first === 'boolean') throw errors.settingsKey(`${key} must be a boolean (true/false/t/f/1/0/yes/no)`);
  if (first === 'int' && text !== '' && Number.isFinite(Number(text))) throw errors.settingsKey(`${key} must be a whole number`);
  throw errors.settingsKey(`${key} must be a number`);
}

/**
 * `section:` left empty parses as a null scalar: make it a collection so setIn can descend. An
 * empty flow collection (`webhooks: []`) becomes block style so the first entry reads naturally.
 */
function replaceEmptyParents(doc: YamlDocument, path: Seg[]): void {
  for (let i = 1; i < path.length; i++) {
    const node = doc.getIn(path.slice(0, i), true);
    if (isScalar(node) && (node.value === null || node.value === undefined || node.value === '')) {
      doc.setIn(path.slice(0, i), doc.createNode(typeof path[i] === 'number' ? [] : {}));
    } else if ((isSeq(node) || isMap(node)) && node.flow && node.items.length === 0) {
      node.flow = false;
    }
  }
}

/** `osmedeus` when present, else the alphabetically first user (reference §9.4). */
function primaryUserOf(users: unknown): string | undefined {
  let names: string[];
  if (isMap(users)) names = users.items.map((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)));
  else if (users !== null && typeof users === 'object') names = Object.keys(users);
  else return undefined;
  if (names.includes('osmedeus')) return 'osmedeus';
  return [...names].sort()[0];
}

function renamePrimaryUser(doc: YamlDocument, newName: string, dottedKey: string): { path: Seg[]; value: unknown; target: unknown } {
  if (!newName || /[\s:#]/.test(newName)) throw errors.settingsKey(`${dottedKey} must be a non-empty name without spaces, ':' or '#'`);
  const users = doc.getIn(['server', 'simple_user_map_key'], true);
  const primary = primaryUserOf(users);
  if (!isMap(users) || primary === undefined) {
    throw errors.settingsKey('no user to rename: set server.simple_user_map_key.<user> <password> first');
  }
  const pair = users.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === primary)!;
  if (newName !== primary && users.has(newName)) throw errors.settingsKey(`user already exists: ${newName}`);
  const target = isScalar(pair.key) ? pair.key : undefined;
  if (isScalar(pair.key)) pair.key.value = newName;
  else pair.key = new Scalar(newName);
  return { path: ['server', 'simple_user_map_key', newName], value: newName, target };
}

/**
 * Rewrites only the edited scalar's token in the original text (keeps spacing, comments and flow
 * style exactly). Returns undefined when that is not possible or would not give the same data
 * as the edited document; the caller then re-serialises the whole document.
 */
function minimalEdit(original: string, edited: YamlDocument, target: unknown): string | undefined {
  if (!isScalar(target) || !target.range) return undefined;
  const [start, end] = target.range;
  const old = original.slice(start, end);
  const token = scalarToken(target.value, target.type) + (old.endsWith('\n') ? '\n' : '');
  const candidate = original.slice(0, start) + token + original.slice(end);
  const check = parseDocument(candidate);
  if (check.errors.length > 0 || !isDeepStrictEqual(check.toJS(), edited.toJS())) return undefined;
  return candidate;
}

function scalarToken(value: unknown, style: Scalar['type']): string {
  if (typeof value !== 'string') return String(value);
  if (style === Scalar.QUOTE_SINGLE && !value.includes('\n')) return `'${value.replace(/'/g, "''")}'`;
  if (style === Scalar.PLAIN && !/[\n,[\]{}#]/.test(value)) {
    const plain = new Document(value).toString({ lineWidth: 0 }).trimEnd();
    if (!plain.includes('\n')) return plain;
  }
  // JSON strings are valid YAML double-quoted scalars.
  return JSON.stringify(value);
}
