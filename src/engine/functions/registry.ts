/**
 * Name → implementation for every utility function, under its snake_case name and its aliases
 * (camelCase spellings from the catalogue). Built-in categories are loaded on first use, which
 * keeps import order irrelevant (category modules may import this file).
 *
 * Registration hook for the data plane: `registerFunctions('database', { db_select: (ctx, sql, fmt) => … })`.
 * Until a database function is registered it answers DATABASE_UNAVAILABLE (a value, not a throw).
 */
import type { FnContext } from '../js-runtime.js';
import { FUNCTION_CATALOG, UNSUPPORTED_FUNCTIONS, camelName } from './catalog.js';
import { fileFunctions } from './file.js';
import { stringFunctions } from './string.js';
import { typeConversionFunctions } from './type-conversion.js';
import { eventFunctions, notificationFunctions, telegramFunctions } from './events.js';
import { utilityFunctions } from './utility.js';
import { loggingFunctions } from './logging.js';
import { httpFunctions } from './http.js';
import { generationFunctions } from './generation.js';
import { encodingFunctions } from './encoding.js';
import { unixCommandFunctions } from './unix-commands.js';
import { archiveFunctions } from './archive.js';
import { markdownFunctions } from './markdown.js';
import { outputFunctions } from './output.js';
import { urlProcessingFunctions } from './url-processing.js';
import { typeDetectionFunctions } from './type-detection.js';
import { environmentFunctions } from './environment.js';
import { diffFunctions } from './diff.js';
import { dataQueryFunctions } from './data-query.js';
import { databaseFunctions } from './database.js';
import { toolImportFunctions } from './tool-imports.js';
import { reportFunctions } from './report.js';
import { reconFormatFunctions } from './recon-formats.js';
import { cdnFunctions } from './cdn.js';
import { installerFunctions } from './installer.js';

/** One utility function: the evaluation's context first, then the script's arguments as passed. */
export type FnImpl = (ctx: FnContext, ...args: unknown[]) => unknown;

/** What a database function answers before the data plane registered its implementation. */
export const DATABASE_UNAVAILABLE = 'error: database functions are not available in this context';

const impls = new Map<string, FnImpl>();
const categoryOf = new Map<string, string>();
const aliasOf = new Map<string, string>();
let loaded = false;
let namesCache: string[] | undefined;

/** Adds `name` and its alias spellings without overriding a real name. */
function put(category: string, name: string, fn: FnImpl): void {
  namesCache = undefined;
  impls.set(name, fn);
  categoryOf.set(name, category);
  const camel = camelName(name);
  if (camel !== name && !aliasOf.has(camel)) aliasOf.set(camel, name);
}

function ensureLoaded(): void {
  if (loaded) return;
  loaded = true;
  const builtins: Record<string, Record<string, FnImpl>> = {
    file: fileFunctions,
    string: stringFunctions,
    type_conversion: typeConversionFunctions,
    utility: utilityFunctions,
    logging: loggingFunctions,
    http: httpFunctions,
    generation: generationFunctions,
    encoding: encodingFunctions,
    unix_commands: unixCommandFunctions,
    archive: archiveFunctions,
    markdown: markdownFunctions,
    output: { ...outputFunctions, nmap_to_jsonl: reconFormatFunctions.nmap_to_jsonl! },
    url_processing: urlProcessingFunctions,
    type_detection: { ...typeDetectionFunctions, detect_language: reconFormatFunctions.detect_language! },
    environment: environmentFunctions,
    diff: diffFunctions,
    data_query: dataQueryFunctions,
    database: { ...databaseFunctions, ...toolImportFunctions, ...reportFunctions },
    event_generation: eventFunctions,
    notification: { ...notificationFunctions, ...telegramFunctions },
    cdn_storage: cdnFunctions,
    installer: installerFunctions,
  };
  for (const [category, record] of Object.entries(builtins)) for (const [name, fn] of Object.entries(record)) put(category, name, fn);
  for (const e of FUNCTION_CATALOG) {
    if (e.category === 'database' && !impls.has(e.name)) put('database', e.name, () => DATABASE_UNAVAILABLE);
    for (const a of e.aliases) if (!aliasOf.has(a)) aliasOf.set(a, e.name);
  }
  namesCache = undefined;
}

/** Registers (or replaces) the implementations of one category, e.g. the data plane's 'database'. */
export function registerFunctions(category: string, record: Record<string, FnImpl>): void {
  ensureLoaded();
  for (const [name, fn] of Object.entries(record)) {
    if (typeof fn !== 'function') throw new TypeError(`function ${name} of ${category} is not callable`);
    put(category, name, fn);
  }
}

/** `name` / `nameCamel` of every unsupported function → its snake_case name. */
const unsupported = new Map<string, string>(UNSUPPORTED_FUNCTIONS.flatMap((n) => [[n, n], [camelName(n), n]] as [string, string][]));

/** The implementation for a snake_case name or one of its aliases (unsupported ones throw when called). */
export function getFunction(name: string): FnImpl | undefined {
  ensureLoaded();
  const fn = impls.get(name) ?? impls.get(aliasOf.get(name) ?? '');
  if (fn) return fn;
  const missing = unsupported.get(name);
  return missing === undefined ? undefined : () => {
    throw new Error(`not supported in osm: ${missing}`);
  };
}

/** Names bound in the JS runtime: every callable spelling plus the unsupported ones (which throw). */
export function boundFunctionNames(): string[] {
  const names = new Set(functionNames());
  for (const n of unsupported.keys()) names.add(n);
  return [...names];
}

/** The snake_case name a spelling resolves to, or undefined. */
export function canonicalName(name: string): string | undefined {
  ensureLoaded();
  if (impls.has(name)) return name;
  const target = aliasOf.get(name);
  return target !== undefined && impls.has(target) ? target : undefined;
}

/** The category of a function (by any spelling). */
export function categoryOfFunction(name: string): string | undefined {
  const canonical = canonicalName(name);
  return canonical === undefined ? undefined : categoryOf.get(canonical);
}

/** Every callable spelling: snake_case names and aliases, sorted. */
export function functionNames(): string[] {
  ensureLoaded();
  if (!namesCache) {
    const names = new Set(impls.keys());
    for (const [alias, target] of aliasOf) if (impls.has(target)) names.add(alias);
    namesCache = [...names].sort();
  }
  return [...namesCache];
}
