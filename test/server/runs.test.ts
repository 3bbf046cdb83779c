import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

/** Small modules that run with coreutils only. */
function writeWorkflows(dir: string): void {
  fs.mkdirSync(path.join(dir, 'modules'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'flows'), { recursive: true });
  const mod = (name: string, steps: string) => fs.writeFileSync(path.join(dir, 'modules', `${name}.yaml`), `kind: module\nname: ${name}\ndescription: test ${name}\nsteps:\n${steps}`);
  mod('quick', '  - name: hello\n    type: bash\n    command: echo "hello {{Target}}"\n  - name: bye\n    type: bash\n    command: echo bye\n');
  mod('slow', '  - name: nap\n    type: bash\n    command: sleep 30\n');
  mod('broken', '  - name: ok\n    type: bash\n    command: echo fine\n  - name: boom\n    type: bash\n    command: exit 3\n');
  mod('leaky', '  - name: show\n    type: bash\n    command: echo "token={{api_token}}"\n');
  fs.writeFileSync(
    path.join(dir, 'flows', 'combo.yaml'),
    'kind: flow\nname: combo\nmodules:\n  - name: q\n    path: modules/quick.yaml\n',
  );
}

/** Polls `fn` until it returns a truthy value (bounded, so a hang fails instead of blocking). */
async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True while any process of the group (or the process) exists. */
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

const RUN_KEYS = [
  'completed_at', 'completed_steps', 'created_at', 'current_pid', 'error_message', 'id', 'params', 'priority', 'run_group_id', 'run_uuid',
  'schedule_id', 'started_at', 'status', 'target', 'total_steps', 'trigger_name', 'trigger_type', 'updated_at', 'workflow_kind', 'workflow_name', 'workspace',
];
const STEP_KEYS = ['command', 'completed_at', 'created_at', 'duration_ms', 'error_message', 'exports', 'id', 'log_file', 'output', 'run_id', 'started_at', 'status', 'step_name', 'step_type'];

let wfDir: string;
let idle: TestServer; // no queue: runs stay queued, nothing executes
let live: TestServer; // with the run queue

beforeAll(async () => {
  wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  writeWorkflows(wfDir);
  idle = await makeTestServer({ workflowFolder: wfDir });
  live = await makeTestServer({ workflowFolder: wfDir, withQueue: true, limit: 2 });
});

afterAll(async () => {
  await idle?.close();
  await live?.close();
  fs.rmSync(wfDir, { recursive: true, force: true });
});

const post = (t: TestServer, url: string, payload?: unknown) => t.server.inject({ method: 'POST', url, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });
const get = (t: TestServer, url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });

async function runOf(t: TestServer, id: string | number) {
  return (await get(t, `/osm/api/runs/${id}`)).json().data;
}

describe('authentication', () => {
  it('every run route answers 401 without credentials', async () => {
    const routes: [string, string][] = [
      ['POST', '/osm/api/runs'], ['GET', '/osm/api/runs'], ['GET', '/osm/api/runs/1'], ['DELETE', '/osm/api/runs/1'],
      ['POST', '/osm/api/runs/1/cancel'], ['POST', '/osm/api/runs/1/duplicate'], ['POST', '/osm/api/runs/1/start'],
      ['GET', '/osm/api/runs/1/steps'], ['GET', '/osm/api/runs/1/artifacts'],
    ];
    for (const [method, url] of routes) {
      const res = await idle.server.inject({ method: method as 'GET', url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
  });
});

describe('POST /osm/api/runs (validation)', () => {
  const expect400 = async (payload: unknown, message: string | RegExp) => {
    const res = await post(idle, '/osm/api/runs', payload);
    expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    const body = res.json();
    expect(body.error).toBe(true);
    if (typeof message === 'string') expect(body.message).toBe(message);
    else expect(body.message).toMatch(message);
  };

  it('reports every documented message', async () => {
    await expect400({ target: 'example.com' }, "Either 'flow' or 'module' is required");
    await expect400({ module: 'quick' }, 'At least one target is required (target, targets, target_file, or empty_target)');
    await expect400({ module: 'quick', targets: ['', '  ', '# c'] }, 'At least one target is required (target, targets, target_file, or empty_target)');
    await expect400({ module: 'quick', target: 'example.com', priority: 'urgent' }, 'Invalid priority. Must be one of: low, normal, high, critical');
    await expect400({ module: '../etc/passwd', target: 'example.com' }, 'Invalid workflow name');
    await expect400({ module: 'quick', target: 'a.com;id' }, /^target "a\.com;id" contains forbidden character ";"/);
    await expect400({ module: 'quick', targets: ['ok.com', 'b.com$(id)'] }, /^targets\[1\] .*forbidden character "\$"/);
    await expect400({ module: 'quick', target: 'ok.com', params: { x: 'a`id`' } }, /params.*forbidden character "`"/);
    await expect400({ module: 'quick', target: 'ok.com', params: { x: 5 } }, /params\.x/);
    await expect400({ module: 'quick', target: 'ok.com', timeout: 0 }, /timeout/);
    await expect400({ module: 'quick', target: 'ok.com', concurrency: 0 }, /concurrency/);
    await expect400({ module: 'quick', target: 'ok.com', runner_type: 'docker' }, /docker_image: required/);
    await expect400({ module: 'quick', target: 'ok.com', runner_type: 'ssh' }, /ssh_host: required/);
    await expect400({ module: 'quick', target: 'ok.com', runner_type: 'vm' }, /runner_type/);
    await expect400({ module: 'quick', target: 'ok.com', workspace: '../x' }, /workspace/);
    await expect400({ module: 'quick', target: 'ok.com', runner_type: 'docker', docker_image: 'alpine;id' }, /docker_image.*forbidden/);
    await expect400({ module: 'combo', target: 'ok.com' }, "'combo' is a flow, not a module");
  });

  it('skip_validation does not disable the security validation of targets and params', async () => {
    await expect400({ module: 'quick', target: 'x.com|id', skip_validation: true }, /forbidden character "\|"/);
    await expect400({ module: 'quick', target: 'x.com', params: { p: '$(id)' }, skip_validation: true }, /forbidden character/);
  });

  it('target_file must be a file inside the uploads or data folder', async () => {
    const outside = path.join(os.tmpdir(), `osm-test-outside-${process.pid}.txt`);
    fs.writeFileSync(outside, 'example.com\n');
    try {
      await expect400({ module: 'quick', target_file: outside }, /^Invalid target_file: it must be a file inside the uploads folder/);
      await expect400({ module: 'quick', target_file: '/etc/passwd' }, /^Invalid target_file/);
      await expect400({ module: 'quick', target_file: '../../osm-settings.yaml' }, /^Invalid target_file: '\.\.' is not allowed/);
      await expect400({ module: 'quick', target_file: 'missing.txt' }, /^Invalid target_file: file not found/);
      // A link inside the uploads folder pointing outside is refused too.
      const uploads = idle.app.settings().paths.uploads;
      fs.mkdirSync(uploads, { recursive: true });
      fs.symlinkSync(outside, path.join(uploads, 'link.txt'));
      await expect400({ module: 'quick', target_file: path.join(uploads, 'link.txt') }, /^Invalid target_file: it must be/);
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });

  it('404 for an unknown workflow', async () => {
    const res = await post(idle, '/osm/api/runs', { flow: 'nope', target: 'example.com' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Workflow not found' });
  });

  it('malformed JSON is 400 Invalid request body', async () => {
    const res = await idle.server.inject({ method: 'POST', url: '/osm/api/runs', headers: { ...idle.auth, 'content-type': 'application/json' }, payload: '{"module":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'Invalid request body' });
  });
});

describe('POST /osm/api/runs (creation, no queue)', () => {
  it('queues one run and answers 202 with the single-target shape', async () => {
    const res = await post(idle, '/osm/api/runs', { module: 'quick', target: 'example.com', params: { threads: '5' }, priority: 'high', timeout: 5 });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toEqual({
      message: 'Run queued', workflow: 'quick', kind: 'module', target_count: 1, target: 'example.com', run_uuid: expect.any(String),
      concurrency: 1, priority: 'high', job_id: expect.stringMatching(/^[0-9a-f]{8}$/), status: 'queued', poll_url: `/osm/api/jobs/${body.job_id}`,
      runner_type: 'host', timeout: 5,
    });
    const rec = (await idle.app.repos.runs.getByUuid(body.run_uuid))!;
    expect(rec).toMatchObject({ status: 'queued', trigger_type: 'api', priority: 'high', run_group_id: body.job_id, params: { threads: '5' }, workflow_kind: 'module' });
    expect(rec.options).toMatchObject({ concurrency: 1, runnerType: 'host', timeoutMs: 300_000 });
    // The engine writes run.started when the run really starts; creation writes none.
    expect((await idle.app.repos.events.list({ topic: 'run.started' }, { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('queues one run per distinct target (multi-target shape) and maps medium to normal', async () => {
    const res = await post(idle, '/osm/api/runs', { module: 'quick', target: 'a.com', targets: ['b.com', 'a.com', ' c.com '], concurrency: 2, priority: 'medium' });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ target_count: 3, targets: ['a.com', 'b.com', 'c.com'], concurrency: 2, priority: 'normal', status: 'queued' });
    expect(body.run_uuid).toBeUndefined();
    expect(body.target).toBeUndefined();
    const runs = await idle.app.repos.runs.byGroup(body.job_id);
    expect(runs.map((r) => r.target)).toEqual(['a.com', 'b.com', 'c.com']);
    expect(runs.every((r) => r.status === 'queued' && r.priority === 'normal' && (r.options as { concurrency: number }).concurrency === 2)).toBe(true);
  });

  it('accepts workflow as an alias, a custom workspace, runner options and empty_target', async () => {
    const a = await post(idle, '/osm/api/runs', { workflow: 'combo', target: 'example.org', workspace: 'my-space', runner_type: 'docker', docker_image: 'alpine:3' });
    expect(a.statusCode).toBe(202);
    expect(a.json()).toMatchObject({ workflow: 'combo', kind: 'flow', runner_type: 'docker' });
    const rec = (await idle.app.repos.runs.getByUuid(a.json().run_uuid))!;
    expect(rec.workspace).toBe('my-space');
    expect(rec.options).toMatchObject({ space: 'my-space', runnerType: 'docker', dockerImage: 'alpine:3' });
    const e = await post(idle, '/osm/api/runs', { module: 'quick', empty_target: true });
    expect(e.statusCode).toBe(202);
    expect(e.json().target).toMatch(/^empty-[a-z0-9]{6}-\d+$/);
  });

  it('reads targets from a file in the uploads folder', async () => {
    const uploads = idle.app.settings().paths.uploads;
    fs.mkdirSync(uploads, { recursive: true });
    const file = path.join(uploads, 'targets.txt');
    fs.writeFileSync(file, '# list\nx1.com\n\nx2.com\r\nx1.com\n');
    const res = await post(idle, '/osm/api/runs', { module: 'quick', target_file: file });
    expect(res.statusCode).toBe(202);
    expect(res.json().targets).toEqual(['x1.com', 'x2.com']);
    const rel = await post(idle, '/osm/api/runs', { module: 'quick', target_file: 'targets.txt' });
    expect(rel.json().target_count).toBe(2);
  });
});

describe('GET /osm/api/runs and /runs/{id}', () => {
  it('lists with exactly the spec fields, newest first, with filters and pagination', async () => {
    const res = await get(idle, '/osm/api/runs');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination.offset).toBe(0);
    expect(body.pagination.limit).toBe(20);
    expect(body.pagination.total).toBeGreaterThanOrEqual(8);
    expect(Object.keys(body.data[0]).sort()).toEqual(RUN_KEYS);
    const ids = body.data.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    // 'x1.' rather than 'x1': the random name of an empty-target run may contain "x1".
    const byTarget = (await get(idle, '/osm/api/runs?target=x1.')).json();
    expect(byTarget.data.every((r: { target: string }) => r.target.includes('x1.'))).toBe(true);
    expect(byTarget.pagination.total).toBe(2);
    expect((await get(idle, '/osm/api/runs?workflow_name=combo')).json().pagination.total).toBe(1);
    expect((await get(idle, '/osm/api/runs?workflow=combo')).json().pagination.total).toBe(1);
    expect((await get(idle, '/osm/api/runs?workspace=my-space')).json().pagination.total).toBe(1);
    expect((await get(idle, '/osm/api/runs?status=queued')).json().pagination.total).toBe(body.pagination.total);
    expect((await get(idle, '/osm/api/runs?status=completed')).json().pagination.total).toBe(0);
    const page = (await get(idle, '/osm/api/runs?offset=1&limit=2')).json();
    expect(page.data.map((r: { id: number }) => r.id)).toEqual(ids.slice(1, 3));
    expect(page.pagination).toEqual({ total: body.pagination.total, offset: 1, limit: 2 });
    for (const qs of ['status=done', 'limit=x', 'offset=-3']) expect((await get(idle, `/osm/api/runs?${qs}`)).statusCode, qs).toBe(400);
  });

  it('gets one run by numeric id or uuid; 404 otherwise', async () => {
    const first = (await get(idle, '/osm/api/runs?limit=1')).json().data[0];
    const byId = await get(idle, `/osm/api/runs/${first.id}`);
    expect(byId.statusCode).toBe(200);
    // The detail adds the running step(s) to the list's fields.
    const detail = { ...first, current_step: '', running_steps: [], worker: '', attempts: [] };
    expect(byId.json()).toEqual({ data: detail });
    expect((await get(idle, `/osm/api/runs/${first.run_uuid}`)).json()).toEqual({ data: detail });
    for (const id of ['999999', '00000000-0000-4000-8000-000000000000']) {
      const res = await get(idle, `/osm/api/runs/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: true, message: 'Run not found' });
    }
    for (const sub of ['steps', 'artifacts']) {
      const res = await get(idle, `/osm/api/runs/999999/${sub}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: true, message: 'Run not found' });
    }
  });
});

describe('running, steps, artifacts (with the queue)', () => {
  it('executes a queued run; steps listed in order with UUID ids; include_steps/include_artifacts', async () => {
    const created = (await post(live, '/osm/api/runs', { module: 'quick', target: 'example.com' })).json();
    const done = await until(async () => {
      const r = await runOf(live, created.run_uuid);
      return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 'run to finish');
    expect(done).toMatchObject({ status: 'completed', total_steps: 2, completed_steps: 2, current_pid: 0, error_message: '' });
    expect(done.started_at).not.toBeNull();
    expect(done.completed_at).not.toBeNull();
    // The engine registers artifacts after the terminal transition: wait until it has wound down.
    await until(() => !live.queue!.active().some((r) => r.run_uuid === done.run_uuid), 'engine to finish');
    const steps = (await get(live, `/osm/api/runs/${done.id}/steps`)).json().data;
    expect(steps.map((s: { step_name: string }) => s.step_name)).toEqual(['hello', 'bye']);
    expect(Object.keys(steps[0]).sort()).toEqual(STEP_KEYS);
    expect(steps[0]).toMatchObject({ run_id: done.id, step_type: 'bash', status: 'completed', output: 'hello example.com' });
    expect(steps[0].id).toMatch(/^[0-9a-f-]{36}$/);
    const full = (await get(live, `/osm/api/runs/${done.run_uuid}?include_steps=true&include_artifacts=true`)).json().data;
    expect(full.steps).toEqual(steps);
    const artifacts = (await get(live, `/osm/api/runs/${done.run_uuid}/artifacts`)).json().data;
    expect(full.artifacts).toEqual(artifacts);
    expect(artifacts.length).toBeGreaterThan(0);
    expect(Object.keys(artifacts[0]).sort()).toEqual(
      ['artifact_path', 'artifact_type', 'content_type', 'created_at', 'description', 'id', 'line_count', 'name', 'run_id', 'size_bytes', 'workspace'],
    );
    expect(artifacts.every((a: { run_id: number }) => a.run_id === done.id)).toBe(true);
    const plain = (await get(live, `/osm/api/runs/${done.run_uuid}`)).json().data;
    expect(plain.steps).toBeUndefined();
    expect(plain.artifacts).toBeUndefined();
  });

  it('records a failing step and a failed run', async () => {
    const created = (await post(live, '/osm/api/runs', { module: 'broken', target: 'example.com' })).json();
    const done = await until(async () => {
      const r = await runOf(live, created.run_uuid);
      return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 'run to finish');
    expect(done.status).toBe('failed');
    const steps = (await get(live, `/osm/api/runs/${done.id}/steps`)).json().data;
    expect(steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'failed']);
  });

  it('redacts secret-looking params in runs and steps', async () => {
    const secret = 'S3cretValue-42xyz';
    const created = (await post(live, '/osm/api/runs', { module: 'leaky', target: 'example.com', params: { api_token: secret } })).json();
    const done = await until(async () => {
      const r = await runOf(live, created.run_uuid);
      return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 'run to finish');
    expect(done.params).toEqual({ api_token: '[REDACTED]' });
    // The store keeps the real values (the engine needs them); only what is shown is masked.
    expect(JSON.stringify(await live.app.repos.steps.listByRun(done.id))).toContain(secret);
    const stepsText = (await get(live, `/osm/api/runs/${done.id}/steps`)).body;
    expect(stepsText).not.toContain(secret);
    expect(stepsText).toContain('[REDACTED]');
    expect((await get(live, `/osm/api/step-results?run_id=${done.id}`)).body).not.toContain(secret);
    expect((await get(live, `/osm/api/event-logs?run_id=${done.run_uuid}`)).body).not.toContain(secret);
    expect((await get(live, '/osm/api/runs')).body).not.toContain(secret);
  });
});

describe('cancel', () => {
  it('kills a running run through the registry; nothing of it remains; the status stays cancelled', async () => {
    const created = (await post(live, '/osm/api/runs', { module: 'slow', target: 'example.com' })).json();
    const running = await until(async () => {
      const r = await runOf(live, created.run_uuid);
      return r.status === 'running' && r.current_pid > 0 ? r : undefined;
    }, 'sleep to start');
    const pid = running.current_pid as number;
    expect(groupAlive(pid)).toBe(true);
    const res = await live.server.inject({ method: 'DELETE', url: `/osm/api/runs/${running.run_uuid}`, headers: live.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      message: 'Run cancelled successfully', id: running.id, run_uuid: running.run_uuid, killed_pids: [pid], processes_terminated: 1, kill_method: 'registry',
    });
    expect(groupAlive(pid)).toBe(false);
    const after = await runOf(live, running.id);
    expect(after).toMatchObject({ status: 'cancelled', error_message: 'Cancelled by user', current_pid: 0 });
    expect(after.completed_at).not.toBeNull();
    // Once the engine has wound down, the run is still cancelled (terminal statuses are sticky).
    await until(() => !live.queue!.active().some((r) => r.run_uuid === running.run_uuid), 'engine to finish');
    expect((await runOf(live, running.id)).status).toBe('cancelled');
    const events = await live.app.repos.events.list({ run_id: running.run_uuid, topic: 'run.cancelled' }, { offset: 0, limit: 10 });
    expect(events.total).toBe(1);
    expect((await live.app.repos.events.list({ run_id: running.run_uuid, topic: 'run.failed' }, { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('cancels a queued run directly (note, no processes) via POST /cancel', async () => {
    const created = (await post(idle, '/osm/api/runs', { module: 'quick', target: 'queued.example.com' })).json();
    const res = await post(idle, `/osm/api/runs/${created.run_uuid}/cancel`);
    expect(res.statusCode).toBe(200);
    const rec = (await idle.app.repos.runs.getByUuid(created.run_uuid))!;
    expect(res.json()).toEqual({ message: 'Run cancelled successfully', id: rec.id, run_uuid: created.run_uuid, note: 'No active processes found to terminate; database status updated' });
    expect(rec).toMatchObject({ status: 'cancelled', error_message: 'Cancelled by user' });
    const again = await idle.server.inject({ method: 'DELETE', url: `/osm/api/runs/${rec.id}`, headers: idle.auth });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: true, message: "Cannot cancel run with status 'cancelled'" });
    const missing = await idle.server.inject({ method: 'DELETE', url: '/osm/api/runs/987654', headers: idle.auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: true, message: 'Run not found' });
  });

  it('kills the process group recorded in the database for a run executing elsewhere', async () => {
    const store = idle.app.repos;
    const run = await store.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'elsewhere.com', status: 'running' });
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    try {
      await store.runs.update(run.id, { current_pid: pid });
      const res = await idle.server.inject({ method: 'DELETE', url: `/osm/api/runs/${run.id}`, headers: idle.auth });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ killed_pids: [pid], processes_terminated: 1, kill_method: 'database_pid' });
      await until(() => child.exitCode !== null || child.signalCode !== null, 'child reaped');
      expect(groupAlive(pid)).toBe(false);
      expect(await store.runs.get(run.id)).toMatchObject({ status: 'cancelled', current_pid: 0 });
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });

  it('refuses terminal runs', async () => {
    const store = idle.app.repos;
    const run = await store.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'done.com', status: 'running' });
    await store.runs.transition(run.id, 'completed');
    const res = await idle.server.inject({ method: 'DELETE', url: `/osm/api/runs/${run.run_uuid}`, headers: idle.auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: "Cannot cancel run with status 'completed'" });
  });
});

describe('duplicate and start', () => {
  it('duplicates as pending (same workflow, target, params, options, priority; no job)', async () => {
    const created = (await post(idle, '/osm/api/runs', { module: 'quick', target: 'dup.com', params: { a: 'b' }, priority: 'critical', concurrency: 3 })).json();
    const orig = (await idle.app.repos.runs.getByUuid(created.run_uuid))!;
    const res = await post(idle, `/osm/api/runs/${orig.id}/duplicate`);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ message: 'Run duplicated', original_run_id: orig.id, original_run_uuid: orig.run_uuid, new_run_uuid: expect.any(String), run_uuid: body.new_run_uuid, workflow: 'quick', target: 'dup.com', status: 'pending' });
    const copy = (await idle.app.repos.runs.getByUuid(body.new_run_uuid))!;
    expect(copy).toMatchObject({
      status: 'pending', workflow_name: 'quick', target: 'dup.com', params: { a: 'b' }, priority: 'critical', trigger_type: 'api', run_group_id: '', options: orig.options,
    });
    expect(copy.run_uuid).not.toBe(orig.run_uuid);
    expect((await post(idle, '/osm/api/runs/424242/duplicate')).statusCode).toBe(404);
  });

  it('starts only pending runs; the queue executes them', async () => {
    const created = (await post(live, '/osm/api/runs', { module: 'quick', target: 'start.com' })).json();
    await until(async () => (await runOf(live, created.run_uuid)).status === 'completed', 'original run');
    const dup = (await post(live, `/osm/api/runs/${created.run_uuid}/duplicate`)).json();
    expect((await runOf(live, dup.new_run_uuid)).status).toBe('pending');
    const started = await post(live, `/osm/api/runs/${dup.new_run_uuid}/start`);
    expect(started.statusCode).toBe(202);
    expect(started.json()).toEqual({ message: 'Run started', run_uuid: dup.new_run_uuid, status: expect.stringMatching(/^(queued|running)$/) });
    const done = await until(async () => {
      const r = await runOf(live, dup.new_run_uuid);
      return r.status === 'completed' ? r : undefined;
    }, 'started run to complete');
    expect(done.trigger_type).toBe('api');
    const again = await post(live, `/osm/api/runs/${dup.new_run_uuid}/start`);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ error: true, message: "Cannot start run with status 'completed'. Only runs with 'pending' status can be started." });
    expect((await post(live, '/osm/api/runs/424242/start')).json()).toEqual({ error: true, message: 'Run not found' });
  });
});

describe('priority order', () => {
  it('with a global limit of 1, queued runs start critical > high > normal > low, then FIFO', async () => {
    const t = await makeTestServer({ workflowFolder: wfDir, withQueue: true, limit: 1 });
    try {
      const blocker = (await post(t, '/osm/api/runs', { module: 'slow', target: 'block.com' })).json();
      await until(async () => (await runOf(t, blocker.run_uuid)).status === 'running', 'blocker running');
      const order = ['low', 'normal', 'critical', 'high', 'normal'].map((p, i) => ({ p, i }));
      const uuids: Record<number, string> = {};
      for (const { p, i } of order) uuids[i] = (await post(t, '/osm/api/runs', { module: 'quick', target: `p${i}.com`, priority: p })).json().run_uuid;
      await post(t, `/osm/api/runs/${blocker.run_uuid}/cancel`);
      await until(async () => {
        const all = await Promise.all(Object.values(uuids).map((u) => runOf(t, u)));
        return all.every((r) => r.status === 'completed');
      }, 'all runs');
      // run.started events are written in start order (ids are monotonic).
      const started = (await t.app.repos.events.list({ topic: 'run.started' }, { offset: 0, limit: 100 })).data.sort((a, b) => a.id - b.id).map((e) => e.run_id);
      const index = Object.fromEntries(Object.entries(uuids).map(([i, u]) => [u, Number(i)]));
      expect(started.filter((u) => u in index).map((u) => index[u])).toEqual([2, 3, 1, 4, 0]);
    } finally {
      await t.close();
    }
  });
});
