import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

const t = tempDir();
afterAll(t.cleanup);

describe('type detection', () => {
  it('get_types classifies inputs', () => {
    expect(call('get_types', t.file('f.txt', 'x'))).toBe('file');
    expect(call('get_types', t.dir)).toBe('folder');
    expect(call('get_types', '10.0.0.0/24')).toBe('cidr');
    expect(call('get_types', '2001:db8::/32')).toBe('cidr');
    expect(call('get_types', '192.168.1.1')).toBe('ip');
    expect(call('get_types', '::1')).toBe('ip');
    expect(call('get_types', 'https://example.com/x')).toBe('url');
    expect(call('get_types', 'sub.example.com')).toBe('domain');
    expect(call('get_types', 'hello world')).toBe('string');
    expect(call('getTypes', '')).toBe('string');
  });

  it('is_file / is_dir / is_url / is_git / is_compress', () => {
    const f = t.file('x.txt', 'x');
    expect(call('is_file', f)).toBe(true);
    expect(call('is_file', t.dir)).toBe(false);
    expect(call('is_dir', t.dir)).toBe(true);
    expect(call('isDir', f)).toBe(false);
    expect(call('is_url', 'https://example.com')).toBe(true);
    expect(call('is_url', 'example.com')).toBe(false);
    expect(call('is_git', 'https://github.com/j3ssie/osmedeus')).toBe(true);
    expect(call('is_git', 'git@github.com:user/repo.git')).toBe(true);
    expect(call('is_git', 'https://example.com/page')).toBe(false);
    fs.mkdirSync(path.join(t.dir, 'repo', '.git'), { recursive: true });
    expect(call('is_git', path.join(t.dir, 'repo'))).toBe(true);
    expect(call('is_git', t.dir)).toBe(false);
    expect(call('is_compress', 'a.tar.gz')).toBe(true);
    const gz = t.file('gz-magic');
    fs.writeFileSync(gz, Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    expect(call('is_compress', gz)).toBe(true);
    expect(call('isCompress', f)).toBe(false);
  });
});

describe('environment', () => {
  it('os_getenv / os_setenv', () => {
    expect(call('os_setenv', 'OSM_FUNC_TEST_VAR', 'v1')).toBe(true);
    expect(call('os_getenv', 'OSM_FUNC_TEST_VAR')).toBe('v1');
    expect(process.env.OSM_FUNC_TEST_VAR).toBe('v1');
    expect(call('osGetenv', 'OSM_FUNC_TEST_NOT_SET')).toBe('');
    expect(call('os_setenv', 'BAD=NAME', 'x')).toBe(false);
    expect(call('os_setenv', '', 'x')).toBe(false);
    delete process.env.OSM_FUNC_TEST_VAR;
  });
});

describe('diff', () => {
  it('extract_diff returns lines only in file2', () => {
    const a = t.file('old.txt', 'a\nb\n');
    const b = t.file('new.txt', 'b\nc\n\nd\n');
    expect(call('extract_diff', a, b)).toBe('c\nd');
    expect(call('extractDiff', path.join(t.dir, 'none'), b)).toBe('b\nc\nd');
    expect(call('extract_diff', a, path.join(t.dir, 'none'))).toBe('');
  });
});

describe('data query (jq subset)', () => {
  const doc = JSON.stringify({ name: 'test', items: [{ id: 1, tags: ['a'] }, { id: 2, tags: [] }], 'a-b': { c: true }, n: null });

  it.each([
    ['.name', 'test'],
    ['.', JSON.parse(doc)],
    ['.items[0].id', 1],
    ['.items[-1].id', 2],
    ['.items[].id', [1, 2]],
    ['.items | length', 2],
    ['.items[0] | keys', ['id', 'tags']],
    ['keys', ['a-b', 'items', 'n', 'name']],
    ['."a-b".c', true],
    ['.["a-b"].c', true],
    ['.missing', null],
    ['.n.deeper', null],
    ['.name | length', 4],
    ['.items[1].tags[]', ''],
  ])('jq(doc, %s)', (query, expected) => {
    expect(call('jq', doc, query)).toEqual(expected);
  });

  it('errors, invalid queries and raw strings', () => {
    expect(call('jq', doc, '.name.x')).toBe('error: Cannot index string with "x"');
    expect(call('jq', doc, '.name.x?')).toBe('');
    expect(call('jq', doc, '.items[] | select(.id)')).toBe('');
    expect(call('jq', '', '.a')).toBe('');
    expect(call('jq', doc, '')).toBe('');
    expect(call('jq', 'not json', '. | length')).toBe(8);
    expect(evaluate('jq({a: {b: 5}}, ".a.b")', {}).value).toBe(5);
  });

  it('jq_from_file', () => {
    const p = t.file('data.json', doc);
    expect(call('jq_from_file', p, '.items[0].tags[0]')).toBe('a');
    expect(call('jqFromFile', path.join(t.dir, 'none'), '.a')).toBe('');
    expect(call('jq_from_file', t.file('bad.json', '{'), '.a')).toMatch(/^error: invalid JSON/);
  });
});
