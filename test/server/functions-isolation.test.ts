/**
 * /functions/eval and /functions/execute run user code off the daemon's event loop, in a process
 * group that is killed at the time limit, with a bounded number of evaluations at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { processAlive } from '../helpers/cli.js';

let t: TestServer;
let tmp: { dir: string; cleanup: () => void };
const savedTimeout = process.env.OSM_EVAL_TIMEOUT_MS;

beforeEach(async () => {
  // A short API evaluation limit (the test hook); the default is 10 s.
  process.env.OSM_EVAL_TIMEOUT_MS = '4000';
  t = await makeTestServer();
  tmp = tempDir('osm-evaliso-');
});
afterEach(async () => {
  if (savedTimeout === undefined) delete process.env.OSM_EVAL_TIMEOUT_MS;
  else process.env.OSM_EVAL_TIMEOUT_MS = savedTimeout;
  await t.close();
  tmp.cleanup();
});

const post = (url: string, payload: unknown) => t.server.inject({ method: 'POST', url, headers: t.auth, payload: payload as object });
const js = (s: string) => JSON.stringify(s);
const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded) until `cond` holds; the bound only keeps a broken build from hanging the suite. */
async function until(cond: () => boolean, what: string, boundMs = 60_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleepMs(25);
  }
}


describe('evaluations never block the daemon', () => {
  it('/health answers while three hostile evaluations run; they end as time-outs, a fourth gets 429, and the exec_cmd child is killed', async () => {
    const started = (i: number) => path.join(tmp.dir, `started-${i}`);
    const pidFile = path.join(tmp.dir, 'sleep.pid');
    // The shell's child outlives a kill of the shell alone: only a kill of the whole group ends it.
    const scripts = [
      `write_file(${js(started(0))}, "x"); while (true) {}`,
      `write_file(${js(started(1))}, "x"); sleep(30)`,
      `write_file(${js(started(2))}, "x"); exec_cmd(${js(`sh -c 'echo $$ > ${pidFile}; exec sleep 30'; echo after`)})`,
    ];
    const settled = [false, false, false];
    const evals = scripts.map((script, i) =>
      post('/osm/api/functions/eval', { script }).then((r) => {
        settled[i] = true;
        return r;
      }),
    );
    await until(() => [0, 1, 2].every((i) => fs.existsSync(started(i))) && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the evaluations to start');

    const health = await t.server.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(settled).toEqual([false, false, false]);

    const extra = await post('/osm/api/functions/eval', { script: '1 + 1' });
    expect(extra.statusCode).toBe(429);
    expect(extra.json()).toEqual({ error: true, message: expect.stringMatching(/too many concurrent evaluations.*server\.max_concurrent_evals/i) });
    expect(Number(extra.headers['retry-after'])).toBeGreaterThan(0);
    const extraExec = await post('/osm/api/functions/execute', { expression: '1 + 1' });
    expect(extraExec.statusCode).toBe(429);
    expect(settled).toEqual([false, false, false]);

    const results = await Promise.all(evals);
    for (const r of results) {
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual({ error: true, message: expect.stringMatching(/^Execution failed: .*timed out/) });
    }
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    expect(pid).toBeGreaterThan(1);
    await until(() => !processAlive(pid), `the exec_cmd child ${pid} to be killed`, 15_000);

    // Slots are free again.
    const after = await post('/osm/api/functions/eval', { script: '1 + 1' });
    expect(after.json()).toEqual({ result: 2, rendered_script: '1 + 1' });
  }, 120_000);

  it('the limit is server.max_concurrent_evals, read live', async () => {
    (t.app.settings().settings.server as { max_concurrent_evals: number }).max_concurrent_evals = 1;
    const marker = path.join(tmp.dir, 'started');
    const busy = post('/osm/api/functions/eval', { script: `write_file(${js(marker)}, "x"); while (true) {}` });
    await until(() => fs.existsSync(marker), 'the evaluation to start');
    const second = await post('/osm/api/functions/execute', { expression: '2' });
    expect(second.statusCode).toBe(429);
    expect(second.json().message).toMatch(/limit 1/);
    expect((await busy).json().message).toMatch(/timed out/);
    expect((await post('/osm/api/functions/execute', { expression: '2' })).json()).toEqual({ data: { result: 2 } });
  }, 60_000);
});

describe('results and escapes', () => {
  it('values that structured clone cannot carry are serialised as before (functions and symbols dropped, BigInt as text)', async () => {
    const r = await post('/osm/api/functions/eval', { script: '({ f: () => 1, s: Symbol("x"), b: 10n, n: 1, list: [1, undefined, () => 2] })' });
    expect(r.json()).toEqual({ result: { b: '10', n: 1, list: [1, null, null] }, rendered_script: expect.any(String) });
    expect((await post('/osm/api/functions/eval', { script: '10n ** 20n' })).json().result).toBe('100000000000000000000');
    expect((await post('/osm/api/functions/eval', { script: 'Symbol("x")' })).json().result).toBeNull();
    expect((await post('/osm/api/functions/eval', { script: '(() => 1)' })).json().result).toBeNull();
    expect((await post('/osm/api/functions/execute', { expression: 'x', context: { x: { a: [1, 'two'] } } })).json()).toEqual({ data: { result: { a: [1, 'two'] } } });
  });

  it('exit(), process, require and the Function constructor do not escape the sandbox; the daemon keeps serving', async () => {
    const marker = path.join(tmp.dir, 'escaped');
    for (const script of [
      'exit()',
      'exit(1)',
      'process.exit(1)',
      `require("fs").writeFileSync(${js(marker)}, "x")`,
      `this.constructor.constructor("return process")().exit(1)`,
      `(function () { return this })().process.exit(1)`,
      `import("fs")`,
    ]) {
      const r = await post('/osm/api/functions/eval', { script });
      expect(r.statusCode, script).toBe(400);
      expect(r.json().message, script).toMatch(/^Execution failed: /);
    }
    expect(fs.existsSync(marker)).toBe(false);
    expect((await t.server.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await post('/osm/api/functions/eval', { script: '"still" + " here"' })).json().result).toBe('still here');
  });

  it('function.eval events still record every evaluation, also time-outs and refusals', async () => {
    await post('/osm/api/functions/eval', { script: 'while (true) {}' });
    const events = (await t.app.repos.events.list({ topic: 'function.eval' }, { offset: 0, limit: 10 })).data;
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data).error).toMatch(/timed out/);
  }, 30_000);
});
