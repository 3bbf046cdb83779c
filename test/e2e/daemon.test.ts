/**
 * The real daemon end to end: the built CLI started with `serve --port 0` on a temporary base
 * folder, driven over HTTP (login, runs, jobs, steps, artifacts, events, stats, cancel, upload)
 * and through `osm run --server`.
 */
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
  base: string;
  output: () => string;
}

/** Starts `osm serve --port 0` and resolves once the banner names the port. */
function startDaemon(base: string, wf: string): Promise<Daemon> {
  const child = spawn(process.execPath, [bin, '-b', base, '-F', wf, 'serve', '--host', '127.0.0.1', '--port', '0', '--no-schedule'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on \S+ \(http:\/\/127\.0\.0\.1:(\d+)\)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), base, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code}:\n${out}`));
    });
  });
}

/** Stops a daemon we started (SIGTERM, then SIGKILL if it lingers). */
async function stopDaemon(d: Daemon | undefined): Promise<void> {
  if (!d || d.child.exitCode !== null || d.child.signalCode !== null) return;
  const exited = new Promise((r) => d.child.once('exit', r));
  d.child.kill('SIGTERM');
  const t = setTimeout(() => d.child.kill('SIGKILL'), 12_000);
  await exited;
  clearTimeout(t);
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
let daemon: Daemon | undefined;
let base: string;
let headers: Record<string, string>;
let apiKey: string;
const pidsToReap: number[] = [];

async function api(method: string, url: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
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

beforeAll(async () => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wf = path.join(tmp, 'wf');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  const mod = (name: string, steps: string) => fs.writeFileSync(path.join(wf, 'modules', `${name}.yaml`), `kind: module\nname: ${name}\ndescription: e2e ${name}\nsteps:\n${steps}`);
  mod('e2e-echo', '  - name: hi\n    type: bash\n    command: echo "hi {{Target}}"\n  - name: done\n    type: bash\n    command: echo done\n');
  mod('e2e-sleep', '  - name: nap\n    type: bash\n    command: sleep 30\n');
  mod('e2e-fail', '  - name: ok\n    type: bash\n    command: echo ok\n  - name: boom\n    type: bash\n    command: exit 7\n');
  daemon = await startDaemon(tmp, wf);
  base = `http://127.0.0.1:${daemon.port}`;
  const settings = parseYaml(fs.readFileSync(path.join(tmp, 'osm-settings.yaml'), 'utf8'));
  apiKey = String(settings.server.auth_api_key);
  const password = String(settings.server.simple_user_map_key.osmedeus);
  headers = {};
  const login = await api('POST', '/osm/api/login', { username: 'osmedeus', password });
  expect(login.status).toBe(200);
  headers = { authorization: `Bearer ${login.json.token}` };
}, 180_000);

afterAll(async () => {
  await stopDaemon(daemon);
  for (const pid of pidsToReap) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('osm serve (built daemon)', () => {
  it('refuses requests without credentials and with a wrong password', async () => {
    const res = await fetch(`${base}/osm/api/runs`);
    expect(res.status).toBe(401);
    const bad = await fetch(`${base}/osm/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'osmedeus', password: 'wrong' }) });
    expect(bad.status).toBe(401);
  });

  it('runs a multi-target job (priority high, concurrency 2) to completion', async () => {
    const created = await api('POST', '/osm/api/runs', { module: 'e2e-echo', targets: ['a.example.com', 'b.example.com', 'c.example.com'], priority: 'high', concurrency: 2 });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({ message: 'Run queued', target_count: 3, priority: 'high', concurrency: 2, status: 'queued' });
    const job = await until(async () => {
      const j = await api('GET', created.json.poll_url);
      return j.json.status === 'completed' || j.json.status === 'failed' || j.json.status === 'partial' ? j.json : undefined;
    }, 'job to finish');
    expect(job).toMatchObject({ total_runs: 3, completed: 3, failed: 0, running: 0, pending: 0, status: 'completed' });

    const run = job.runs[0];
    const detail = (await api('GET', `/osm/api/runs/${run.run_uuid}`)).json.data;
    expect(detail).toMatchObject({ status: 'completed', priority: 'high', trigger_type: 'api', total_steps: 2, completed_steps: 2, current_pid: 0, run_group_id: created.json.job_id });
    const steps = (await api('GET', `/osm/api/runs/${run.id}/steps`)).json.data;
    expect(steps.map((s: { step_name: string; status: string }) => `${s.step_name}:${s.status}`)).toEqual(['hi:completed', 'done:completed']);
    expect(steps[0].output).toBe(`hi ${run.target}`);
    // Artifacts are registered right after the terminal transition (engine order), so poll briefly.
    const artifacts = await until(async () => {
      const a = (await api('GET', `/osm/api/runs/${run.run_uuid}/artifacts`)).json.data;
      return a.length > 0 ? a : undefined;
    }, 'artifacts', 10_000);
    expect(artifacts.every((a: { run_id: number }) => a.run_id === run.id)).toBe(true);
    const events = (await api('GET', `/osm/api/event-logs?run_id=${run.run_uuid}&limit=100`)).json.data;
    const topics = events.map((e: { topic: string }) => e.topic);
    for (const topic of ['run.started', 'step.completed', 'run.completed']) expect(topics).toContain(topic);
    expect(topics.filter((tp: string) => tp === 'run.started')).toHaveLength(1);
    const stepResults = (await api('GET', `/osm/api/step-results?run_id=${run.id}`)).json;
    expect(stepResults.pagination.total).toBe(2);
  });

  it('records a failed run with its failing step', async () => {
    const created = await api('POST', '/osm/api/runs', { module: 'e2e-fail', target: 'fail.example.com' });
    expect(created.status).toBe(202);
    const job = await until(async () => {
      const j = (await api('GET', created.json.poll_url)).json;
      return j.status === 'failed' ? j : undefined;
    }, 'failed job');
    expect(job.failed).toBe(1);
    const steps = (await api('GET', `/osm/api/runs/${created.json.run_uuid}/steps`)).json.data;
    expect(steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'failed']);
    const failed = await api('GET', `/osm/api/event-logs?run_id=${created.json.run_uuid}&topic=run.failed`);
    expect(failed.json.pagination.total).toBe(1);
  });

  it('cancels a long run: no process of it remains after the response', async () => {
    const created = await api('POST', '/osm/api/runs', { module: 'e2e-sleep', target: 'sleep.example.com' });
    const running = await until(async () => {
      const r = (await api('GET', `/osm/api/runs/${created.json.run_uuid}`)).json.data;
      return r.status === 'running' && r.current_pid > 0 ? r : undefined;
    }, 'sleep running');
    const pid = running.current_pid as number;
    pidsToReap.push(pid);
    expect(groupAlive(pid)).toBe(true);
    const res = await api('DELETE', `/osm/api/runs/${running.id}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ message: 'Run cancelled successfully', run_uuid: running.run_uuid, kill_method: 'registry', killed_pids: [pid], processes_terminated: 1 });
    expect(groupAlive(pid)).toBe(false);
    const after = (await api('GET', `/osm/api/runs/${running.run_uuid}`)).json.data;
    expect(after).toMatchObject({ status: 'cancelled', error_message: 'Cancelled by user', current_pid: 0 });
    const again = await api('POST', `/osm/api/runs/${running.run_uuid}/cancel`);
    expect(again.status).toBe(400);
    expect(again.json.message).toBe("Cannot cancel run with status 'cancelled'");
  });

  it('uploads a targets file and runs it through target_file', async () => {
    const form = new FormData();
    form.append('file', new Blob(['u1.example.com\nu2.example.com\n']), 'targets.txt');
    const res = await fetch(`${base}/osm/api/upload-file`, { method: 'POST', headers, body: form });
    expect(res.status).toBe(200);
    const up = (await res.json()) as { path: string; lines: number; size: number };
    expect(up).toMatchObject({ lines: 2, size: 30 });
    const created = await api('POST', '/osm/api/runs', { module: 'e2e-echo', target_file: up.path, concurrency: 2 });
    expect(created.status).toBe(202);
    expect(created.json.targets).toEqual(['u1.example.com', 'u2.example.com']);
    const job = await until(async () => {
      const j = (await api('GET', created.json.poll_url)).json;
      return j.status === 'completed' ? j : undefined;
    }, 'upload job');
    expect(job.completed).toBe(2);
  });

  it('osm run --server prints the status and the step table', async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bin, '-b', tmp, 'run', '-m', 'e2e-echo', '-t', 'example.com', '--server', base, '--api-key', apiKey], { env: cleanEnv() });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Status: completed/);
    expect(r.stdout).toMatch(/Step Results/);
    expect(r.stdout).toMatch(/\bhi\b/);
    expect(r.stdout).toMatch(/\bdone\b/);
  });

  /** A scope file that excludes the target: the daemon refuses the run with a 400. */
  const scopeFile = () => {
    const f = path.join(tmp, 'scope-excludes-example.txt');
    fs.writeFileSync(f, '!example.com\n');
    return f;
  };

  it('osm run --server exits 2 when the daemon refuses the run as invalid (400)', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bin, '-b', tmp, 'run', '-m', 'e2e-echo', '-t', 'example.com', '--scope-file', scopeFile(), '--server', base, '--api-key', apiKey], { env: cleanEnv() });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(r.stderr).toMatch(/server 400/);
    expect(r.code).toBe(2);
  });

  it('reports statistics that add up', async () => {
    const s = (await api('GET', '/osm/api/stats')).json;
    expect(s.workflows).toEqual({ total: 3, flows: 0, modules: 3 });
    expect(s.runs.completed).toBeGreaterThanOrEqual(6);
    expect(s.runs.failed).toBeGreaterThanOrEqual(1);
    expect(s.runs.cancelled).toBeGreaterThanOrEqual(1);
    expect(s.runs.total).toBe(s.runs.completed + s.runs.running + s.runs.failed + s.runs.pending + s.runs.cancelled);
    expect(s.vulnerabilities.total).toBe(s.vulnerabilities.critical + s.vulnerabilities.high + s.vulnerabilities.medium + s.vulnerabilities.low);
    expect(s.workspaces.total).toBeGreaterThanOrEqual(1);
  });
});
