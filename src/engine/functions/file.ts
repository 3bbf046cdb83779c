/**
 * File functions (reference server-api §10.2 "file", plus the spec's writeFile/copyFile/mergeFiles).
 * Workflows are operator-trusted, so paths are taken as given; every function answers its failure
 * value (false, 0, "" or []) instead of throwing.
 */
import {
  appendFileSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync,
  renameSync, rmSync, unlinkSync, writeFileSync,
} from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { FnImpl } from './registry.js';
import {
  argInt, argStr, isDirectory, isRegularFile, linesText, nonBlankLines, readText, splitLines, tryRegex, writeText,
} from './helpers.js';

/** Lines of `path` for which `keep` holds, or null when unreadable. */
function filterLines(path: string, keep: (line: string) => boolean): string[] | null {
  const text = readText(path);
  if (text === null) return null;
  return splitLines(text).filter(keep);
}

/** Go filepath.Match-style segment pattern → RegExp (`*`, `?`, `[...]`, backslash escapes). */
function segmentRegex(seg: string): RegExp | null {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < seg.length) re += `\\${seg[++i]}`;
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) return null;
      let body = seg.slice(i + 1, end);
      if (body.startsWith('^')) body = `^${body.slice(1)}`;
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return tryRegex(`^${re}$`);
}

const hasMagic = (s: string) => /[*?[]/.test(s);

/** Expands a shell-style glob (no `**`), sorted; [] on a malformed pattern. */
export function globPaths(pattern: string): string[] {
  const absolute = pattern.startsWith('/');
  const parts = pattern.split('/').filter((p, i) => p !== '' || i === 0);
  let current: string[] = [absolute ? '/' : ''];
  for (const part of absolute ? parts.slice(1) : parts) {
    const next: string[] = [];
    if (!hasMagic(part)) {
      for (const base of current) {
        const p = base === '' ? part : join(base, part);
        if (existsSync(p)) next.push(p);
      }
    } else {
      const re = segmentRegex(part);
      if (!re) return [];
      for (const base of current) {
        let names: string[];
        try {
          names = readdirSync(base === '' ? '.' : base);
        } catch {
          continue;
        }
        for (const n of names.sort()) if (re.test(n)) next.push(base === '' ? n : join(base, n));
      }
    }
    current = next;
    if (current.length === 0) break;
  }
  return current.filter((p) => p !== '' && p !== '/').sort();
}

/** Deletes everything under `folder` except `keep` (and the folders leading to it). */
function removeAllExcept(folder: string, keep: string): boolean {
  const root = resolve(folder);
  const candidates = isAbsolute(keep) ? [keep] : [join(root, keep), resolve(keep)];
  const keepPath = candidates.map((c) => resolve(c)).find((c) => isRegularFile(c));
  if (!keepPath) return false;
  const rel = relative(root, keepPath);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
  const sweep = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (full === keepPath) continue;
      if (keepPath.startsWith(full + sep) && lstatSync(full).isDirectory()) sweep(full);
      else rmSync(full, { recursive: true, force: true });
    }
  };
  try {
    sweep(root);
    return true;
  } catch {
    return false;
  }
}

const guard = <T>(fail: T, fn: () => T): T => {
  try {
    return fn();
  } catch {
    return fail;
  }
};

/** The file functions, by snake_case name (aliases come from the catalogue). */
export const fileFunctions: Record<string, FnImpl> = {
  file_exists: (_c, p) => {
    const path = argStr(p);
    return path !== null && existsSync(path);
  },
  file_length: (_c, p) => {
    const path = argStr(p);
    return path === null ? 0 : (nonBlankLines(path)?.length ?? 0);
  },
  dir_length: (_c, p) => {
    const path = argStr(p);
    return path === null ? 0 : guard(0, () => readdirSync(path).length);
  },
  file_contains: (_c, p, pat) => {
    const path = argStr(p);
    const pattern = argStr(pat);
    if (path === null || pattern === null) return false;
    const text = readText(path);
    if (text === null) return false;
    const re = tryRegex(pattern);
    return re ? re.test(text) : text.includes(pattern);
  },
  regex_extract: (_c, p, pat) => {
    const path = argStr(p);
    const pattern = argStr(pat);
    if (path === null || pattern === null) return [];
    const re = tryRegex(pattern);
    if (!re) return [];
    return filterLines(path, (l) => re.test(l)) ?? [];
  },
  read_file: (_c, p) => {
    const path = argStr(p);
    return path === null ? '' : (readText(path) ?? '');
  },
  read_lines: (_c, p) => {
    const path = argStr(p);
    if (path === null) return [];
    const text = readText(path);
    return text === null ? [] : splitLines(text);
  },
  write_file: (_c, p, content) => {
    const path = argStr(p);
    if (path === null) return false;
    return writeText(path, content === undefined || content === null ? '' : String(content));
  },
  copy_file: (_c, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || !isRegularFile(src)) return false;
    return guard(false, () => {
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(src, dest);
      return true;
    });
  },
  merge_files: (_c, pat, out) => {
    const pattern = argStr(pat);
    const output = argStr(out);
    if (pattern === null || output === null) return false;
    const files = globPaths(pattern).filter((f) => isRegularFile(f) && resolve(f) !== resolve(output));
    if (files.length === 0) return false;
    return guard(false, () => {
      const parts = files.map((f) => {
        const t = readFileSync(f, 'utf8');
        return t === '' || t.endsWith('\n') ? t : `${t}\n`;
      });
      return writeText(output, parts.join(''));
    });
  },
  remove_file: (_c, p) => {
    const path = argStr(p);
    if (path === null) return false;
    // stat follows links, as the reference: a link to a regular file is removed, a link to a folder is not.
    if (!isRegularFile(path)) return false;
    return guard(false, () => {
      unlinkSync(path);
      return true;
    });
  },
  remove_folder: (_c, p) => {
    const path = argStr(p);
    if (path === null || !guard(false, () => lstatSync(path).isDirectory())) return false;
    return guard(false, () => {
      rmSync(path, { recursive: true, force: true });
      return true;
    });
  },
  rm_rf: (_c, p) => {
    const path = argStr(p);
    if (path === null) return false;
    return guard(false, () => {
      rmSync(path, { recursive: true, force: true });
      return !existsSync(path);
    });
  },
  remove_all_except: (_c, f, k) => {
    const folder = argStr(f);
    const keep = argStr(k);
    if (folder === null || keep === null || !isDirectory(folder)) return false;
    return removeAllExcept(folder, keep);
  },
  create_folder: (_c, p) => {
    const path = argStr(p);
    if (path === null) return false;
    return guard(false, () => {
      mkdirSync(path, { recursive: true, mode: 0o755 });
      return true;
    });
  },
  append_file: (_c, d, s) => {
    const dest = argStr(d);
    const src = argStr(s);
    if (dest === null || src === null) return false;
    return guard(false, () => {
      const content = readFileSync(src);
      mkdirSync(dirname(dest), { recursive: true });
      appendFileSync(dest, content);
      return true;
    });
  },
  move_file: (_c, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || !isRegularFile(src)) return false;
    return guard(false, () => {
      mkdirSync(dirname(dest), { recursive: true });
      try {
        renameSync(src, dest);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        copyFileSync(src, dest);
        unlinkSync(src);
      }
      return true;
    });
  },
  glob: (_c, p) => {
    const pattern = argStr(p);
    return pattern === null ? [] : globPaths(pattern);
  },
  grep_string_to_file: (_c, d, s, str) => {
    const dest = argStr(d);
    const src = argStr(s);
    const needle = argStr(str);
    if (dest === null || src === null || needle === null) return false;
    const lines = filterLines(src, (l) => l.includes(needle));
    return lines !== null && writeText(dest, linesText(lines));
  },
  grep_regex_to_file: (_c, d, s, pat) => {
    const dest = argStr(d);
    const src = argStr(s);
    const pattern = argStr(pat);
    if (dest === null || src === null || pattern === null) return false;
    const re = tryRegex(pattern);
    if (!re) return false;
    const lines = filterLines(src, (l) => re.test(l));
    return lines !== null && writeText(dest, linesText(lines));
  },
  grep_string: (_c, s, str) => {
    const src = argStr(s);
    const needle = argStr(str);
    if (src === null || needle === null) return '';
    return (filterLines(src, (l) => l.includes(needle)) ?? []).join('\n');
  },
  grep_regex: (_c, s, pat) => {
    const src = argStr(s);
    const pattern = argStr(pat);
    if (src === null || pattern === null) return '';
    const re = tryRegex(pattern);
    if (!re) return '';
    return (filterLines(src, (l) => re.test(l)) ?? []).join('\n');
  },
  remove_blank_lines: (_c, p) => {
    const path = argStr(p);
    if (path === null || !isRegularFile(path)) return false;
    const lines = nonBlankLines(path);
    if (lines === null) return false;
    return guard(false, () => {
      // writeFileSync keeps the existing file's mode because it rewrites the same inode.
      writeFileSync(path, linesText(lines));
      return true;
    });
  },
  chunk_file: (_c, i, n, o) => {
    const input = argStr(i);
    const output = argStr(o);
    const size = argInt(n, 0);
    if (input === null || output === null || size <= 0) return false;
    const lines = nonBlankLines(input);
    if (lines === null) return false;
    const ext = extname(input);
    const base = basename(input, ext);
    const chunks: string[] = [];
    for (let start = 0, idx = 0; start < lines.length; start += size, idx++) {
      const chunkPath = join(dirname(input), `${base}_part_${idx}${ext}`);
      if (!writeText(chunkPath, linesText(lines.slice(start, start + size)))) return false;
      chunks.push(chunkPath);
    }
    return writeText(output, linesText(chunks));
  },
  cut_to_file: (_c, i, d, f, o) => {
    const input = argStr(i);
    const delim = argStr(d);
    const output = argStr(o);
    const field = argInt(f, 0);
    if (input === null || delim === null || output === null || field < 1) return false;
    const lines = nonBlankLines(input);
    if (lines === null) return false;
    const out: string[] = [];
    for (const line of lines) {
      const value = line.split(delim)[field - 1];
      if (value !== undefined && value !== '') out.push(value);
    }
    return writeText(output, linesText(out));
  },
};
