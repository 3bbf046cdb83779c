import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

const t = tempDir();
afterAll(t.cleanup);

const URL1 = 'https://user:pass@api.sub.example.co.uk:8443/path/to/file.php?a=1&b=2#frag';

describe('parse_url directives', () => {
  it.each([
    ['%s', 'https'],
    ['%u', 'user:pass'],
    ['%d', 'api.sub.example.co.uk'],
    ['%S', 'api.sub'],
    ['%r', 'example'],
    ['%t', 'co.uk'],
    ['%P', '8443'],
    ['%p', '/path/to/file.php'],
    ['%e', 'php'],
    ['%q', 'a=1&b=2'],
    ['%f', 'frag'],
    ['%a', 'user:pass@api.sub.example.co.uk:8443'],
    ['%s://%u%@%d%:%P%p%?%q%#%f', URL1],
    ['100%% %d', '100% api.sub.example.co.uk'],
    ['%z', '%z'],
    ['trailing %', 'trailing %'],
  ])('%s', (format, expected) => {
    expect(call('parse_url', URL1, format)).toBe(expected);
  });

  it('conditional separators vanish when the part is empty', () => {
    const plain = 'http://example.com/index';
    expect(call('parse_url', plain, '%s://%u%@%d%:%P%p%?%q%#%f')).toBe('http://example.com/index');
    expect(call('parse_url', plain, '%S|%r|%t|%e|%P')).toBe('|example|com||');
    expect(call('parseUrl', 'https://a.b.example.com/x', '%S')).toBe('a.b');
  });

  it('failure values', () => {
    expect(call('parse_url', '', '%d')).toBe('');
    expect(call('parse_url', 'http://x.com', '')).toBe('');
    expect(call('parse_url', 'http://x.com:abc/', '%d')).toBe('');
  });
});

describe('url helpers', () => {
  it.each([
    ['https://e.com/a/b.php?x=1', 'https://e.com/a/'],
    ['https://example.com/j3ssie/sample.php?query=123', 'https://example.com/j3ssie/'],
    ['https://example.com/a/b/c/', 'https://example.com/a/b/'],
    ['https://example.com/file.txt', 'https://example.com/'],
    ['https://example.com/', 'https://example.com/'],
    ['https://example.com', 'https://example.com/'],
    ['https://example.com/a#frag', 'https://example.com/'],
  ])('get_parent_url(%s) → %s', (input, expected) => {
    expect(call('get_parent_url', input)).toBe(expected);
  });

  it('get_parent_url failure value and camelCase', () => {
    expect(call('get_parent_url', '')).toBe('');
    expect(evaluate('getParentUrl("https://e.com/a/b")', {}).value).toBe('https://e.com/a/');
  });

  it('query_replace: replace (default) or append, keys sorted', () => {
    expect(call('query_replace', 'https://example.com?b=2&a=1', 'new')).toBe('https://example.com?a=new&b=new');
    expect(call('query_replace', 'https://example.com/x?a=1&b=2', 'FUZZ', 'append')).toBe('https://example.com/x?a=1FUZZ&b=2FUZZ');
    expect(call('query_replace', 'https://example.com/x', 'v')).toBe('https://example.com/x');
    expect(call('query_replace', 'https://e.com/?q=1', "' or 1=1")).toBe('https://e.com/?q=%27+or+1%3D1');
    expect(call('query_replace', '', 'v')).toBe('');
  });

  it('path_replace: 1-indexed, 0 replaces all, beyond the end unchanged', () => {
    expect(call('path_replace', 'https://example.com/a/b/c', 'new')).toBe('https://example.com/new/b/c');
    expect(call('path_replace', 'https://example.com/a/b/c', 'new', 2)).toBe('https://example.com/a/new/c');
    expect(call('path_replace', 'https://example.com/a/b/c', 'new', 0)).toBe('https://example.com/new/new/new');
    expect(call('path_replace', 'https://example.com/a/b/c', 'new', 9)).toBe('https://example.com/a/b/c');
    expect(call('path_replace', 'https://example.com/a?x=1', 'a b', '1')).toBe('https://example.com/a%20b?x=1');
    expect(call('path_replace', 'https://example.com', 'x')).toBe('https://example.com');
  });

  it('parse_url_file writes unique formatted lines', () => {
    const input = t.file('urls.txt', 'https://a.example.com/x\nhttps://a.example.com/y\n\nhttp://b.example.org/\n');
    const out = path.join(t.dir, 'hosts.txt');
    expect(call('parse_url_file', input, '%d', out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe('a.example.com\nb.example.org\n');
    expect(call('parse_url_file', path.join(t.dir, 'none'), '%d', out)).toBe(false);
  });

  it('interesting_urls: static files dropped, dedupe by host+path+param names, one noisy URL per host', () => {
    const src = t.file('all-urls.txt', [
      'https://a.com/login?user=1&pass=2',
      'https://a.com/login?pass=9&user=8',
      'https://a.com/style.css',
      'https://a.com/app.js',
      'https://a.com/blog/post-1',
      'https://a.com/blog/post-2',
      'https://a.com/2022/01/02/x',
      'https://b.com/this-is-a-very-long-slug-here',
      'https://b.com/api?id=1',
      'not a url',
    ].join('\n'));
    const dest = path.join(t.dir, 'interesting.txt');
    expect(call('interesting_urls', src, dest)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8').trim().split('\n')).toEqual([
      'https://a.com/login?user=1&pass=2',
      'https://a.com/app.js',
      'https://a.com/blog/post-1',
      'https://b.com/api?id=1',
    ]);
  });

  it('interesting_urls reads a JSON field and keeps the original lines', () => {
    const src = t.file('urls.jsonl', '{"url":"https://a.com/x?a=1"}\n{"url":"https://a.com/x?a=2"}\n{"other":1}\n');
    const dest = path.join(t.dir, 'interesting.jsonl');
    expect(call('interestingUrls', src, dest, 'url')).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('{"url":"https://a.com/x?a=1"}\n');
    expect(call('interesting_urls', path.join(t.dir, 'none'), dest)).toBe(false);
  });
});
