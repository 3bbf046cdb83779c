import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGenerator, splitGeneratorArgs } from '../../../src/workflow/generators.js';
import { formatGoLayout } from '../../../src/workflow/tpl-go-date.js';
import { OsmError } from '../../../src/errors.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

// Local time on purpose: Go's Format uses the local zone, and so do we.
const when = new Date(2024, 0, 5, 14, 7, 9, 42);

describe('runGenerator', () => {
  it('uuid() yields a v4 UUID, different each time', () => {
    const a = runGenerator('uuid()');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(runGenerator('uuid()')).not.toBe(a);
  });

  it('currentDate with the default and Go layouts', () => {
    expect(runGenerator('currentDate()', 'd', { now: when })).toBe('2024-01-05');
    expect(runGenerator('currentDate("2006/01/02 15:04:05")', 'd', { now: when })).toBe('2024/01/05 14:07:09');
    expect(runGenerator("currentDate('Mon Jan 2 3:04PM')", 'd', { now: when })).toBe('Fri Jan 5 2:07PM');
  });

  it('currentTimestamp is unix seconds', () => {
    expect(runGenerator('currentTimestamp()', 't', { now: new Date(1_700_000_000_500) })).toBe('1700000000');
  });

  it('getEnvVar with default', () => {
    const env = { OSM_X: 'value', EMPTY: '' };
    expect(runGenerator('getEnvVar(OSM_X)', 'p', { env })).toBe('value');
    expect(runGenerator('getEnvVar("MISSING", "fallback")', 'p', { env })).toBe('fallback');
    expect(runGenerator('getEnvVar(EMPTY, dflt)', 'p', { env })).toBe('dflt');
    expect(runGenerator('getEnvVar(MISSING)', 'p', { env })).toBe('');
    expect(() => runGenerator('getEnvVar()', 'p', { env })).toThrow(/generator failed for p: getEnvVar requires/);
  });

  it('concat, case and trim helpers', () => {
    expect(runGenerator('concat(a, "b,c", \'d\')')).toBe('ab,cd');
    expect(runGenerator('toLower("MiXeD")')).toBe('mixed');
    expect(runGenerator('toUpper(abc)')).toBe('ABC');
    expect(runGenerator('trim("  padded  ")')).toBe('padded');
  });

  it('randomInt is inclusive and swaps reversed bounds', () => {
    for (let i = 0; i < 50; i++) {
      const n = Number(runGenerator('randomInt(3, 5)'));
      expect(n).toBeGreaterThanOrEqual(3);
      expect(n).toBeLessThanOrEqual(5);
    }
    expect(runGenerator('randomInt(7, 7)')).toBe('7');
    expect(runGenerator('randomInt(9, 9)')).toBe('9');
    expect(Number(runGenerator('randomInt(10, 8)'))).toBeGreaterThanOrEqual(8);
    expect(() => runGenerator('randomInt(a, 3)', 'n')).toThrow(/generator failed for n: invalid min value: a/);
  });

  it('randomString defaults to 16 alphanumerics', () => {
    expect(runGenerator('randomString()')).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(runGenerator('randomString(8)')).toMatch(/^[A-Za-z0-9]{8}$/);
  });

  it('execCmd runs sh -c and trims; failures are generator errors', () => {
    expect(runGenerator('execCmd("printf \'  hi  \\n\'")')).toBe('hi');
    expect(runGenerator('execCmd("pwd")', 'p', { cwd: dir })).toBe(fs.realpathSync(dir));
    expect(() => runGenerator('execCmd("exit 3")', 'cmd')).toThrow(/generator failed for cmd: command failed: exit code 3/);
  });

  it('replace takes the input first', () => {
    expect(runGenerator('replace("a-b-c", "-", "_")')).toBe('a_b_c');
    expect(() => runGenerator('replace(a, b)', 'r')).toThrow(/replace requires 3 arguments/);
  });

  it('split by index; out of range → empty', () => {
    expect(runGenerator('split("a.b.c", ".", 1)')).toBe('b');
    expect(runGenerator('split("a.b.c", ".")')).toBe('a');
    expect(runGenerator('split("a.b.c", ".", 5)')).toBe('');
  });

  it('join keeps a quoted whitespace delimiter', () => {
    expect(runGenerator('join("-", a, b, c)')).toBe('a-b-c');
    expect(runGenerator("join(' ', a, b)")).toBe('a b');
  });

  it('unknown or malformed generators fail with the param name', () => {
    const err = (() => {
      try {
        runGenerator('nope(1)', 'my_param');
      } catch (e) {
        return e as OsmError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(OsmError);
    expect(err!.message).toBe('generator failed for my_param: unknown generator nope');
    expect(() => runGenerator('not a call', 'x')).toThrow(/generator failed for x: invalid generator expression/);
    expect(() => runGenerator('toString()', 'x')).toThrow(/unknown generator toString/);
  });
});

describe('splitGeneratorArgs', () => {
  it('splits on commas outside quotes and strips quotes', () => {
    expect(splitGeneratorArgs(`a, "b, c" , 'd"e'`)).toEqual(['a', 'b, c', 'd"e']);
    expect(splitGeneratorArgs(`" padded "`)).toEqual([' padded ']);
    expect(splitGeneratorArgs(`a b`)).toEqual(['a b']);
    expect(() => splitGeneratorArgs(`"open`)).toThrow(/unterminated quote/);
  });
});

describe('formatGoLayout', () => {
  it('formats the common Go layout tokens', () => {
    expect(formatGoLayout(when, '2006-01-02T15:04:05.000')).toBe('2024-01-05T14:07:09.042');
    expect(formatGoLayout(when, 'January Monday 06 _2')).toBe('January Friday 24  5');
    expect(formatGoLayout(when, '-0700')).toMatch(/^[+-]\d{4}$/);
    expect(formatGoLayout(when, 'MST').length).toBeGreaterThan(0);
    expect(formatGoLayout(when, 'literal: x')).toBe('literal: x');
  });
});
