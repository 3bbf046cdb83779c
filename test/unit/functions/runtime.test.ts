import { describe, expect, it, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { evaluate, evaluateCondition, looksLikeFunctionCall, ScriptError, SkipSignal } from '../../../src/engine/js-runtime.js';
import { OsmError } from '../../../src/errors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const quiet = { ctx: { log: () => {} } };

describe('js-runtime: results', () => {
  it('returns the value of the last expression statement', () => {
    const p = path.join(dir, 'c.txt');
    fs.writeFileSync(p, 'content');
    const lines: string[] = [];
    const r = evaluate('var c = read_file(p); log_info(c); c', { p }, { ctx: { log: (l) => lines.push(l) } });
    expect(r.value).toBe('content');
    expect(r.logs).toEqual(['[INFO] content']);
    expect(lines).toEqual(['[INFO] content']);
  });

  it('maps undefined to null and exports plain JSON-able values', () => {
    expect(evaluate('undefined', {}).value).toBeNull();
    expect(evaluate('var x = 1;', {}).value).toBeNull();
    const v = evaluate('({ a: 1, b: [1, undefined, "x"], f: function () {}, n: 10n, d: new Date(0) })', {}).value;
    expect(v).toEqual({ a: 1, b: [1, null, 'x'], n: '10', d: '1970-01-01T00:00:00.000Z' });
    expect(structuredClone(v)).toEqual(v);
    expect(evaluate('var a = {}; a.self = a; a.k = 1; a', {}).value).toEqual({ self: null, k: 1 });
    expect(evaluate('NaN', {}).value).toBeNull();
  });

  it('exposes variables as globals, and objects as sandbox copies', () => {
    expect(evaluate('Target + ":" + threads', { Target: 'example.com', threads: 5 }).value).toBe('example.com:5');
    expect(evaluate('resp.status_code', { resp: { status_code: 200 } }).value).toBe(200);
    const vars = { list: [1, 2] };
    evaluate('list.push(3); list.length', vars);
    expect(vars.list).toEqual([1, 2]);
  });

  it('collects every printed line and forwards it to ctx.log', () => {
    const seen: string[] = [];
    const r = evaluate('log_debug("d"); log_warn("w"); log_error("e"); print_green("g"); printf("p"); 1', {}, { ctx: { log: (l) => seen.push(l) } });
    expect(r.logs).toEqual(['[DEBUG] d', '[WARN] w', '[ERROR] e', 'g', 'p']);
    expect(seen).toEqual(r.logs);
  });
});

describe('js-runtime: isolation', () => {
  it('an export named like a function never shadows the function', () => {
    const p = path.join(dir, 'exists.txt');
    fs.writeFileSync(p, 'x');
    expect(evaluate('file_exists(p)', { p, file_exists: 'output', fileExists: 'x' }).value).toBe(true);
    expect(evaluate('fileExists(p)', { p, fileExists: 'output' }).value).toBe(true);
    expect(evaluate('set_var("file_exists", 1); file_exists(p)', { p }, quiet).value).toBe(true);
    expect(evaluate('file_exists = 3; file_exists(p)', { p }).value).toBe(true);
  });

  it('nothing leaks between evaluations', () => {
    expect(evaluate('var leaked = 42; globalThis.other = 1; Array.prototype.evil = 1; leaked', {}).value).toBe(42);
    expect(evaluate('typeof leaked + typeof other + typeof [].evil', {}).value).toBe('undefinedundefinedundefined');
    expect(evaluate('set_var("sv", 5); sv', {}).value).toBe(5);
    expect(evaluate('[typeof sv, get_var("sv")]', {}).value).toEqual(['undefined', '']);
  });

  it('set_var/get_var are scoped to one evaluation', () => {
    expect(evaluate('set_var("k", "v"); [get_var("k"), k, get_var("missing")]', {}).value).toEqual(['v', 'v', '']);
  });

  it.each([
    ['this.constructor.constructor("return process")()'],
    ['read_file.constructor("return process")()'],
    ['Object.getPrototypeOf(log_info).constructor("return process")()'],
    ['(function(){ var a = {}; a.a = a; try { exec_cmd(a) } catch (e) { return e.constructor.constructor("return process")() } })()'],
    ['(function(){ try { exit(1) } catch (e) { return e.constructor.constructor("return process")() } })()'],
    ['(function(){ try { null.x } catch (e) { return e.constructor.constructor("return process")() } })()'],
    ['eval("1 + 1")'],
    ['new Function("return process")()'],
    ['import("node:fs")'],
    ['import /* c */ ("node:fs")'],
  ])('sandbox escape fails: %s', (script) => {
    expect(() => evaluate(script, {})).toThrow(ScriptError);
  });

  it('host values never reach the sandbox (results, errors, arrays, callbacks)', () => {
    const r = evaluate(
      `var out = [];
       var probe = function (v) { try { return typeof v.constructor.constructor('return process')() } catch (e) { return 'blocked' } };
       out.push(probe(split("a,b", ",")));
       out.push(probe(http_get("")));
       out.push(probe(getFunctionLike = read_lines));
       Array.prototype.map = function (cb) { out.push(probe(cb)); return []; };
       join(["a", "b"], ",");
       out`,
      {},
    );
    expect(r.value).toEqual(['blocked', 'blocked', 'blocked']);
  });

  it('no require, process or module in scope', () => {
    expect(evaluate('[typeof require, typeof process, typeof module, typeof globalThis.process]', {}).value).toEqual([
      'undefined', 'undefined', 'undefined', 'undefined',
    ]);
  });

  it('a rejected promise left behind does not disturb the host', () => {
    // The rejection is dropped by the runtime; only the value matters.
    expect(evaluate('Promise.resolve(1).then(function () {}); 5', {}).value).toBe(5);
  });
});

describe('js-runtime: errors', () => {
  it('timeouts become ScriptError "script timed out after Nms"', () => {
    expect(() => evaluate('while (true) {}', {}, { timeoutMs: 50 })).toThrow('script timed out after 50ms');
    expect(() => evaluate('Promise.resolve().then(function () { while (true) {} }); 1', {}, { timeoutMs: 50 })).toThrow(/timed out/);
    expect(() => evaluate('({ get a() { while (true) {} } })', {}, { timeoutMs: 50 })).toThrow(/timed out/);
  });

  it('skip() throws SkipSignal with the reference message, even when caught', () => {
    expect(() => evaluate('skip("no targets")', {})).toThrow(SkipSignal);
    expect(() => evaluate('skip("no targets")', {})).toThrow('skip module: no targets');
    expect(() => evaluate('skip()', {})).toThrow('skip module: skip() called');
    expect(() => evaluate('try { skip("x") } catch (e) {} 1', {})).toThrow(SkipSignal);
  });

  it('exit() never ends the process', () => {
    expect(() => evaluate('exit(1)', {})).toThrow('exit() is not allowed');
    expect(() => evaluate('try { exit(0) } catch (e) {} 1', {})).toThrow(ScriptError);
  });

  it('JS and syntax errors become ScriptError (OSM_ERR_SCRIPT, 400) with the reference prefix', () => {
    let err: unknown;
    try {
      evaluate('undefinedThing + 1', {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScriptError);
    expect(err).toBeInstanceOf(OsmError);
    expect((err as ScriptError).code).toBe('OSM_ERR_SCRIPT');
    expect((err as ScriptError).status).toBe(400);
    expect((err as Error).message).toBe('error executing expression: ReferenceError: undefinedThing is not defined');
    expect(() => evaluate('trim(', {})).toThrow(/^error executing expression: SyntaxError/);
    expect(() => evaluate('throw "boom"', {})).toThrow('error executing expression: boom');
    expect(() => evaluate('throw { get message() { while (true) {} } }', {}, { timeoutMs: 100 })).toThrow(ScriptError);
  });
});

describe('js-runtime: conditions and helpers', () => {
  it('uses JS truthiness ("false" is truthy)', () => {
    expect(evaluateCondition('"false"', {})).toBe(true);
    expect(evaluateCondition('""', {})).toBe(false);
    expect(evaluateCondition('0', {})).toBe(false);
    expect(evaluateCondition('[]', {})).toBe(true);
    expect(evaluateCondition('file_exists', {})).toBe(true);
    expect(evaluateCondition("'{{mode}}' == 'fast'".replace('{{mode}}', 'fast'), {})).toBe(true);
  });

  it('binds lazily and reports unbound identifiers', () => {
    expect(evaluateCondition('run_scan && !enable_debug', { run_scan: true, enable_debug: false, other: 1 }, { lazyBind: true })).toBe(true);
    expect(() => evaluateCondition('other', { x: 1 }, { lazyBind: true })).toThrow(/other is not defined/);
  });

  it('parseInt in scripts is the JS built-in; parse_int is the library one', () => {
    expect(evaluate('[parseInt("12px"), parse_int("12px"), parse_int(" 12 "), typeof toString]', {}).value).toEqual([12, 0, 12, 'function']);
  });

  it('looksLikeFunctionCall', () => {
    expect(looksLikeFunctionCall('file_length("x")')).toBe(true);
    expect(looksLikeFunctionCall('trim (x)')).toBe(true);
    expect(looksLikeFunctionCall('{{Output}}/x.txt')).toBe(false);
  });

  it('fills the function context from variables (Output, Workspace)', () => {
    const out = path.join(dir, 'ws');
    fs.mkdirSync(out, { recursive: true });
    const tpl = path.join(dir, 'report-tpl.md');
    fs.writeFileSync(tpl, '# {{Target}}\n');
    expect(evaluate('generate_security_report(t)', { t: tpl, Output: out, Target: 'example.com' }).value).toBe(true);
    expect(fs.readFileSync(path.join(out, 'security-report.md'), 'utf8')).toBe('# example.com\n');
  });

  it('honours an aborted signal', () => {
    const ac = new AbortController();
    ac.abort();
    expect(() => evaluate('1', {}, { ctx: { signal: ac.signal } })).toThrow(/cancelled/);
  });
});
