/**
 * Crash recovery of the real daemon: with `server.max_concurrent_runs: 1`, a long run and several
 * queued runs; the daemon is killed with SIGKILL and restarted on the same base folder. The run
 * that was executing must end `failed` (saying the daemon stopped), its orphaned process group
 * must be killed, and the queued runs must then complete.
 */
import { descendants, pgidOf } from '../helpers/daemon.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'osm.js');

function newest(dir: string): number {
  let max = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

/** Builds dist/ once when it is missing or older than src/ (tsc emits even if unrelated files have type errors). */
function ensureBuilt(): void {
  const marker = path.join(root, 'dist', 'server', 'routes', 'runs.js');
  if (fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= newest(path.join(root, 'src'))) return;
  spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'ignore' });
  if (!fs.existsSync(marker)) throw new Error('build failed: dist/server/routes/runs.js missing');
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const k of ['OSM_BASE_FOLDER', 'OSM_SERVER', 'OSM_API_KEY']) delete env[k];
  return env;
}

interface Daemon {
  child: ChildProcess;
  port: number;
  output: () => string;
}

const daemons: Daemon[] = [];

/** Starts `osm serve --port 0` and resolves once the banner names the port. */
function startDaemon(base: string, wf: string): Promise<Daemon> {
  const child = spawn(process.execPath, [bin, '-b', base, '-F', wf, 'serve', '--host', '127.0.0.1', '--port', '0', '--no-schedule'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const pending: Daemon = { child, port: 0, output: () => out };
  daemons.push(pending);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on \S+ \(http:\/\/127\.0\.0\.1:(\d+)\)/.exec(out);
      if (m && !pending.port) {
        clearTimeout(timer);
        pending.port = Number(m[1]);
        resolve(pending);
      }
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!pending.port) reject(new Error(`daemon exited with ${code}:\n${out}`));
    });
  });
}

function running(d: Daemon): boolean {
  return d.child.exitCode === null && d.child.signalCode === null;
}

async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 45_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function groupAlive(pid: number): boolean {
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

let tmp: string;
let wf: string;
let apiKey: string;
const pidsToReap: number[] = [];

async function api(port: number, method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { 'x-osm-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: await res.json() };
}

beforeAll(() => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wf = path.join(tmp, 'wf');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  fs.writeFileSync(path.join(wf, 'modules', 'r-sleep.yaml'), 'kind: module\nname: r-sleep\nsteps:\n  - name: nap\n    type: bash\n    command: sleep 30\n');
  fs.writeFileSync(path.join(wf, 'modules', 'r-echo.yaml'), 'kind: module\nname: r-echo\nsteps:\n  - name: hi\n    type: bash\n    command: echo "hi {{Target}}"\n');
  // Creates the settings file (random secrets) with a global limit of one run at a time.
  const r = spawnSync(process.execPath, [bin, '-b', tmp, 'config', 'set', 'server.max_concurrent_runs', '1'], { env: cleanEnv(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`config set failed: ${r.stderr}`);
  apiKey = String(parseYaml(fs.readFileSync(path.join(tmp, 'osm-settings.yaml'), 'utf8')).server.auth_api_key);
}, 180_000);

afterAll(async () => {
  for (const d of daemons) {
    if (!running(d)) continue;
    const exited = new Promise((r) => d.child.once('exit', r));
    d.child.kill('SIGKILL');
    await exited;
  }
  for (const pid of pidsToReap) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

function signalQuietly(p: number, sig: NodeJS.Signals): void {
  try {
    process.kill(p, sig);
  } catch {
    /* already gone */
  }
}

describe('daemon restart after kill -9', () => {
  it('fails the interrupted run, kills its orphan, then completes the queued runs', async () => {
    const first = await startDaemon(tmp, wf);
    const long = await api(first.port, 'POST', '/osm/api/runs', { module: 'r-sleep', target: 'long.example.com', priority: 'critical' });
    expect(long.status).toBe(202);
    const run = await until(async () => {
      const r = (await api(first.port, 'GET', `/osm/api/runs/${long.json.run_uuid}`)).json.data;
      return r.status === 'running' && r.current_pid > 0 ? r : undefined;
    }, 'long run to start');
    const pid = run.current_pid as number;
    pidsToReap.push(pid);
    const queued: string[] = [];
    for (const target of ['q1.example.com', 'q2.example.com', 'q3.example.com']) {
      const res = await api(first.port, 'POST', '/osm/api/runs', { module: 'r-echo', target });
      expect(res.status).toBe(202);
      queued.push(res.json.run_uuid);
    }
    // The limit is 1: they wait behind the long run.
    for (const uuid of queued) expect((await api(first.port, 'GET', `/osm/api/runs/${uuid}`)).json.data.status).toBe('queued');

    const exited = new Promise((r) => first.child.once('exit', r));
    // Kill the daemon together with its spawner processes (frozen first so none can react), as a
    // crash of the whole service would: the step's own process group is left behind, orphaned.
    const helpers = descendants(first.child.pid!).filter((p) => pgidOf(p) !== pid);
    for (const p of [first.child.pid!, ...helpers]) signalQuietly(p, 'SIGSTOP');
    for (const p of [first.child.pid!, ...helpers]) signalQuietly(p, 'SIGKILL');
    await exited;
    expect(groupAlive(pid)).toBe(true);

    const second = await startDaemon(tmp, wf);
    expect(second.output()).toMatch(/1 interrupted run\(s\) marked failed/);
    const failed = (await api(second.port, 'GET', `/osm/api/runs/${run.run_uuid}`)).json.data;
    expect(failed.status).toBe('failed');
    expect(failed.error_message).toMatch(/daemon stopped/);
    expect(failed.current_pid).toBe(0);
    await until(() => !groupAlive(pid), 'orphaned sleep to be killed', 10_000);

    for (const uuid of queued) {
      const done = await until(async () => {
        const r = (await api(second.port, 'GET', `/osm/api/runs/${uuid}`)).json.data;
        return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
      }, `queued run ${uuid}`);
      expect(done.status).toBe('completed');
    }
    const events = (await api(second.port, 'GET', `/osm/api/event-logs?run_id=${run.run_uuid}&topic=run.failed`)).json;
    expect(events.pagination.total).toBe(1);
    const steps = (await api(second.port, 'GET', `/osm/api/runs/${run.run_uuid}/steps`)).json.data;
    expect(steps.map((s: { status: string }) => s.status)).toEqual(['failed']);
  });
});
