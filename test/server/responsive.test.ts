import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-resp-');
let t: TestServer;

beforeAll(async () => {
  const wf = join(dir, 'wf');
  mkdirSync(wf, { recursive: true });
  writeFileSync(
    join(wf, 'blocking.yaml'),
    'kind: module\nname: blocking\nsteps:\n  - name: nap\n    type: function\n    function: sleep(3); log_info("woke")\n',
  );
  t = await makeTestServer({ withQueue: true, workflowFolder: wf });
});
afterAll(async () => {
  await t.close();
  cleanup();
});

describe('a long synchronous function step', () => {
  it('does not block the daemon: it answers while the step is still running', async () => {
    const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module: 'blocking', target: 'example.com' } });
    expect(res.statusCode).toBe(202);
    const uuid = res.json().run_uuid as string;
    // Wait until the run is executing its step.
    for (let i = 0; i < 100; i++) {
      const s = await t.app.repos.steps.listByRun((await t.app.repos.runs.getByUuid(uuid))!.id);
      if (s.some((x) => x.status === 'running')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const health = await t.server.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    // The step (a 3 s sleep) had not finished when /health answered.
    expect((await t.app.repos.runs.getByUuid(uuid))!.status).toBe('running');
    for (let i = 0; i < 200 && (await t.app.repos.runs.getByUuid(uuid))!.status === 'running'; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await t.app.repos.runs.getByUuid(uuid))!.status).toBe('completed');
  });
});
