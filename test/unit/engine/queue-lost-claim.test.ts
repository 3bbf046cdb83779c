/**
 * The queue's claim is one conditional UPDATE. On PostgreSQL, when the connection is cut after the
 * server applied it and before its answer arrived, the claim throws although the runs are now
 * `running` and this daemon's. Those runs must not stay `running` forever: the next pass reads
 * them back and launches the ones the database says this daemon claimed. (Found with a proxy
 * cutting every connection every 150 ms under a daemon: 1–3 runs of 16 were left running.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../../helpers/server.js';
import { tempDir } from '../../helpers/tmp.js';

describe('a queue claim whose answer was lost', () => {
  const tmp = tempDir('osm-lostclaim-');
  let t: TestServer;
  beforeAll(async () => {
    const wfDir = path.join(tmp.dir, 'wf');
    fs.mkdirSync(wfDir, { recursive: true });
    fs.writeFileSync(path.join(wfDir, 'quick.yaml'), 'kind: module\nname: quick\nsteps:\n  - name: ok\n    type: bash\n    command: echo ok\n');
    t = await makeTestServer({ withQueue: true, workflowFolder: wfDir, limit: 4 });
  });
  afterAll(async () => {
    await t?.close();
    tmp.cleanup();
  });

  it('applied but unanswered: the runs it claimed are launched on the next pass and complete', async () => {
    const runs = t.app.repos.runs;
    const claim = runs.claim.bind(runs);
    let lost = 0;
    // The first claim is applied, then its answer is lost as a cut connection loses it.
    runs.claim = async (ids, ownerPid) => {
      const claimed = await claim(ids, ownerPid);
      if (lost++ === 0) throw Object.assign(new Error('Connection terminated unexpectedly'), { claimed: claimed.length });
      return claimed;
    };
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', targets: ['a.example.com', 'b.example.com'], concurrency: 2 } });
    expect(res.statusCode, res.body).toBe(202);
    const all = async () => (await runs.list({ workflow_name: 'quick' }, { offset: 0, limit: 10 })).data;
    const end = Date.now() + 60_000;
    while (!(await all()).every((r) => ['completed', 'failed', 'cancelled'].includes(r.status)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const rows = await all();
    expect(lost).toBeGreaterThan(0);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.status)).toEqual(['completed', 'completed']);
    for (const r of rows) expect((await t.app.repos.steps.listByRun(r.id)).map((s) => s.status)).toEqual(['completed']);
  }, 90_000);

  it('a one-statement claim (list and claim together) applied but unanswered: its runs are launched on the next pass', async () => {
    const runs = t.app.repos.runs;
    const claimQueued = runs.claimQueued.bind(runs);
    let lost = 0;
    let quick = 0;
    // The first one-statement claim that claims a run is applied, then its answer is lost.
    runs.claimQueued = async (o) => {
      const claimed = await claimQueued(o);
      quick += claimed.length;
      if (claimed.length > 0 && lost === 0) {
        lost++;
        throw new Error('Connection terminated unexpectedly');
      }
      return claimed;
    };
    // One job, one run at a time: the first run is planned (the job's limit learnt), the next ones are claimed in one statement.
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'quick', targets: ['c.example.com', 'd.example.com', 'e.example.com'], concurrency: 1 } });
    expect(res.statusCode, res.body).toBe(202);
    const jobRuns = async () => (await runs.byGroup(res.json().job_id));
    const end = Date.now() + 60_000;
    while (!(await jobRuns()).every((r) => ['completed', 'failed', 'cancelled'].includes(r.status)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const rows = await jobRuns();
    expect(lost).toBe(1);
    expect(quick).toBeGreaterThanOrEqual(2);
    expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    for (const r of rows) expect((await t.app.repos.steps.listByRun(r.id)).map((s) => s.status)).toEqual(['completed']);
  }, 90_000);
});
