/**
 * The real daemon for end-to-end, crash, shutdown and load tests: the built CLI started with
 * `serve --port 0` on a temporary base folder, its port read from the banner, its API key read
 * from the settings file it created. Every daemon started here is remembered so `killAllDaemons()`
 * (call it in afterAll) can SIGKILL whatever a failing test left behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = path.join(ROOT, 'bin', 'osm.js');

function newest(dir: string): number {
  let max = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

/** Builds dist/ when it is missing or older than src/ (tsc emits even if unrelated files have type errors). */
export function ensureBuilt(): void {
  const marker = path.join(ROOT, 'dist', 'cli', 'actions', 'serve.js');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= newest(path.join(ROOT, 'src'))) return;
  spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'ignore' });
  if (!fs.existsSync(marker)) throw new Error('build failed: dist/cli/actions/serve.js missing');
}

/** The test process's environment without the variables that would point the CLI elsewhere. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  for (const k of ['OSM_BASE_FOLDER', 'OSM_SERVER', 'OSM_API_KEY', 'OSM_SETTINGS']) delete env[k];
  return env;
}

/** Runs the built CLI synchronously (e.g. `config set` before a daemon starts); throws on failure. */
export function osmSync(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: cleanEnv(), encoding: 'utf8', cwd: ROOT });
  if (r.status !== 0) throw new Error(`osm ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Sets settings values in `<base>/osm-settings.yaml` (creating it with random secrets first when missing). */
export function configSet(base: string, values: Record<string, string | number | boolean>): void {
  for (const [key, value] of Object.entries(values)) osmSync(['-b', base, 'config', 'set', key, String(value)]);
}

/** The API key of a base folder's settings file. */
export function apiKeyOf(base: string): string {
  return String(parseYaml(fs.readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8')).server.auth_api_key);
}

/** The database file of a base folder, as its settings file names it. */
export function dbPathOf(base: string): string {
  const raw = String(parseYaml(fs.readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8')).database.db_path);
  return path.resolve(base, raw.replace(/\{\{\s*base_folder\s*\}\}/g, base));
}

export interface Daemon {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  base: string;
  apiKey: string;
  /** stdout + stderr so far. */
  output: () => string;
  /** Resolves with the exit code and signal (immediately when already exited). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive: () => boolean;
}

export interface StartOptions {
  /** Workflow folder (`-F`). */
  workflows?: string;
  /** Extra `serve` flags (default adds --no-schedule). */
  serveArgs?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
}

const started: Daemon[] = [];

/** Starts `osm -b <base> serve --host 127.0.0.1 --port 0` and resolves once the banner names the port. */
export function startDaemon(base: string, opts: StartOptions = {}): Promise<Daemon> {
  const args = [BIN, '-b', base, ...(opts.workflows ? ['-F', opts.workflows] : []), 'serve', '--host', '127.0.0.1', '--port', '0', ...(opts.serveArgs ?? ['--no-schedule'])];
  const child = spawn(process.execPath, args, { env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
  let out = '';
  let status: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
  });
  const d: Daemon = {
    child,
    pid: child.pid ?? 0,
    port: 0,
    url: '',
    base,
    apiKey: '',
    output: () => out,
    exited,
    alive: () => status === undefined,
  };
  started.push(d);
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`daemon did not start:\n${out}`));
    }, opts.timeoutMs ?? 30_000);
    const onData = () => {
      const m = /listening on \S+ \(http:\/\/127\.0\.0\.1:(\d+)\)/.exec(out);
      if (!m || d.port) return;
      clearTimeout(timer);
      d.port = Number(m[1]);
      d.url = `http://127.0.0.1:${d.port}`;
      d.apiKey = apiKeyOf(base);
      resolve(d);
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (!d.port) reject(new Error(`daemon exited (code ${code}, signal ${signal}) before listening:\n${out}`));
    });
  });
}

/** SIGKILL (the daemon gets no chance to clean up) and wait for the exit. */
export async function killDaemon(d: Daemon): Promise<void> {
  if (!d.alive()) return;
  d.child.kill('SIGKILL');
  await d.exited;
}

/** Stops a daemon gracefully (SIGTERM), escalating to SIGKILL after `graceMs`. */
export async function stopDaemon(d: Daemon | undefined, graceMs = 12_000): Promise<void> {
  if (!d || !d.alive()) return;
  d.child.kill('SIGTERM');
  const t = setTimeout(() => d.child.kill('SIGKILL'), graceMs);
  await d.exited;
  clearTimeout(t);
}

/** Kills every daemon started by this test file that is still alive (afterAll safety net). */
export async function killAllDaemons(): Promise<void> {
  await Promise.all(started.map((d) => killDaemon(d)));
}

export interface ApiResult {
  status: number;
  json: any;
  text: string;
}

/** One JSON request to a daemon with its API key. */
export async function api(d: Daemon, method: string, url: string, body?: unknown): Promise<ApiResult> {
  const res = await fetch(`${d.url}${url}`, {
    method,
    headers: { 'x-osm-api-key': d.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** Polls `fn` every 100 ms until it returns something truthy; throws after `timeoutMs`. */
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 45_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when a process group (or, failing that, a process) with this id exists. */
export function groupAlive(pid: number): boolean {
  if (!pid) return false;
  for (const p of [-pid, pid]) {
    try {
      process.kill(p, 0);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPERM') return true;
    }
  }
  return false;
}

/** PIDs of live processes whose command line contains `marker` (pgrep -f; zombies excluded). */
export function pgrep(marker: string): number[] {
  const r = spawnSync('pgrep', ['-f', marker], { encoding: 'utf8' });
  const pids = (r.stdout ?? '').split('\n').map((s) => Number(s.trim())).filter((n) => n > 0 && n !== process.pid);
  return pids.filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 3 (after the parenthesised name) is the state; Z = zombie, already dead.
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  });
}

/** SIGKILLs the processes (and their groups) whose command line contains `marker`: test cleanup only. */
export function reapMarker(marker: string): void {
  for (const pid of pgrep(marker)) {
    for (const p of [-pid, pid]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}

/** Every live descendant of a process (children, grandchildren …), read from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const ppid = Number(fields[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    for (const c of children.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** True while a process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** `PRAGMA integrity_check` on a read-only connection ('ok' when the file is sound). */
export async function integrityCheck(dbPath: string): Promise<string> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

/** The process group of a process (0 when it is gone). */
export function pgidOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return 0;
  }
}

/**
 * SIGKILLs the daemon and its helper processes (the spawners: every descendant outside the given
 * process groups) all at once, frozen first with SIGSTOP so none of them can react to the others'
 * death. What is left is exactly what a dead daemon cannot clean up: the step process groups.
 */
export async function killDaemonTree(d: Daemon, keepGroups: Set<number>): Promise<number[]> {
  const helpers = descendants(d.pid).filter((pid) => !keepGroups.has(pgidOf(pid)));
  const all = [d.pid, ...helpers];
  for (const pid of all) signal(pid, 'SIGSTOP');
  for (const pid of all) signal(pid, 'SIGKILL');
  await d.exited;
  return helpers;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
