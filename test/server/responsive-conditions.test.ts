/**
 * Conditions (pre_condition, decision conditions) run in script evaluator processes like function
 * steps: a hostile one never blocks the daemon, and cancelling the run kills it together with the
 * commands it started.
 */
import fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { processAlive } from '../helpers/cli.js';

const { dir, cleanup } = tempDir('osm-respcond-');
let t: TestServer;
const js = (s: string) => JSON.stringify(s);
const marker = (name: string) => join(dir, name);

beforeAll(async () => {
  const wf = join(dir, 'wf');
  fs.mkdirSync(wf, { recursive: true });
  const hangingCommand = `sh -c 'echo $$ > ${marker('pre.pid')}; exec sleep 60'; echo after`;
  const pre = `write_file(${js(marker('pre-started'))}, "x"); exec_cmd(${js(hangingCommand)}); true`;
  fs.writeFileSync(
    join(wf, 'hang-pre.yaml'),
    `kind: module\nname: hang-pre\nsteps:\n  - name: guarded\n    type: bash\n    command: echo hi\n    pre_condition: ${js(pre)}\n`,
  );
  const decisionCommand = `sh -c 'echo $$ > ${marker('decision.pid')}; exec sleep 60'; echo after`;
  const cond = `write_file(${js(marker('decision-started'))}, "x"); exec_cmd(${js(decisionCommand)}); while (true) {}`;
  fs.writeFileSync(
    join(wf, 'hang-decision.yaml'),
    `kind: module\nname: hang-decision\nsteps:\n  - name: first\n    type: bash\n    command: echo hi\n    decision:\n      conditions:\n        - if: ${js(cond)}\n          goto: _end\n  - name: second\n    type: bash\n    command: echo there\n`,
  );
  t = await makeTestServer({ withQueue: true, workflowFolder: wf });
});
afterAll(async () => {
  await t.close();
  cleanup();
});

async function until(cond: () => boolean, what: string, boundMs = 60_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}


const statusOf = async (uuid: string) => (await t.app.repos.runs.getByUuid(uuid))!.status;

async function start(module: string): Promise<string> {
  const res = await t.server.inject({ method: 'POST', url: '/osm/api/runs', headers: t.auth, payload: { module, target: 'example.com' } });
  expect(res.statusCode).toBe(202);
  return res.json().run_uuid as string;
}

describe('hostile conditions', () => {
  it('a pre_condition stuck in exec_cmd does not block the daemon; cancelling the run kills the command', async () => {
    const uuid = await start('hang-pre');
    const pidFile = marker('pre.pid');
    await until(() => fs.existsSync(marker('pre-started')) && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the pre_condition to start');
    const health = await t.server.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(await statusOf(uuid)).toBe('running');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    expect(processAlive(pid)).toBe(true);
    expect((await t.server.inject({ method: 'DELETE', url: `/osm/api/runs/${uuid}`, headers: t.auth })).statusCode).toBe(200);
    await until(() => !processAlive(pid), `the pre_condition's command ${pid} to be killed`, 15_000);
    await until(() => !t.queue!.active().some((r) => r.run_uuid === uuid), 'the engine to finish');
    expect(await statusOf(uuid)).toBe('cancelled');
  }, 90_000);

  it('a decision condition stuck in exec_cmd and then in an endless loop does not block the daemon; cancelling kills it', async () => {
    const uuid = await start('hang-decision');
    const pidFile = marker('decision.pid');
    await until(() => fs.existsSync(marker('decision-started')) && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the decision condition to start');
    const health = await t.server.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(await statusOf(uuid)).toBe('running');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    expect((await t.server.inject({ method: 'DELETE', url: `/osm/api/runs/${uuid}`, headers: t.auth })).statusCode).toBe(200);
    await until(() => !processAlive(pid), `the decision condition's command ${pid} to be killed`, 15_000);
    await until(() => !t.queue!.active().some((r) => r.run_uuid === uuid), 'the engine to finish');
    expect(await statusOf(uuid)).toBe('cancelled');
  }, 90_000);
});
