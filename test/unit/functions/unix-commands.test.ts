import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { call, tempDir } from './call.js';
import { parseSed } from '../../../src/engine/functions/unix-commands.js';

const t = tempDir();
afterAll(t.cleanup);
const has = (cmd: string) => call('command_exists', cmd) === true;

describe('unix command wrappers', () => {
  it('sort_unix / sortUnix: sort -u with LC_ALL=C, in place or to output', () => {
    const p = t.file('sort.txt', 'b\na\nB\nb\n');
    expect(call('sort_unix', p)).toBe(true);
    expect(fs.readFileSync(p, 'utf8')).toBe('B\na\nb\n');
    const out = path.join(t.dir, 'sorted.txt');
    expect(call('sortUnix', t.file('sort2.txt', 'z\ny\n'), out)).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe('y\nz\n');
    expect(call('sort_unix', path.join(t.dir, 'none'))).toBe(false);
  });

  it('a file name starting with "-" stays a file name', () => {
    const p = t.file('-n.txt', '2\n10\n');
    const prev = process.cwd();
    process.chdir(t.dir);
    try {
      expect(call('sort_unix', '-n.txt', '-out.txt')).toBe(true);
    } finally {
      process.chdir(prev);
    }
    expect(fs.readFileSync(path.join(t.dir, '-out.txt'), 'utf8')).toBe('10\n2\n');
    expect(fs.existsSync(p)).toBe(true);
  });

  it('diff_unix / diffUnix returns the reference object', () => {
    const a = t.file('d1.txt', 'a\nb\n');
    const b = t.file('d2.txt', 'a\nc\n');
    const out = path.join(t.dir, 'diff.txt');
    const r = call('diff_unix', a, b, out) as Record<string, unknown>;
    expect(r).toMatchObject({ error: null, message: 'success', file1: a, file2: b });
    expect(r.output).toContain('> c');
    expect(r.line_count).toBeGreaterThan(0);
    expect(fs.readFileSync(out, 'utf8')).toBe(r.output);
    const same = call('diffUnix', a, a) as Record<string, unknown>;
    expect(same).toMatchObject({ error: null, output: '', line_count: 0 });
    const missing = call('diff_unix', a, path.join(t.dir, 'none')) as Record<string, unknown>;
    expect(missing.message).toBe('error');
    expect(typeof missing.error).toBe('string');
  });

  it('parseSed handles any delimiter, escapes and flags', () => {
    expect(parseSed('s/http/https/g', true)).toEqual({ pattern: 'http', replacement: 'https', global: true });
    expect(parseSed('s|a\\|b|c|', true)).toEqual({ pattern: 'a|b', replacement: 'c', global: false });
    expect(parseSed('s/a/b', true)).toBeNull();
    expect(parseSed('x/a/b/', true)).toBeNull();
  });

  it('sed_string_replace: literal, first or all occurrences', () => {
    const src = t.file('sed.txt', 'http://a http://b\nhttp.x\n');
    const dest = path.join(t.dir, 'sed-out.txt');
    expect(call('sed_string_replace', 's/http/https/', src, dest)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('https://a http://b\nhttps.x\n');
    expect(call('sed_string_replace', 's#http.#X#g', src, dest)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('http://a http://b\nXx\n');
    expect(call('sed_string_replace', 'bad', src, dest)).toBe(false);
  });

  it('sed_regex_replace: regex with $1 and ${1} groups', () => {
    const src = t.file('sedr.txt', 'id=12 id=7\n');
    const dest = path.join(t.dir, 'sedr-out.txt');
    expect(call('sed_regex_replace', 's/id=([0-9]+)/n:${1}/g', src, dest)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('n:12 n:7\n');
    expect(call('sed_regex_replace', 's/[0-9]+/N/', src, dest)).toBe(true);
    expect(fs.readFileSync(dest, 'utf8')).toBe('id=N id=7\n');
    expect(call('sed_regex_replace', 's/(/x/', src, dest)).toBe(false);
  });

  it('tar_unix / untar_unix round trip', () => {
    if (!has('tar')) return;
    const src = path.join(t.dir, 'tarsrc');
    t.file('tarsrc/a.txt', 'A');
    const archive = path.join(t.dir, 'a.tar.gz');
    const prev = process.cwd();
    process.chdir(t.dir);
    try {
      expect(call('tar_unix', 'tarsrc', archive)).toBe(true);
    } finally {
      process.chdir(prev);
    }
    const dest = path.join(t.dir, 'untar');
    expect(call('untar_unix', archive, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'tarsrc', 'a.txt'), 'utf8')).toBe('A');
    expect(call('untar_unix', path.join(t.dir, 'none.tgz'), dest)).toBe(false);
    expect(call('tar_unix', path.join(t.dir, 'nothing'), archive)).toBe(false);
    expect(fs.existsSync(src)).toBe(true);
  });

  it('zip_unix / unzip_unix round trip', () => {
    if (!has('zip') || !has('unzip')) return;
    t.file('zsrc/z.txt', 'Z');
    const archive = path.join(t.dir, 'z.zip');
    const prev = process.cwd();
    process.chdir(t.dir);
    try {
      expect(call('zip_unix', 'zsrc', archive)).toBe(true);
    } finally {
      process.chdir(prev);
    }
    const dest = path.join(t.dir, 'unz');
    expect(call('unzip_unix', archive, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'zsrc', 'z.txt'), 'utf8')).toBe('Z');
    expect(call('unzip_unix', path.join(t.dir, 'none.zip'), dest)).toBe(false);
  });

  it('git_clone / gitClone / git_pull / git_clone_subfolder on a local repository', () => {
    if (!has('git')) return;
    const repo = path.join(t.dir, 'origin');
    t.file('origin/sub/file.txt', 'in sub');
    t.file('origin/root.txt', 'root');
    const git = (...args: string[]) => spawnSync('git', ['-C', repo, ...args], { stdio: 'ignore', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    spawnSync('git', ['init', '-q', repo], { stdio: 'ignore' });
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    const url = `file://${repo}`;
    const dest = path.join(t.dir, 'clone');
    expect(call('git_clone', url, dest)).toBe(true);
    expect(fs.readFileSync(path.join(dest, 'root.txt'), 'utf8')).toBe('root');
    expect(call('git_pull', dest)).toBe(true);
    expect(call('gitPull', path.join(t.dir, 'not-a-repo'))).toBe(false);
    expect(call('gitClone', '--upload-pack=touch /tmp/x', path.join(t.dir, 'evil'))).toBe(false);
    const subDest = path.join(t.dir, 'only-sub');
    expect(call('git_clone_subfolder', url, 'sub', subDest)).toBe(true);
    expect(fs.readdirSync(subDest)).toEqual(['file.txt']);
    expect(call('git_clone_subfolder', url, '../../etc', path.join(t.dir, 'esc'))).toBe(false);
  });

  it('wget_unix failure value', () => {
    expect(call('wget_unix', '-q', path.join(t.dir, 'x'))).toBe(false);
    expect(call('wget_unix', '')).toBe(false);
  });
});
