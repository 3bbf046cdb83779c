import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { call, tempDir } from './call.js';
import { evaluate } from '../../../src/engine/js-runtime.js';

const t = tempDir();
afterAll(t.cleanup);

describe('file functions', () => {
  it('file_exists / fileExists', () => {
    const p = t.file('exists.txt', 'x');
    expect(call('file_exists', p)).toBe(true);
    expect(call('fileExists', t.dir)).toBe(true);
    expect(call('file_exists', path.join(t.dir, 'nope'))).toBe(false);
    expect(call('file_exists', 'undefined')).toBe(false);
    expect(call('file_exists')).toBe(false);
    expect(evaluate('[file_exists(p), fileExists(p + "x")]', { p }).value).toEqual([true, false]);
  });

  it('file_length counts non-blank lines, 0 on error', () => {
    const p = t.file('len.txt', 'a\n\n  \nb\r\nc');
    expect(call('file_length', p)).toBe(3);
    expect(call('fileLength', p)).toBe(3);
    expect(call('file_length', path.join(t.dir, 'missing'))).toBe(0);
    expect(call('file_length', '')).toBe(0);
  });

  it('dir_length', () => {
    const d = path.join(t.dir, 'dl');
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'a'), '');
    fs.mkdirSync(path.join(d, 'b'));
    expect(call('dir_length', d)).toBe(2);
    expect(call('dir_length', path.join(t.dir, 'none'))).toBe(0);
  });

  it('file_contains: regex, substring fallback for invalid regex', () => {
    const p = t.file('fc.txt', 'hello admin\nfoo(bar');
    expect(call('file_contains', p, 'adm.n')).toBe(true);
    expect(call('file_contains', p, 'foo(')).toBe(true);
    expect(call('file_contains', p, 'zzz')).toBe(false);
    expect(call('file_contains', path.join(t.dir, 'none'), 'a')).toBe(false);
    expect(call('file_contains', p)).toBe(false);
  });

  it('regex_extract', () => {
    const p = t.file('re.txt', 'https://a.com/api/x\nhttps://a.com/home\nhttp://b.com/api\n');
    expect(call('regex_extract', p, '.*api.*')).toEqual(['https://a.com/api/x', 'http://b.com/api']);
    expect(call('regex_extract', p, '(')).toEqual([]);
    expect(call('regex_extract', path.join(t.dir, 'none'), 'a')).toEqual([]);
  });

  it('read_file / read_lines', () => {
    const p = t.file('rf.txt', 'a\n\nb\n');
    expect(call('read_file', p)).toBe('a\n\nb\n');
    expect(call('readFile', path.join(t.dir, 'none'))).toBe('');
    expect(call('read_lines', p)).toEqual(['a', '', 'b']);
    expect(call('read_lines', path.join(t.dir, 'none'))).toEqual([]);
  });

  it('write_file / writeFile, copy_file / copyFile', () => {
    const p = path.join(t.dir, 'w', 'deep', 'out.txt');
    expect(call('writeFile', p, 'data')).toBe(true);
    expect(fs.readFileSync(p, 'utf8')).toBe('data');
    const c = path.join(t.dir, 'copy', 'c.txt');
    expect(call('copy_file', p, c)).toBe(true);
    expect(fs.readFileSync(c, 'utf8')).toBe('data');
    expect(call('copyFile', path.join(t.dir, 'none'), c)).toBe(false);
    expect(call('write_file', '', 'x')).toBe(false);
  });

  it('merge_files / mergeFiles', () => {
    t.file('m/part-1.txt', 'a\nb');
    t.file('m/part-2.txt', 'c\n');
    const out = path.join(t.dir, 'm', 'all.txt');
    expect(call('mergeFiles', path.join(t.dir, 'm', 'part-*.txt'), out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe('a\nb\nc\n');
    expect(call('merge_files', path.join(t.dir, 'm', 'none-*.txt'), out)).toBe(false);
  });

  it('remove_file only removes regular files', () => {
    const p = t.file('rm.txt', 'x');
    expect(call('remove_file', t.dir)).toBe(false);
    expect(call('removeFile', p)).toBe(true);
    expect(fs.existsSync(p)).toBe(false);
    expect(call('remove_file', p)).toBe(false);
  });

  it('remove_folder / rm_rf', () => {
    const d = path.join(t.dir, 'rmd');
    fs.mkdirSync(path.join(d, 'x'), { recursive: true });
    const f = t.file('rmd-file.txt', 'x');
    expect(call('remove_folder', f)).toBe(false);
    expect(call('remove_folder', d)).toBe(true);
    expect(fs.existsSync(d)).toBe(false);
    expect(call('rm_rf', f)).toBe(true);
    expect(call('rm_rf', path.join(t.dir, 'never'))).toBe(true);
  });

  it('remove_all_except keeps only the file', () => {
    const d = path.join(t.dir, 'rae');
    t.file('rae/keep/me.txt', 'k');
    t.file('rae/keep/other.txt', 'o');
    t.file('rae/gone.txt', 'g');
    expect(call('remove_all_except', d, 'keep/me.txt')).toBe(true);
    expect(fs.readdirSync(d)).toEqual(['keep']);
    expect(fs.readdirSync(path.join(d, 'keep'))).toEqual(['me.txt']);
    expect(call('remove_all_except', d, path.join(t.dir, 'outside.txt'))).toBe(false);
    expect(call('remove_all_except', d, '../file.test.ts')).toBe(false);
  });

  it('create_folder, append_file, move_file', () => {
    const d = path.join(t.dir, 'cf', 'a', 'b');
    expect(call('create_folder', d)).toBe(true);
    expect(fs.statSync(d).isDirectory()).toBe(true);
    const src = t.file('cf/src.txt', 'more\n');
    const dest = path.join(t.dir, 'cf', 'new', 'dest.txt');
    expect(call('append_file', dest, src)).toBe(true);
    expect(call('appendFile', dest, src)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('more\nmore\n');
    expect(call('append_file', dest, path.join(t.dir, 'none'))).toBe(false);
    const moved = path.join(t.dir, 'cf', 'moved', 'm.txt');
    expect(call('move_file', src, moved)).toBe(true);
    expect(fs.existsSync(src)).toBe(false);
    expect(call('move_file', src, moved)).toBe(false);
    expect(call('move_file', d, moved)).toBe(false);
  });

  it('glob: sorted, no match → []', () => {
    t.file('g/b.txt', '');
    t.file('g/a.txt', '');
    t.file('g/c.md', '');
    t.file('g/sub/d.txt', '');
    expect(call('glob', path.join(t.dir, 'g', '*.txt'))).toEqual([path.join(t.dir, 'g', 'a.txt'), path.join(t.dir, 'g', 'b.txt')]);
    expect(call('glob', path.join(t.dir, 'g', '*', '?.txt'))).toEqual([path.join(t.dir, 'g', 'sub', 'd.txt')]);
    expect(call('glob', path.join(t.dir, 'g', '[ab].txt'))).toHaveLength(2);
    expect(call('glob', path.join(t.dir, 'g', '*.none'))).toEqual([]);
    expect(call('glob', '')).toEqual([]);
  });

  it('grep_* functions', () => {
    const src = t.file('grep.txt', 'admin panel\nuser\nadmin2\n');
    const dest = path.join(t.dir, 'grep-out.txt');
    expect(call('grep_string_to_file', dest, src, 'admin')).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('admin panel\nadmin2\n');
    expect(call('grep_string_to_file', dest, src, 'zzz')).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('');
    expect(call('grep_regex_to_file', dest, src, '^admin\\d$')).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('admin2\n');
    expect(call('grep_regex_to_file', dest, src, '(')).toBe(false);
    expect(call('grep_string', src, 'admin')).toBe('admin panel\nadmin2');
    expect(call('grep_regex', src, 'us.r')).toBe('user');
    expect(call('grep_string', path.join(t.dir, 'none'), 'a')).toBe('');
  });

  it('remove_blank_lines keeps the mode', () => {
    const p = t.file('blank.sh', 'a\n\n   \nb\n');
    fs.chmodSync(p, 0o750);
    expect(call('remove_blank_lines', p)).toBe(true);
    expect(fs.readFileSync(p, 'utf8')).toBe('a\nb\n');
    expect(fs.statSync(p).mode & 0o777).toBe(0o750);
    expect(call('remove_blank_lines', t.dir)).toBe(false);
  });

  it('chunk_file writes parts and a manifest', () => {
    const input = t.file('chunk/targets.txt', 'a\nb\n\nc\nd\ne\n');
    const manifest = path.join(t.dir, 'chunk', 'manifest.txt');
    expect(call('chunk_file', input, 2, manifest)).toBe(true);
    const parts = fs.readFileSync(manifest, 'utf8').trim().split('\n');
    expect(parts.map((p) => path.basename(p))).toEqual(['targets_part_0.txt', 'targets_part_1.txt', 'targets_part_2.txt']);
    expect(fs.readFileSync(parts[2]!, 'utf8')).toBe('e\n');
    const empty = t.file('chunk/empty.txt', '\n\n');
    expect(call('chunk_file', empty, 2, manifest)).toBe(true);
    expect(fs.readFileSync(manifest, 'utf8')).toBe('');
    expect(call('chunk_file', input, 0, manifest)).toBe(false);
  });

  it('cut_to_file', () => {
    const input = t.file('cut.txt', 'a:1\nb:\nc:3:x\n\n');
    const out = path.join(t.dir, 'cut-out.txt');
    expect(call('cut_to_file', input, ':', 2, out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe('1\n3\n');
    expect(call('cut_to_file', input, ':', 0, out)).toBe(false);
  });
});
