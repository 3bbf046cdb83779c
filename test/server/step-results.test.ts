import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let runA: { id: number; run_uuid: string };
let runB: { id: number; run_uuid: string };

const KEYS = ['command', 'completed_at', 'created_at', 'duration_ms', 'error_message', 'exports', 'id', 'log_file', 'output', 'run_id', 'started_at', 'status', 'step_name', 'step_type', 'workspace'];

beforeAll(async () => {
  t = await makeTestServer();
  const s = t.app.repos;
  runA = await s.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'a.com', workspace: 'a.com', status: 'running' });
  runB = await s.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: 'b.com', workspace: 'b.com', status: 'running' });
  const step = async (run: { id: number; run_uuid: string }, ws: string, name: string, type: string, final: 'completed' | 'failed' | 'running' | 'skipped') => {
    if (final === 'skipped') return s.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace: ws, step_name: name, step_type: type, status: 'skipped' });
    const st = await s.steps.create({ run_id: run.id, run_uuid: run.run_uuid, workspace: ws, step_name: name, step_type: type, status: 'running', command: `echo ${name}` });
    if (final !== 'running') await s.steps.transition(st.id, final, { output: `out ${name}`, exports: { k: name }, duration_ms: 5 });
    return st;
  };
  await step(runA, 'a.com', 'a1', 'bash', 'completed');
  await step(runA, 'a.com', 'a2', 'function', 'failed');
  await step(runA, 'a.com', 'a3', 'bash', 'skipped');
  await step(runB, 'b.com', 'b1', 'bash', 'completed');
  await step(runB, 'b.com', 'b2', 'bash', 'running');
});

afterAll(async () => {
  await t?.close();
});

const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });
const names = (body: { data: { step_name: string }[] }) => body.data.map((d) => d.step_name);

describe('GET /osm/api/step-results', () => {
  it('requires authentication', async () => {
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/step-results' })).statusCode).toBe(401);
  });

  it('lists newest first with integer ids, workspace and exactly the spec fields', async () => {
    const res = await get('/osm/api/step-results');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toEqual({ total: 5, offset: 0, limit: 20 });
    expect(names(body)).toEqual(['b2', 'b1', 'a3', 'a2', 'a1']);
    expect(Object.keys(body.data[0]).sort()).toEqual(KEYS);
    const b1 = body.data[1];
    expect(b1).toMatchObject({ run_id: runB.id, step_type: 'bash', status: 'completed', command: 'echo b1', output: 'out b1', exports: { k: 'b1' }, duration_ms: 5, workspace: 'b.com' });
    expect(Number.isInteger(b1.id)).toBe(true);
  });

  it('filters by workspace, status, step_type and run_id (numeric id or uuid)', async () => {
    expect(names((await get('/osm/api/step-results?workspace=a.com')).json())).toEqual(['a3', 'a2', 'a1']);
    expect(names((await get('/osm/api/step-results?status=completed')).json())).toEqual(['b1', 'a1']);
    expect(names((await get('/osm/api/step-results?status=skipped')).json())).toEqual(['a3']);
    expect(names((await get('/osm/api/step-results?step_type=function')).json())).toEqual(['a2']);
    expect(names((await get(`/osm/api/step-results?run_id=${runB.id}`)).json())).toEqual(['b2', 'b1']);
    expect(names((await get(`/osm/api/step-results?run_id=${runA.run_uuid}&status=failed`)).json())).toEqual(['a2']);
    const none = (await get('/osm/api/step-results?run_id=nope')).json();
    expect(none).toEqual({ data: [], pagination: { total: 0, offset: 0, limit: 20 } });
  });

  it('paginates with bounds and rejects junk', async () => {
    const page = (await get('/osm/api/step-results?offset=1&limit=2')).json();
    expect(names(page)).toEqual(['b1', 'a3']);
    expect(page.pagination).toEqual({ total: 5, offset: 1, limit: 2 });
    expect((await get('/osm/api/step-results?limit=20000')).json().pagination.limit).toBe(10000);
    expect((await get('/osm/api/step-results?offset=10')).json().data).toEqual([]);
    for (const qs of ['limit=abc', 'offset=-1', 'limit=0', 'status=success']) {
      const res = await get(`/osm/api/step-results?${qs}`);
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().error).toBe(true);
    }
  });
});
