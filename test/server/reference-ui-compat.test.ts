/**
 * The API differences that broke the reference's own web UI, and the rough edges a new user hit:
 * step-results filtered by run_uuid, duplicate answering run_uuid, the running step in run and job
 * detail, artifact paths accepted back, and a snapshot of an existing workspace refused with 409.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });
const post = (url: string, payload?: object) => t.server.inject({ method: 'POST', url, headers: t.auth, ...(payload ? { payload } : {}) });

async function until<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function runToEnd(uuid: string): Promise<{ status: string; id: number }> {
  return until(async () => {
    const r = (await get(`/osm/api/runs/${uuid}`)).json().data;
    return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  }, `run ${uuid}`);
}

beforeAll(async () => {
  t = await makeTestServer({ withQueue: true });
  const modules = path.join(t.app.settings().paths.workflows, 'modules');
  fs.writeFileSync(path.join(modules, 'slow-two.yaml'), 'kind: module\nname: slow-two\nsteps:\n  - name: first\n    type: bash\n    command: echo one\n  - name: waiting\n    type: bash\n    command: sleep 30\n');
});
afterAll(async () => {
  await t.close();
});

describe('the reference web UI client', () => {
  it('GET /step-results?run_uuid= returns only that run\'s steps', async () => {
    const a = (await post('/osm/api/runs', { module: 'sample-recon', target: 'a.example.com' })).json();
    const b = (await post('/osm/api/runs', { module: 'sample-recon', target: 'b.example.com' })).json();
    await runToEnd(a.run_uuid);
    const runB = await runToEnd(b.run_uuid);
    const all = (await get('/osm/api/step-results?limit=1000')).json();
    const onlyB = (await get(`/osm/api/step-results?run_uuid=${b.run_uuid}&limit=1000`)).json();
    expect(onlyB.pagination.total).toBeGreaterThan(0);
    expect(onlyB.pagination.total).toBeLessThan(all.pagination.total);
    expect(onlyB.data.every((s: { run_id: number }) => s.run_id === runB.id)).toBe(true);
    expect((await get('/osm/api/step-results?run_uuid=00000000-0000-0000-0000-000000000000')).json().pagination.total).toBe(0);
  });

  it('POST /runs/{id}/duplicate answers the reference fields with the spec ones', async () => {
    const a = (await post('/osm/api/runs', { module: 'sample-recon', target: 'dup.example.com' })).json();
    const run = await runToEnd(a.run_uuid);
    const res = await post(`/osm/api/runs/${a.run_uuid}/duplicate`);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      message: 'Run duplicated',
      original_run_id: run.id,
      original_run_uuid: a.run_uuid,
      new_run_uuid: expect.any(String),
      run_uuid: res.json().new_run_uuid,
      workflow: 'sample-recon',
      target: 'dup.example.com',
      status: 'pending',
    });
  });
});

describe('rough edges', () => {
  it('run and job detail say which step is running and how many are done', async () => {
    const created = (await post('/osm/api/runs', { module: 'slow-two', target: 'slow.example.com' })).json();
    const detail = await until(async () => {
      const d = (await get(`/osm/api/runs/${created.run_uuid}`)).json().data;
      return d.current_step === 'waiting' ? d : undefined;
    }, 'the second step to run');
    expect(detail).toMatchObject({ status: 'running', completed_steps: 1, total_steps: 2, running_steps: ['waiting'] });
    const job = (await get(`/osm/api/jobs/${created.job_id}`)).json();
    expect(job.runs[0]).toMatchObject({ run_uuid: created.run_uuid, status: 'running', current_step: 'waiting', completed_steps: 1, total_steps: 2 });
    await t.server.inject({ method: 'DELETE', url: `/osm/api/runs/${created.run_uuid}`, headers: t.auth });
    const done = await runToEnd(created.run_uuid);
    expect(done.status).toBe('cancelled');
    expect((await get(`/osm/api/runs/${created.run_uuid}`)).json().data.current_step).toBe('');
  });

  it('an artifact_path handed out by /runs/{id}/artifacts is accepted back by /artifacts/{workspace}', async () => {
    const a = (await post('/osm/api/runs', { module: 'sample-recon', target: 'art.example.com' })).json();
    expect((await runToEnd(a.run_uuid)).status).toBe('completed');
    const artifacts = (await get(`/osm/api/runs/${a.run_uuid}/artifacts`)).json().data as { artifact_path: string; workspace: string; name: string }[];
    const file = artifacts.find((x) => path.isAbsolute(x.artifact_path) && fs.existsSync(x.artifact_path) && fs.statSync(x.artifact_path).isFile());
    expect(file, JSON.stringify(artifacts)).toBeDefined();
    const res = await get(`/osm/api/artifacts/${file!.workspace}?artifact_path=${encodeURIComponent(file!.artifact_path)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe(fs.readFileSync(file!.artifact_path, 'utf8'));
    // An absolute path outside the workspace is still refused.
    for (const outside of ['/etc/passwd', path.join(t.base, 'osm-settings.yaml'), `${path.dirname(file!.artifact_path)}/../../other.example.com/x`]) {
      const bad = await get(`/osm/api/artifacts/${file!.workspace}?artifact_path=${encodeURIComponent(outside)}`);
      expect(bad.statusCode, outside).toBeGreaterThanOrEqual(400);
      expect(bad.statusCode, outside).toBeLessThan(500);
      expect(bad.body).not.toContain('auth_api_key');
    }
  });
});
