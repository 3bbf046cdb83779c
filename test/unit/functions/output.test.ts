import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';
import { csvLine, parseCsv } from '../../../src/engine/functions/output.js';

const t = tempDir();
afterAll(t.cleanup);

const HTTPX = [
  '{"url":"https://a.com","status":200,"hash":{"body_sha256":"aa"},"name":"a"}',
  'not json',
  '{"url":"https://b.com","status":404,"hash":{"body_sha256":"bb"},"tech":["x","y"]}',
  '{"url":"https://c.com","status":200,"hash":{"body_sha256":"aa"}}',
  '',
].join('\n');

const read = (p: string) => fs.readFileSync(p, 'utf8');

describe('output functions', () => {
  it('save_content writes (creating folders)', () => {
    const p = path.join(t.dir, 'sc', 'out.txt');
    expect(call('save_content', 'hello', p)).toBe(true);
    expect(read(p)).toBe('hello');
    expect(call('saveContent', 'x', '')).toBe(false);
    expect(call('save_content', undefined, p)).toBe(false);
  });

  it('jsonl_filter keeps dot-path keys keyed by their dotted name', () => {
    const src = t.file('httpx.jsonl', HTTPX);
    const dest = path.join(t.dir, 'filtered.jsonl');
    expect(call('jsonl_filter', src, dest, 'name,hash.body_sha256')).toBe(true);
    expect(read(dest).trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { name: 'a', 'hash.body_sha256': 'aa' },
      { 'hash.body_sha256': 'bb' },
      { 'hash.body_sha256': 'aa' },
    ]);
    expect(call('jsonlFilter', src, dest, ['status'])).toBe(true);
    expect(read(dest)).toBe('{"status":200}\n{"status":404}\n{"status":200}\n');
    expect(call('jsonl_filter', path.join(t.dir, 'none'), dest, 'a')).toBe(false);
    expect(call('jsonl_filter', src, dest, '')).toBe(false);
  });

  it('jsonl_unique keeps the first line per tuple', () => {
    const src = t.file('httpx2.jsonl', HTTPX);
    const dest = path.join(t.dir, 'unique.jsonl');
    expect(call('jsonl_unique', src, dest, 'status,hash.body_sha256')).toBe(true);
    const urls = read(dest).trim().split('\n').map((l) => JSON.parse(l).url);
    expect(urls).toEqual(['https://a.com', 'https://b.com']);
  });

  it('jsonl_to_csv: union header in first-seen order, nested values as JSON', () => {
    const src = t.file('to-csv.jsonl', HTTPX);
    const dest = path.join(t.dir, 'out.csv');
    expect(call('jsonl_to_csv', src, dest)).toBe(true);
    const rows = parseCsv(read(dest));
    expect(rows[0]).toEqual(['url', 'status', 'hash', 'name', 'tech']);
    expect(rows[1]).toEqual(['https://a.com', '200', '{"body_sha256":"aa"}', 'a', '']);
    expect(rows[2]![4]).toBe('["x","y"]');
    expect(call('jsonlToCsv', path.join(t.dir, 'none'), dest)).toBe(false);
  });

  it('csv_to_jsonl: first row is the header, all values strings', () => {
    const src = t.file('in.csv', 'host,port,note\na.com,443,"x, ""quoted"""\nb.com,80\n');
    const dest = path.join(t.dir, 'in.jsonl');
    expect(call('csv_to_jsonl', src, dest)).toBe(true);
    expect(read(dest).trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { host: 'a.com', port: '443', note: 'x, "quoted"' },
      { host: 'b.com', port: '80', note: '' },
    ]);
    expect(call('csvToJsonl', path.join(t.dir, 'none.csv'), dest)).toBe(false);
  });

  it('jsonl_rename_key renames in place of the old key', () => {
    const src = t.file('rename.jsonl', '{"a":1,"b":2,"c":3}\n{"b":5}\n');
    const dest = path.join(t.dir, 'renamed.jsonl');
    expect(call('jsonl_rename_key', src, dest, 'a:alpha, b:beta')).toBe(true);
    expect(read(dest)).toBe('{"alpha":1,"beta":2,"c":3}\n{"beta":5}\n');
    expect(call('jsonl_rename_key', src, dest, 'nonsense')).toBe(false);
  });

  it('csv helpers round trip', () => {
    const line = csvLine(['a', 'b,c', 'd"e', ' f', 'g\nh']);
    expect(parseCsv(`${line}\n`)).toEqual([['a', 'b,c', 'd"e', ' f', 'g\nh']]);
  });
});
