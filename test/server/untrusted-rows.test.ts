/**
 * Untrusted data never becomes work: a run row is not trusted because it is stored. Rows restored
 * from a snapshot archive, rows any client could have inserted, and the params of every request
 * are checked before they reach the engine — the workflow is the installed one of the run's name
 * (never a file the row names), options go through an allowlist, and params cannot set built-ins.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { buildZip } from '../unit/snapshot/zip-builder.js';
import { runTask } from '../../src/distributed/task-runner.js';
import { PROTOCOL_VERSION, type TaskData } from '../../src/distributed/protocol.js';
import { registerWebhookRuns } from '../../src/services/webhook-runs.js';
import type { RunRecord } from '../../src/store/index.js';

let wfDir: string;
let attacker: string;
let elsewhere: string;
let t: TestServer;

beforeAll(async () => {
  wfDir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-wf-'));
  attacker = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-attacker-'));
  elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-elsewhere-'));
  fs.mkdirSync(path.join(wfDir, 'modules'));
  fs.writeFileSync(path.join(wfDir, 'modules', 'quick.yaml'), 'kind: module\nname: quick\nsteps:\n  - name: hello\n    type: bash\n    command: echo "hello {{Target}}"\n');
  t = await makeTestServer({ workflowFolder: wfDir, withQueue: true });
});
afterAll(async () => {
  await t.close();
  for (const d of [wfDir, attacker, elsewhere]) fs.rmSync(d, { recursive: true, force: true });
});

/** A workflow file outside the workflows folder that leaves `marker` behind when it runs. */
function attackerWorkflow(name: string, marker: string): string {
  const file = path.join(attacker, `${name}-${randomUUID().slice(0, 8)}.yaml`);
  fs.writeFileSync(file, `kind: module\nname: ${name}\nsteps:\n  - name: pwn\n    type: bash\n    command: touch ${marker}\n`);
  return file;
}

const marker = (name: string) => path.join(attacker, `${name}-${randomUUID().slice(0, 8)}.marker`);

/** A runs.jsonl row as an export writes it (columns as stored: JSON columns are text). */
function runRow(id: number, fields: Record<string, unknown>): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id, run_uuid: randomUUID(), workflow_name: 'quick', workflow_kind: 'module', target: 'smuggle.example', params: '{}', status: 'completed',
    workspace: 'smuggle.example', started_at: null, completed_at: null, error_message: '', schedule_id: '', trigger_type: 'api', trigger_name: '',
    run_group_id: '', priority: 'normal', priority_rank: 2, run_mode: 'local', total_steps: 1, completed_steps: 0, current_pid: 0, hooks_enabled: 0,
    timeout_seconds: 0, runner_type: 'host', owner_pid: 0, created_at: now, updated_at: now, ...fields,
  };
}

/** Imports a crafted snapshot of workspace `ws` whose database carries `runs`. */
async function importRuns(ws: string, runs: Record<string, unknown>[]) {
  const zip = buildZip([
    { name: `${ws}/notes.txt`, data: Buffer.from('hello\n') },
    { name: `${ws}/.osm-db/runs.jsonl`, data: Buffer.from(`${runs.map((r) => JSON.stringify({ ...r, workspace: ws })).join('\n')}\n`) },
  ]);
  const boundary = '----osmuntrusted';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${ws}_1767225600.zip"\r\nContent-Type: application/zip\r\n\r\n`),
    zip,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await t.server.inject({ method: 'POST', url: '/osm/api/snapshots/import', payload, headers: { ...t.auth, 'content-type': `multipart/form-data; boundary=${boundary}` } });
  expect(res.statusCode, res.body).toBe(200);
  return (await t.app.repos.runs.list({ workspace: ws }, { offset: 0, limit: 100 })).data;
}

const post = (url: string, payload?: object) => t.server.inject({ method: 'POST', url, headers: t.auth, ...(payload ? { payload } : {}) });

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const finished = (uuid: string) =>
  until(async () => {
    const r = await t.app.repos.runs.getByUuid(uuid);
    return r && ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  }, `run ${uuid} to finish`);

/** A row inserted as any client could have written it. */
async function insertRun(fields: Partial<Parameters<TestServer['app']['repos']['runs']['create']>[0]>, finalStatus?: 'failed' | 'cancelled'): Promise<RunRecord> {
  const run = await t.app.repos.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'row.example', status: 'pending', workspace: 'row.example', ...fields });
  if (finalStatus) await t.app.repos.runs.transition(run.id, finalStatus, { error_message: 'earlier failure' });
  return (await t.app.repos.runs.get(run.id))!;
}

describe('a snapshot cannot smuggle work', () => {
  it('imported runs keep display fields only: options dropped, unfinished runs closed, nothing queued', async () => {
    const m1 = marker('queued');
    const m2 = marker('running');
    const runs = await importRuns('smuggle-a.example', [
      runRow(1, { status: 'queued', options: JSON.stringify({ workflow_path: attackerWorkflow('quick', m1), workspacesOverride: '/', skipValidation: true, junk: 1 }) }),
      runRow(2, { status: 'running', workflow_name: 'evil', options: JSON.stringify({ workflow_path: attackerWorkflow('evil', m2) }), current_pid: 1, owner_pid: 1 }),
    ]);
    expect(runs).toHaveLength(2);
    for (const r of runs) {
      expect(['completed', 'failed', 'cancelled']).toContain(r.status);
      expect(r.options).toEqual({});
      expect(r.owner_pid).toBe(0);
      expect(r.current_pid).toBe(0);
    }
    expect(runs.map((r) => r.target)).toEqual(['smuggle.example', 'smuggle.example']); // display fields stay
    t.queue!.kick();
    expect((await t.app.repos.runs.list({ workspace: 'smuggle-a.example', status: 'queued' }, { offset: 0, limit: 10 })).total).toBe(0);
    expect(fs.existsSync(m1) || fs.existsSync(m2)).toBe(false);
  });

  it('resuming an imported run executes the installed workflow of its name, never the file its row named', async () => {
    const m = marker('resume');
    const [imported] = await importRuns('smuggle-b.example', [
      runRow(1, { status: 'failed', options: JSON.stringify({ workflow_path: attackerWorkflow('quick', m), workspacesOverride: elsewhere }) }),
    ]);
    const res = await post(`/osm/api/runs/${imported!.run_uuid}/resume`);
    expect(res.statusCode, res.body).toBe(202);
    const done = await finished(res.json().run_uuid);
    expect(done.status).toBe('completed');
    expect(fs.existsSync(m)).toBe(false);
    expect((await t.app.repos.steps.listByRun(done.id)).map((s) => s.step_name)).toEqual(['hello']);
    expect(done.options).not.toHaveProperty('workspacesOverride');
    expect(done.options.workflow_path).toBe(path.join(wfDir, 'modules', 'quick.yaml'));
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('a run whose workflow is not installed cannot be duplicated or resumed (404), and nothing runs', async () => {
    const m = marker('evil');
    const [imported] = await importRuns('smuggle-c.example', [
      runRow(1, { status: 'cancelled', workflow_name: 'evil', options: JSON.stringify({ workflow_path: attackerWorkflow('evil', m) }) }),
    ]);
    const message = 'Workflow "evil" is not in the workflows folder';
    const dup = await post(`/osm/api/runs/${imported!.run_uuid}/duplicate`);
    expect(dup.statusCode).toBe(404);
    expect(dup.json()).toEqual({ error: true, message });
    const resumed = await post(`/osm/api/runs/${imported!.run_uuid}/resume`);
    expect(resumed.statusCode).toBe(404);
    expect(resumed.json()).toEqual({ error: true, message });
    await new Promise((r) => setTimeout(r, 300));
    expect(fs.existsSync(m)).toBe(false);
    expect((await t.app.repos.runs.list({ workflow_name: 'evil', workspace: 'smuggle-c.example' }, { offset: 0, limit: 10 })).total).toBe(1);
  });
});

describe('stored rows are checked again before they become work', () => {
  it('resume and duplicate of a row with a hostile target or params answer 400', async () => {
    const shell = await insertRun({ target: 'a.example;touch /tmp/osm-pwned' }, 'failed');
    for (const action of ['resume', 'duplicate']) {
      const res = await post(`/osm/api/runs/${shell.run_uuid}/${action}`);
      expect(res.statusCode, action).toBe(400);
      expect(res.json().message).toMatch(/forbidden character ";"/);
    }
    const reserved = await insertRun({ params: { Output: '/etc' } }, 'cancelled');
    const res = await post(`/osm/api/runs/${reserved.run_uuid}/resume`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'params.Output is a reserved variable name and cannot be set' });
    const subst = await insertRun({ params: { note: '$(id)' } }, 'failed');
    expect((await post(`/osm/api/runs/${subst.run_uuid}/duplicate`)).statusCode).toBe(400);
    // Nothing was created from them.
    expect((await t.app.repos.runs.list({ target: 'row.example' }, { offset: 0, limit: 10 })).total).toBe(2);
  });

  it('start refuses a pending row with a hostile target; the row stays pending', async () => {
    const run = await insertRun({ target: 'b.example`id`' });
    const res = await post(`/osm/api/runs/${run.run_uuid}/start`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/forbidden character "`"/);
    expect((await t.app.repos.runs.get(run.id))!.status).toBe('pending');
  });

  it('the queue fails a queued row that names a file outside the workflows folder or carries a hostile target; nothing of it runs', async () => {
    const m1 = marker('queue-path');
    const byPath = await insertRun({ workflow_name: 'evil', status: 'queued', options: { workflow_path: attackerWorkflow('evil', m1) } });
    t.queue!.kick();
    const a = await finished(byPath.run_uuid);
    expect(a.status).toBe('failed');
    expect(a.error_message).toBe('failed to load workflow: Workflow "evil" is not in the workflows folder');
    const m2 = marker('queue-target');
    const byTarget = await insertRun({ status: 'queued', target: `c.example$(touch${'${IFS}'}${m2})` });
    t.queue!.kick();
    const b = await finished(byTarget.run_uuid);
    expect(b.status).toBe('failed');
    expect(b.error_message).toMatch(/^refusing to execute: target .* contains forbidden character "\$"$/);
    expect(await t.app.repos.steps.listByRun(b.id)).toEqual([]);
    expect(fs.existsSync(m1) || fs.existsSync(m2)).toBe(false);
  });
});

describe('params cannot set built-in variables', () => {
  it('POST /runs answers 400 naming the reserved param (case-sensitive); threads stays overridable', async () => {
    for (const name of ['Output', 'Target', 'target', 'Workspaces', 'TargetSpace', 'BaseFolder']) {
      const res = await post('/osm/api/runs', { module: 'quick', target: 'p.example', params: { [name]: 'x' } });
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toEqual({ error: true, message: `params.${name} is a reserved variable name and cannot be set` });
    }
    expect((await post('/osm/api/runs', { module: 'quick', target: 'p.example', params: { threads: '5', output: 'json' } })).statusCode).toBe(202);
  });

  it('schedules refuse them when created', async () => {
    const res = await post('/osm/api/schedules', { name: 'reserved', workflow_name: 'quick', trigger_type: 'manual', target: 's.example', params: { Workspace: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'params.Workspace is a reserved variable name and cannot be set' });
  });

  it('webhook templates and distributed tasks refuse them too', async () => {
    await expect(registerWebhookRuns(t.app, { workflows: ['quick'], targets: ['w.example'], params: { Output: '/' } })).rejects.toThrow('params.Output is a reserved variable name and cannot be set');
    const task: TaskData = {
      v: PROTOCOL_VERSION, run_uuid: randomUUID(), workflow_name: 'quick', workflow_kind: 'module', target: 'd.example', params: { Workspaces: '/' },
      priority: 'normal', workspace: '', options: {}, submitted_at: new Date().toISOString(), requires: { tools: [], labels: [] }, store_id: '',
    };
    await expect(runTask(t.app, task, { workerId: 'w1', hostname: 'h' })).rejects.toThrow('params.Workspaces is a reserved variable name and cannot be set');
    expect(await t.app.repos.runs.getByUuid(task.run_uuid)).toBeUndefined();
  });
});

describe('POST /runs fields that reach engine flags', () => {
  it('a timeout beyond what the engine timer can hold is a 400 (it would fire at once)', async () => {
    const res = await post('/osm/api/runs', { module: 'quick', target: 'x.example', timeout: 100_000 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: true, message: 'timeout must be at most 35791 minutes' });
  });
});
