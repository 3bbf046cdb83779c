import { describe, expect, it } from 'vitest';
import { catalogByCategory, FUNCTION_CATALOG, UNSUPPORTED_FUNCTIONS, camelName } from '../../../src/engine/functions/catalog.js';
import { canonicalName, DATABASE_UNAVAILABLE, functionNames, getFunction, registerFunctions } from '../../../src/engine/functions/registry.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

const SPEC_NAMES = [
  'fileExists', 'fileLength', 'readFile', 'writeFile', 'appendFile', 'removeFile', 'copyFile', 'mergeFiles', 'trim', 'split',
  'replace', 'contains', 'toLowerCase', 'toUpperCase', 'join', 'len', 'exec_cmd', 'isEmpty', 'commandExists', 'sleep',
  'http_get', 'http_post', 'httpRequest', 'randomString', 'uuid', 'timestamp', 'base64Encode', 'base64Decode', 'urlEncode',
  'urlDecode', 'sortUnix', 'diff_unix', 'gitClone', 'gitPull', 'parseInt', 'toString', 'log_info', 'log_debug', 'log_warn',
  'log_error', 'zip_dir', 'unzip_dir',
];

describe('registry', () => {
  it('every spec name resolves', () => {
    for (const name of SPEC_NAMES) expect(getFunction(name), name).toBeTypeOf('function');
  });

  it('every catalogue entry is callable by its name and aliases', () => {
    for (const e of FUNCTION_CATALOG) {
      expect(getFunction(e.name), e.name).toBeTypeOf('function');
      for (const a of e.aliases) expect(canonicalName(a), a).toBe(e.name);
    }
  });

  it('every registered function is catalogued', () => {
    const catalogued = new Set(FUNCTION_CATALOG.flatMap((e) => [e.name, ...e.aliases]));
    const missing = functionNames().filter((n) => !catalogued.has(n) && canonicalName(n) === n);
    expect(missing).toEqual([]);
  });

  it('unsupported functions are not listed and fail loudly by either spelling', () => {
    const listed = new Set(functionNames());
    const catalogued = new Set(FUNCTION_CATALOG.map((e) => e.name));
    for (const name of UNSUPPORTED_FUNCTIONS) {
      expect(listed.has(name), name).toBe(false);
      expect(catalogued.has(name), name).toBe(false);
      expect(() => getFunction(name)!({})).toThrow(`not supported in osm: ${name}`);
      expect(() => evaluate(`${camelName(name)}('x')`, {})).toThrow(`not supported in osm: ${name}`);
    }
  });

  it('no catalogued function is a placeholder answering the database-unavailable string for every call', () => {
    // With a context that has no store, store-backed functions may say so; but none may be a bare
    // placeholder that ignores its context (that was db_update, run_status … before issue 16).
    const placeholders = FUNCTION_CATALOG.filter((e) => /^\(\)\s*=>\s*DATABASE_UNAVAILABLE$/.test(getFunction(e.name)!.toString().trim()));
    expect(placeholders.map((e) => e.name)).toEqual([]);
  });

  it('camelName', () => {
    expect(camelName('to_lower_case')).toBe('toLowerCase');
    expect(camelName('base64_encode')).toBe('base64Encode');
    expect(camelName('trim')).toBe('trim');
  });

  it('database functions answer an error string until the data plane registers them', () => {
    expect(getFunction('db_select')!({}, 'SELECT 1', 'jsonl')).toBe(DATABASE_UNAVAILABLE);
    expect(evaluate('dbSelectAssets("ws", "jsonl")', {}).value).toBe(DATABASE_UNAVAILABLE);
    registerFunctions('database', { db_select_total_urls: (ctx) => `count for ${ctx.workspace}` });
    expect(evaluate('db_select_total_urls()', { Workspace: 'acme' }).value).toBe('count for acme');
    expect(evaluate('dbSelectTotalUrls()', { TargetSpace: 'beta' }).value).toBe('count for beta');
    expect(() => registerFunctions('database', { bad: 'x' as never })).toThrow(TypeError);
  });
});

describe('catalogue', () => {
  it('has unique names and signatures that start with the name', () => {
    const names = FUNCTION_CATALOG.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    for (const e of FUNCTION_CATALOG) expect(e.signature.startsWith(`${e.name}(`)).toBe(true);
  });

  it('catalogByCategory has the spec shape', () => {
    const by = catalogByCategory();
    expect(Object.keys(by)).toEqual(expect.arrayContaining(['file', 'string', 'type_conversion', 'utility', 'logging', 'http', 'generation', 'encoding', 'unix_commands', 'archive', 'markdown', 'database', 'output', 'url_processing', 'type_detection', 'environment', 'diff', 'data_query']));
    expect(by.file).toContainEqual({ name: 'file_exists(path)', description: expect.any(String), return_type: 'bool' });
    expect(by.database!.length).toBeGreaterThan(40);
  });
});
