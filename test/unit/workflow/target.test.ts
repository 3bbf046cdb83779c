import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyTarget, envKey, targetEnvironment, validateParamValue, validateParams, validateTarget } from '../../../src/workflow/target.js';
import { OsmError } from '../../../src/errors.js';

let dir: string;
let file: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  file = path.join(dir, 'targets.txt');
  fs.writeFileSync(file, 'a.com\n');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function errorOf(fn: () => void): OsmError {
  try {
    fn();
  } catch (err) {
    return err as OsmError;
  }
  throw new Error('expected an error');
}

describe('validateTarget', () => {
  it.each([
    ['a.com;id', ';'],
    ['$(id)', '$'],
    ['`id`', '`'],
    ['a.com&&id', '&'],
    ['a.com\nid', '\n'],
    ['a.com\rid', '\r'],
    ['a.com\u0000', '\u0000'],
    ['a.com|nc x 1', '|'],
    ['a.com>x', '>'],
    ['a.com<x', '<'],
    ["a.com'x", "'"],
    ['a.com"x', '"'],
    ['a.com x', ' '],
    ['a.com\tx', '\t'],
    ['{a,b}.com', '{'],
    ['a.com\\x', '\\'],
    ['a.com\u001bx', '\u001b'],
  ])('rejects %j (forbidden %j)', (value, ch) => {
    const err = errorOf(() => validateTarget(value));
    expect(err).toBeInstanceOf(OsmError);
    expect(err.code).toBe('OSM_ERR_INVALID_TARGET');
    expect(err.status).toBe(400);
    expect(err.message).toContain(`contains forbidden character ${JSON.stringify(ch)}`);
    expect(err.message.startsWith('target ')).toBe(true);
  });

  it('uses the documented message shape', () => {
    expect(errorOf(() => validateTarget('a.com;id')).message).toBe('target "a.com;id" contains forbidden character ";"');
    expect(errorOf(() => validateTarget('a.com\nid')).message).toBe('target "a.com\\nid" contains forbidden character "\\n"');
    expect(errorOf(() => validateTarget('x;y', 'targets[2]')).message).toBe('targets[2] "x;y" contains forbidden character ";"');
  });

  it('rejects a leading "-" (argument injection)', () => {
    expect(errorOf(() => validateTarget('-oProxyCommand=x')).message).toMatch(/must not start with "-"/);
  });

  it('rejects empty and whitespace-only targets', () => {
    expect(() => validateTarget('')).toThrow(/must not be empty/);
    expect(() => validateTarget('   ')).toThrow(/must not be empty/);
  });

  it('allows brackets only around an IPv6 host in a URL', () => {
    expect(() => validateTarget('http://[::1]:8080/')).not.toThrow();
    expect(() => validateTarget('https://[2001:db8::1]/path')).not.toThrow();
    expect(() => validateTarget('[::1]')).toThrow(/forbidden character "\["/);
    expect(() => validateTarget('http://[::1]:8080/[x]')).toThrow(/forbidden character/);
    expect(() => validateTarget('http://[nothex]/')).toThrow(/forbidden character/);
    expect(() => validateTarget('a[1-3].com')).toThrow(/forbidden character "\["/);
  });

  it.each([
    'example.com',
    'sub.example.co.uk',
    '*.example.com',
    '10.0.0.1',
    '10.0.0.1:8443',
    '10.0.0.0/24',
    '2001:db8::1',
    'https://example.com/path?x=1',
    'http://example.com:8080/a/b.php',
    '/tmp/targets.txt',
    './list_of_ips.txt',
    'owner/repo',
  ])('accepts %s', (value) => {
    expect(() => validateTarget(value)).not.toThrow();
  });
});

describe('validateParamValue', () => {
  it('names the param and the character, never the value', () => {
    const err = errorOf(() => validateParamValue('x', 'secret$value'));
    expect(err.message).toBe('params["x"] contains forbidden character "$"');
    expect(err.message).not.toContain('secret');
    expect(err.code).toBe('OSM_ERR_INVALID_TARGET');
  });

  it.each(['a;b', '$(id)', '`id`', 'a&&b', 'a\nb', 'a|b', 'a>b', "it's", '{{Target}}'])('rejects %j', (value) => {
    expect(() => validateParamValue('p', value)).toThrow(/contains forbidden character/);
  });

  it('allows spaces, tabs, a leading "-" and empty values', () => {
    expect(() => validateParamValue('args', '-t 10 --rate 50')).not.toThrow();
    expect(() => validateParamValue('args', 'a\tb')).not.toThrow();
    expect(() => validateParamValue('empty', '')).not.toThrow();
    expect(() => validateParamValue('url', 'http://[::1]:80/')).not.toThrow();
  });

  it('validates keys', () => {
    expect(() => validateParamValue('good_key.v-2', 'x')).not.toThrow();
    expect(() => validateParamValue('1bad', 'x')).toThrow(/params key "1bad" is invalid/);
    expect(() => validateParamValue('a b', 'x')).toThrow(/is invalid/);
    expect(() => validateParamValue('', 'x')).toThrow(/is invalid/);
    expect(() => validateParams({ ok: 'v', 'bad;key': 'v' })).toThrow(/bad;key/);
  });
});

describe('classifyTarget', () => {
  it.each([
    ['example.com', 'domain'],
    ['1.2.3.4', 'ip'],
    ['10.0.0.0/8', 'cidr'],
    ['https://example.com', 'url'],
    ['not a target', 'unknown'],
  ])('%s → %s', (value, kind) => {
    expect(classifyTarget(value)).toBe(kind);
  });

  it('recognises existing files', () => {
    expect(classifyTarget(file)).toBe('file');
  });
});

describe('targetEnvironment', () => {
  it('exposes target, output, workspace and user params as env vars', () => {
    const env = targetEnvironment(
      { Target: 'a.com', Output: '/ws/a.com', Workspace: 'a.com', TargetSpace: 'a.com', wordList: 'w.txt', 'rate-limit': 50, deep: true },
      ['wordList', 'rate-limit', 'deep', 'missing'],
    );
    expect(env).toEqual({
      OSM_TARGET: 'a.com',
      OSM_OUTPUT: '/ws/a.com',
      OSM_WORKSPACE: 'a.com',
      OSM_TARGET_SPACE: 'a.com',
      OSM_PARAM_WORD_LIST: 'w.txt',
      OSM_PARAM_RATE_LIMIT: '50',
      OSM_PARAM_DEEP: 'true',
      OSM_PARAM_MISSING: '',
    });
  });

  it('sanitises keys to [A-Z0-9_]', () => {
    expect(envKey('paramFromFlow-file.x')).toBe('PARAM_FROM_FLOW_FILE_X');
  });
});

describe('hostile input properties', () => {
  it('never accepts a target containing a shell metacharacter, whitespace or control character', async () => {
    const fc = (await import('fast-check')).default;
    const bad = fc.constantFrom(';', '$', '`', '&', '|', '<', '>', '(', ')', '{', '}', "'", '"', '\\', ' ', '\t', '\n', '\r', '\u0000', '\u007f');
    fc.assert(
      fc.property(fc.string(), bad, fc.string(), (a, ch, b) => {
        expect(() => validateTarget(`x${a}${ch}${b}`)).toThrow(OsmError);
      }),
      { numRuns: 300 },
    );
  });

  it('workspace names stay a single safe path component for any target', async () => {
    const fc = (await import('fast-check')).default;
    const { analyzeTarget, pathSafe } = await import('../../../src/workflow/heuristics.js');
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.constantFrom('none', 'basic') as never, (s: string, level: 'none' | 'basic') => {
        const space = analyzeTarget(s, { level }).targetSpace;
        expect(space).not.toMatch(/[/\\\u0000]/);
        expect(['', '.', '..']).not.toContain(space);
        expect(pathSafe(s)).not.toMatch(/[/\\]/);
      }),
      { numRuns: 300 },
    );
  });
});
