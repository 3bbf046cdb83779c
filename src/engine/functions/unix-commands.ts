/**
 * Wrappers around external tools (reference §10.2 "unix_commands"). Programs get argv arrays
 * (never a shell), paths that start with `-` are prefixed with `./`, and `--` ends options where
 * the tool supports it, so file names and URLs cannot turn into flags.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FnImpl } from './registry.js';
import type { FnContext } from '../js-runtime.js';
import { argStr, isDirectory, isRegularFile, linesText, ok, pathArg, readText, runProgram, splitLines, tryRegex, writeText } from './helpers.js';
import { refuseUrl, runNetChild } from './http-child.js';
import { DEFAULT_USER_AGENT } from './http.js';
import { safeJoin } from '../../util/fs-safe.js';

const quiet = { stdio: ['ignore', 'pipe', 'pipe'] as ('ignore' | 'pipe')[] };

/** Only plain http(s)/git/ssh remote forms are handed to git and wget. */
function remoteOk(url: string): boolean {
  return !url.startsWith('-') && !/[\s\0]/.test(url);
}

/** Environment for git: never prompt; a GitHub token only for https://github.com (exact host). */
function gitEnv(url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  const token = process.env.GITHUB_TOKEN || process.env.GH_TOKEN;
  let host = '';
  let https = false;
  try {
    const u = new URL(url);
    host = u.hostname.toLowerCase();
    https = u.protocol === 'https:';
  } catch {
    // scp-like or local paths get no token
  }
  if (token && https && host === 'github.com') {
    // Passed through git's env-config so the token never appears in argv or the remote URL.
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.https://github.com/.extraheader';
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  }
  return env;
}

/** `git clone --depth 1 -- url [dest]`. */
function gitClone(ctx: FnContext, url: string, dest?: string): boolean {
  if (!remoteOk(url)) return false;
  const args = ['clone', '--depth', '1', '--', url];
  if (dest) args.push(dest);
  return ok(runProgram(ctx, 'git', args, { ...quiet, env: gitEnv(url) }));
}

interface SedExpr {
  pattern: string;
  replacement: string;
  global: boolean;
}

/** Parses `s<d>old<d>new<d>[flags]` with any delimiter; `\<d>` escapes the delimiter. */
export function parseSed(expr: string, literal: boolean): SedExpr | null {
  if (expr.length < 4 || expr[0] !== 's') return null;
  const d = expr[1]!;
  const parts: string[] = [];
  let cur = '';
  for (let i = 2; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '\\' && i + 1 < expr.length) {
      const n = expr[++i]!;
      if (n === d) cur += d;
      else if (literal) cur += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      else cur += `\\${n}`;
    } else if (c === d && parts.length < 2) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  if (parts.length !== 2) return null;
  if (/[^gip0-9]/.test(cur)) return null;
  return { pattern: parts[0]!, replacement: parts[1]!, global: cur.includes('g') };
}

/** Applies a sed expression per line of source and writes dest. */
function sedFile(expr: string, source: string, dest: string, literal: boolean): boolean {
  const sed = parseSed(expr, literal);
  const text = sed ? readText(source) : null;
  if (!sed || text === null || sed.pattern === '') return false;
  let apply: (line: string) => string;
  if (literal) {
    apply = sed.global ? (l) => l.split(sed.pattern).join(sed.replacement) : (l) => {
      const at = l.indexOf(sed.pattern);
      return at < 0 ? l : l.slice(0, at) + sed.replacement + l.slice(at + sed.pattern.length);
    };
  } else {
    const re = tryRegex(sed.pattern, sed.global ? 'g' : '');
    if (!re) return false;
    // Go-style ${1} group references → JS $1; literal $$ stays a dollar.
    const repl = sed.replacement.replace(/\$\{(\w+)\}/g, (_m, g: string) => (/^\d+$/.test(g) ? `$${g}` : `$<${g}>`));
    apply = (l) => l.replace(re, repl);
  }
  return writeText(dest, linesText(splitLines(text).map(apply)));
}

/** The unix commands functions, by snake_case name (aliases come from the catalogue). */
export const unixCommandFunctions: Record<string, FnImpl> = {
  sort_unix: (ctx, i, o) => {
    const input = argStr(i);
    if (input === null || !isRegularFile(input)) return false;
    const output = argStr(o) ?? input;
    return ok(runProgram(ctx, 'sort', ['-u', '-o', pathArg(output), '--', input], { ...quiet, env: { ...process.env, LC_ALL: 'C' } }));
  },
  wget_unix: (ctx, u, o) => {
    const url = argStr(u);
    if (url === null || !remoteOk(url)) return false;
    const output = argStr(o);
    const args = ['-q', '--no-check-certificate'];
    if (output) {
      try {
        mkdirSync(dirname(output), { recursive: true });
      } catch {
        return false;
      }
      args.push('-O', pathArg(output));
    }
    return ok(runProgram(ctx, 'wget', [...args, '--', url], quiet));
  },
  wget: (ctx, u, o) => {
    const url = argStr(u);
    const output = argStr(o);
    if (url === null || output === null || !/^https?:\/\//i.test(url)) return false;
    try {
      mkdirSync(dirname(output), { recursive: true });
    } catch {
      return false;
    }
    const refused = refuseUrl(ctx.outbound, url);
    if (refused) {
      (ctx.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(`[WARN] wget: ${refused}`);
      return false;
    }
    const r = runNetChild<{ ok: boolean }>(ctx, { kind: 'download', url, output, ua: DEFAULT_USER_AGENT, timeoutMs: 30 * 60_000 }, 60 * 60_000, ctx.outbound);
    return r?.ok === true;
  },
  git_clone: (ctx, r, d) => {
    const repo = argStr(r);
    return repo !== null && gitClone(ctx, repo, argStr(d) ?? undefined);
  },
  git_clone_subfolder: (ctx, r, s, d) => {
    const repo = argStr(r);
    const sub = argStr(s);
    const dest = argStr(d);
    if (repo === null || sub === null || dest === null) return false;
    const tmp = mkdtempSync(join(tmpdir(), 'osm-clone-'));
    try {
      if (!gitClone(ctx, repo, join(tmp, 'repo'))) return false;
      // The subfolder must stay inside the clone, even through links.
      const from = safeJoin(join(tmp, 'repo'), sub.replace(/^\/+/, ''), { followLinks: true });
      if (!isDirectory(from)) return false;
      mkdirSync(dest, { recursive: true });
      cpSync(from, dest, { recursive: true, verbatimSymlinks: true });
      return true;
    } catch {
      return false;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
  git_pull: (ctx, p) => {
    const path = argStr(p);
    if (path === null || !isDirectory(path)) return false;
    return ok(runProgram(ctx, 'git', ['-C', path, 'pull', '--ff-only'], { ...quiet, env: gitEnv('') }));
  },
  zip_unix: (ctx, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || !existsSync(src)) return false;
    return ok(runProgram(ctx, 'zip', ['-q', '-r', pathArg(dest), pathArg(src)], quiet));
  },
  unzip_unix: (ctx, s, d) => {
    const src = argStr(s);
    if (src === null || !isRegularFile(src)) return false;
    const dest = argStr(d);
    const args = ['-o', '-q', pathArg(src)];
    if (dest) args.push('-d', pathArg(dest));
    return ok(runProgram(ctx, 'unzip', args, quiet));
  },
  tar_unix: (ctx, s, d) => {
    const src = argStr(s);
    const dest = argStr(d);
    if (src === null || dest === null || !existsSync(src)) return false;
    return ok(runProgram(ctx, 'tar', ['-czf', pathArg(dest), pathArg(src)], quiet));
  },
  untar_unix: (ctx, s, d) => {
    const src = argStr(s);
    if (src === null || !isRegularFile(src)) return false;
    const dest = argStr(d);
    const args = ['-xzf', pathArg(src), '--no-same-owner'];
    if (dest) {
      mkdirSync(dest, { recursive: true });
      args.push('-C', dest);
    }
    return ok(runProgram(ctx, 'tar', args, quiet));
  },
  diff_unix: (ctx, a, b, o) => {
    const f1 = argStr(a) ?? '';
    const f2 = argStr(b) ?? '';
    const fail = (error: string) => ({ error, message: 'error', output: '', file1: f1, file2: f2, line_count: 0 });
    if (!f1 || !f2) return fail('file1 and file2 are required');
    if (!existsSync(f1) || !existsSync(f2)) return fail(`file not found: ${!existsSync(f1) ? f1 : f2}`);
    const r = runProgram(ctx, 'diff', ['--', f1, f2], quiet);
    // diff exits 1 when the files differ; only 2+ (or a spawn failure) is an error.
    if (r.error !== undefined || r.status === null || r.status > 1) return fail(r.error ?? (r.stderr.trim() || 'diff failed'));
    const output = argStr(o);
    if (output && !writeText(output, r.stdout)) return fail(`cannot write ${output}`);
    return { error: null, message: 'success', output: r.stdout, file1: f1, file2: f2, line_count: splitLines(r.stdout).length };
  },
  sed_string_replace: (_c, e, s, d) => {
    const expr = argStr(e);
    const src = argStr(s);
    const dest = argStr(d);
    return expr !== null && src !== null && dest !== null && sedFile(expr, src, dest, true);
  },
  sed_regex_replace: (_c, e, s, d) => {
    const expr = argStr(e);
    const src = argStr(s);
    const dest = argStr(d);
    return expr !== null && src !== null && dest !== null && sedFile(expr, src, dest, false);
  },
};
