import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { call, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

const t = tempDir();
afterAll(t.cleanup);

describe('string functions', () => {
  it('trim and cutset trims (Go semantics: a set of characters)', () => {
    expect(call('trim', '  hi \n')).toBe('hi');
    expect(call('trim')).toBe('');
    expect(call('trim_string', 'xxhixy', 'xy')).toBe('hi');
    expect(call('trim_left', 'abcabc-x-abc', 'cba')).toBe('-x-abc');
    expect(call('trim_right', 'abc.com..', '.')).toBe('abc.com');
    expect(call('trimString', 'aab', 'a')).toBe('b');
  });

  it('split / join', () => {
    expect(call('split', 'a,b,c', ',')).toEqual(['a', 'b', 'c']);
    expect(call('split', 'héj', '')).toEqual(['h', 'é', 'j']);
    expect(call('split')).toEqual([]);
    expect(call('join', ['a', 1, true], '-')).toBe('a-1-true');
    expect(call('join', ['a', 'b'])).toBe('ab');
    expect(call('join', 'not-an-array', ',')).toBe('');
  });

  it('replace / contains / starts_with / ends_with', () => {
    expect(call('replace', 'hello', 'l', 'L')).toBe('heLLo');
    expect(call('replace', 'a.b.c', '.', '')).toBe('abc');
    expect(call('replace')).toBe('');
    expect(call('contains', 'hello', 'ell')).toBe(true);
    expect(call('contains', 'hello', 'z')).toBe(false);
    expect(call('contains')).toBe(false);
    expect(call('starts_with', 'hello', 'he')).toBe(true);
    expect(call('ends_with', 'hello.txt', '.txt')).toBe(true);
    expect(call('ends_with', 'hello.txt', '.md')).toBe(false);
  });

  it('case conversion, both spellings', () => {
    expect(call('to_lower_case', 'HeLLo')).toBe('hello');
    expect(call('toLowerCase', 'HeLLo')).toBe('hello');
    expect(call('to_upper_case', 'hi')).toBe('HI');
    expect(call('toUpperCase', 'hi')).toBe('HI');
    expect(evaluate('toUpperCase("x") + to_lower_case("Y")', {}).value).toBe('Xy');
  });

  it('match / regex_match (invalid regex → false)', () => {
    expect(call('match', 'test123', '[0-9]+')).toBe(true);
    expect(call('match', 'test', '[0-9]+')).toBe(false);
    expect(call('match', 'test', '(')).toBe(false);
    expect(call('regex_match', '^t', 'test')).toBe(true);
    expect(call('regex_match', '^x', 'test')).toBe(false);
  });

  it('cut_with_delim / cut / cut_space (1-indexed, out of range → "")', () => {
    expect(call('cut_with_delim', 'a:b:c', ':', 2)).toBe('b');
    expect(call('cut', 'a:b:c', ':', '3')).toBe('c');
    expect(call('cut_with_delim', 'a:b:c', ':', 4)).toBe('');
    expect(call('cut_with_delim', 'a:b:c', ':', 0)).toBe('');
    expect(call('cut_space', '  a   b\tc ', 2)).toBe('b');
    expect(call('cut_space', 'a b', 3)).toBe('');
  });

  it('normalize_path / get_target_space / normal_path', () => {
    expect(call('normalize_path', 'a/b|c:d\\e*f?g"h<i>j')).toBe('a_b_c_d_e_f_g_h_i_j');
    expect(call('get_target_space', 'https://example.com')).toBe('https___example.com');
    const long = call('get_target_space', 'https://a-very-long-host-name.example.com/path') as string;
    expect(long).toMatch(/^https_-[a-z]{6}-\d{10}$/);
    expect(call('normal_path', 'a/b')).toBe('a_b');
  });

  it('clean_sub cleans, filters and de-duplicates in place', () => {
    const p = t.file('subs.txt', [
      'WWW.Example.com',
      '*.api.example.com',
      '2fwww.example.com',
      'u002fdev.example.com',
      '-test.example.com.',
      '10.0.0.1',
      'other.org',
      'www.example.com',
      'noise text mail.example.com trailing',
      '',
    ].join('\n'));
    expect(call('clean_sub', p, 'example.com')).toBe(true);
    expect(fs.readFileSync(p, 'utf8').trim().split('\n')).toEqual([
      'www.example.com', 'api.example.com', 'dev.example.com', 'test.example.com', 'mail.example.com',
    ]);
    expect(call('clean_sub', t.file('missing.txt'))).toBe(false);
  });
});

describe('type conversion', () => {
  it('parse_int: strict decimal of the trimmed text', () => {
    expect(call('parse_int', ' 42 ')).toBe(42);
    expect(call('parse_int', '-7')).toBe(-7);
    expect(call('parse_int', '3.5')).toBe(0);
    expect(call('parse_int', 'abc')).toBe(0);
    expect(call('parseInt', '12')).toBe(12);
  });

  it('parse_float / to_string / to_boolean', () => {
    expect(call('parse_float', '3.14')).toBe(3.14);
    expect(call('parse_float', '1e3')).toBe(1000);
    expect(call('parse_float', 'x')).toBe(0);
    expect(call('to_string', 123)).toBe('123');
    expect(call('toString', true)).toBe('true');
    expect(call('to_boolean', 'false')).toBe(true);
    expect(call('to_boolean', '')).toBe(false);
    expect(call('to_boolean', 0)).toBe(false);
  });
});

describe('encoding and generation', () => {
  it('base64 round trip; invalid → ""', () => {
    expect(call('base64_encode', 'hello')).toBe('aGVsbG8=');
    expect(call('base64Encode', 'é')).toBe('w6k=');
    expect(call('base64_decode', 'aGVsbG8=')).toBe('hello');
    expect(call('base64Decode', 'not base64!')).toBe('');
    expect(call('base64_decode', 'aGVsbG8')).toBe('');
  });

  it('url_encode / url_decode', () => {
    expect(call('urlEncode', 'a b&c=d/é')).toBe('a%20b%26c%3Dd%2F%C3%A9');
    expect(call('urlDecode', 'a%20b+c')).toBe('a b c');
    expect(call('url_decode', '%E0%A4%A')).toBe('');
  });

  it('random_string / uuid / timestamp', () => {
    expect(call('random_string', 12)).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(call('randomString', 0)).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(call('uuid')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(call('uuid')).not.toBe(call('uuid'));
    const before = Math.floor(Date.now() / 1000);
    const ts = call('timestamp') as number;
    const after = Math.floor(Date.now() / 1000);
    expect(Number.isInteger(ts)).toBe(true);
    expect(ts).toBeGreaterThanOrEqual(before);
    expect(ts).toBeLessThanOrEqual(after);
  });
});
