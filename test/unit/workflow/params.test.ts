import { describe, expect, it } from 'vitest';
import { mergeProvided, parseParamPairs, parseParamsFileText, resolveParams, toBool } from '../../../src/workflow/params.js';
import type { Param } from '../../../src/workflow/types.js';
import { OsmError } from '../../../src/errors.js';

const p = (over: Partial<Param> & { name: string }): Param => ({ type: 'string', required: false, ...over });

describe('parseParamPairs', () => {
  it('splits on the first "="', () => {
    expect(parseParamPairs(['a=1', 'url=http://x/?q=1', 'empty='])).toEqual({ a: '1', url: 'http://x/?q=1', empty: '' });
  });

  it('reports every bad pair at once', () => {
    try {
      parseParamPairs(['ok=1', 'novalue', '=x']);
      expect.fail('should throw');
    } catch (err) {
      expect(err).toBeInstanceOf(OsmError);
      expect((err as OsmError).message).toContain('params[1]: expected key=value, got "novalue"');
      expect((err as OsmError).message).toContain('params[2]: empty key');
    }
  });
});

describe('parseParamsFileText', () => {
  it('reads JSON by extension and stringifies non-strings', () => {
    const text = JSON.stringify({ a: 'x', n: 5, b: true, nil: null, obj: { k: [1, 2] }, arr: ['y'] });
    expect(parseParamsFileText(text, 'p.json')).toEqual({ a: 'x', n: '5', b: 'true', nil: '', obj: '{"k":[1,2]}', arr: '["y"]' });
  });

  it('reads YAML by extension', () => {
    expect(parseParamsFileText('a: x\nthreads: 20\ndeep: false\n', 'p.yaml')).toEqual({ a: 'x', threads: '20', deep: 'false' });
  });

  it('tries JSON then YAML for other names', () => {
    expect(parseParamsFileText('{"a":"1"}', 'params.txt')).toEqual({ a: '1' });
    expect(parseParamsFileText('a: 2', 'params')).toEqual({ a: '2' });
  });

  it('rejects broken files and non-mappings with the file name', () => {
    expect(() => parseParamsFileText('{bad', 'p.json')).toThrow(/invalid params: p\.json/);
    expect(() => parseParamsFileText('- a\n- b\n', 'p.yml')).toThrow(/expected a mapping/);
    expect(parseParamsFileText('', 'p.yaml')).toEqual({});
  });
});

describe('mergeProvided', () => {
  it('CLI built-ins > -p > -P', () => {
    const merged = mergeProvided({
      fileParams: { a: 'file', b: 'file', target: 'file-target' },
      cliParams: { b: 'cli', target: 'cli-target' },
      cliBuiltins: { target: 'example.com', tactic: 'default', unset: undefined },
    });
    expect(merged).toEqual({ a: 'file', b: 'cli', target: 'example.com', tactic: 'default' });
  });
});

describe('resolveParams', () => {
  const builtins = { Target: 'example.com', Data: '/base/data', threads: 10 };

  it('precedence: provided > generator > default > required error', () => {
    const declared = [
      p({ name: 'a', default: 'dflt', generator: 'concat(gen, erated)' }),
      p({ name: 'b', default: 'dflt', generator: 'concat(gen, erated)' }),
      p({ name: 'c', default: 'dflt' }),
      p({ name: 'd' }),
    ];
    const out = resolveParams(declared, { a: 'given' }, builtins);
    expect(out).toMatchObject({ a: 'given', b: 'generated', c: 'dflt' });
    expect('d' in out).toBe(false);
    expect(() => resolveParams([p({ name: 'target', required: true })], {}, builtins)).toThrow('required parameter missing: target');
  });

  it('treats an empty provided value as not provided', () => {
    expect(resolveParams([p({ name: 'x', default: 'd' })], { x: '' }, {}).x).toBe('d');
    expect(() => resolveParams([p({ name: 'x', required: true })], { x: '' }, {})).toThrow(/required parameter missing: x/);
  });

  it('provided params override same-named built-ins', () => {
    const out = resolveParams([], { threads: '99', extra: 'e' }, builtins);
    expect(out.threads).toBe('99');
    expect(out.extra).toBe('e');
    expect(out.Target).toBe('example.com');
  });

  it('renders defaults with built-ins, provided and earlier params', () => {
    const declared = [
      p({ name: 'wordlist', default: '{{Data}}/wordlists/small.txt' }),
      p({ name: 'out', default: '{{wordlist}}.{{suffix}}.{{later}}' }),
      p({ name: 'later', default: 'L' }),
    ];
    const out = resolveParams(declared, { suffix: 'sfx' }, builtins);
    expect(out.wordlist).toBe('/base/data/wordlists/small.txt');
    expect(out.out).toBe('/base/data/wordlists/small.txt.sfx.');
  });

  it('does not render generator output or provided values', () => {
    const out = resolveParams([p({ name: 'x' }), p({ name: 'g', generator: 'concat("{{", "Target}}")' })], { x: '{{Target}}' }, builtins);
    expect(out.x).toBe('{{Target}}');
    expect(out.g).toBe('{{Target}}');
  });

  it('bool params become booleans; int stays a string', () => {
    const declared = [
      p({ name: 'b1', type: 'bool', default: true }),
      p({ name: 'b2', type: 'bool', default: 'TRUE' }),
      p({ name: 'b3', type: 'bool', default: false }),
      p({ name: 'b4', type: 'bool' }),
      p({ name: 'b5', type: 'bool' }),
      p({ name: 'b6', type: 'bool' }),
      p({ name: 'n', type: 'int', default: 5 }),
    ];
    const out = resolveParams(declared, { b4: '1', b5: 'yes', b6: 'True' }, {});
    expect(out).toMatchObject({ b1: true, b2: true, b3: false, b4: true, b5: false, b6: true, n: '5' });
  });

  it('uses an injected generator runner and propagates generator errors', () => {
    const out = resolveParams([p({ name: 'g', generator: 'randomString(8)' })], {}, {}, { runGenerator: (e, n) => `${n}:${e}` });
    expect(out.g).toBe('g:randomString(8)');
    expect(() => resolveParams([p({ name: 'g', generator: 'bogus()' })], {}, {})).toThrow('generator failed for g: unknown generator bogus');
  });

  it('does not mutate its inputs', () => {
    const vars = { a: 1 };
    const provided = { b: '2' };
    resolveParams([p({ name: 'c', default: 'x' })], provided, vars);
    expect(vars).toEqual({ a: 1 });
    expect(provided).toEqual({ b: '2' });
  });
});

describe('toBool', () => {
  it('accepts true/1 in any case', () => {
    expect([toBool('true'), toBool('TRUE'), toBool('1'), toBool(1), toBool(true)]).toEqual([true, true, true, true, true]);
    expect([toBool('false'), toBool('0'), toBool('yes'), toBool(''), toBool(undefined)]).toEqual([false, false, false, false, false]);
  });
});
