import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { jobStatusOf } from '../../src/services/run-control.js';
import type { RunStatus } from '../../src/store/index.js';
import type { AsyncStore } from '../../src/store/async.js';

let t: TestServer;

beforeAll(async () => {
  t = await makeTestServer();
});

afterAll(async () => {
  await t?.close();
});

/** Creates a job whose runs end up in the given statuses (through the allowed transitions). */
async function seedJob(repos: AsyncStore, job: string, statuses: RunStatus[]): Promise<number[]> {
  const ids: number[] = [];
  for (const [i, status] of statuses.entries()) {
    const initial = status === 'pending' || status === 'queued' ? status : 'running';
    const run = await repos.runs.create({ workflow_name: 'quick', workflow_kind: 'module', target: `t${i}.com`, status: initial, run_group_id: job });
    if (initial !== status) await repos.runs.transition(run.id, status, status === 'failed' ? { error_message: 'boom' } : undefined);
    ids.push(run.id);
  }
  return ids;
}

const get = (url: string) => t.server.inject({ method: 'GET', url, headers: t.auth });

describe('GET /osm/api/jobs/{job_id}', () => {
  it('requires authentication', async () => {
    expect((await t.server.inject({ method: 'GET', url: '/osm/api/jobs/abc' })).statusCode).toBe(401);
  });

  it('404 Job not found', async () => {
    const res = await get('/osm/api/jobs/deadbeef');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: true, message: 'Job not found' });
  });

  it('reports counts, the aggregate status and every run (oldest first)', async () => {
    const ids = await seedJob(t.app.repos, 'job00001', ['completed', 'failed', 'running', 'queued', 'pending', 'cancelled']);
    const res = await get('/osm/api/jobs/job00001');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ job_id: 'job00001', total_runs: 6, completed: 1, running: 1, failed: 1, pending: 2, cancelled: 1, status: 'running' });
    expect(Object.keys(body).sort()).toEqual(['cancelled', 'completed', 'failed', 'job_id', 'pending', 'running', 'runs', 'status', 'total_runs']);
    expect(body.runs.map((r: { id: number }) => r.id)).toEqual(ids);
    expect(body.runs[1]).toEqual({ run_uuid: expect.any(String), target: 't1.com', status: 'failed', id: ids[1], error_message: 'boom', completed_steps: 0, total_steps: expect.any(Number), current_step: '' });
  });

  it('a job created by POST /runs is found through its poll_url', async () => {
    const created = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'sample-recon', targets: ['a.com', 'b.com'] } });
    expect(created.statusCode).toBe(202);
    const res = await get(created.json().poll_url);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total_runs: 2, pending: 2, status: 'pending' });
  });

  it('aggregates finished jobs: completed, failed, cancelled, partial', async () => {
    const cases: [string, RunStatus[], string][] = [
      ['jobdone1', ['completed', 'completed'], 'completed'],
      ['jobfail1', ['failed', 'failed'], 'failed'],
      ['jobcanc1', ['cancelled'], 'cancelled'],
      ['jobpart1', ['completed', 'failed'], 'partial'],
      ['jobpart2', ['completed', 'cancelled'], 'partial'],
      ['jobwait1', ['queued', 'pending'], 'pending'],
      ['jobprog1', ['completed', 'queued'], 'running'],
    ];
    for (const [job, statuses, want] of cases) {
      await seedJob(t.app.repos, job, statuses);
      expect((await get(`/osm/api/jobs/${job}`)).json().status, job).toBe(want);
    }
  });
});

describe('jobStatusOf', () => {
  const c = (p: Partial<Record<RunStatus, number>>) => ({ pending: 0, queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0, ...p });
  it('is running whenever something runs', () => {
    expect(jobStatusOf(c({ running: 1, completed: 3 }), 4)).toBe('running');
  });
  it('mixes of failed and cancelled without a success are failed', () => {
    expect(jobStatusOf(c({ failed: 1, cancelled: 1 }), 2)).toBe('failed');
  });
});
