/** The evaluator pools: separate short and long pools, one process per API evaluation, kills on abort. */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiScriptPool, quickScriptPool, scriptPool, ScriptCallError } from '../../../src/engine/scripts/pool.js';
import { tempDir } from '../../helpers/tmp.js';
import { processAlive } from '../../helpers/cli.js';

const tmp = tempDir('osm-pools-');
afterAll(() => tmp.cleanup());

const run = (pool: ReturnType<typeof scriptPool>, script: string, extra: { signal?: AbortSignal; timeoutMs?: number } = {}) =>
  pool!.run({ script, vars: {}, ctx: {}, timeoutMs: extra.timeoutMs ?? 30_000, signal: extra.signal });


async function until(cond: () => boolean, what: string, boundMs = 30_000): Promise<void> {
  const end = Date.now() + boundMs;
  do await new Promise((r) => setTimeout(r, 20));
  while (!cond() && Date.now() < end);
  if (!cond()) throw new Error(`gave up waiting for ${what}`);
}

describe('script pools', () => {
  it('a condition never waits behind long scripts holding every slot of the long pool', async () => {
    const long = scriptPool();
    expect(long).not.toBeNull();
    const stop = new AbortController();
    const marks = [0, 1, 2, 3, 4].map((i) => path.join(tmp.dir, `long-${i}`));
    // More long scripts than the pool has slots (at most 4): every slot is taken.
    const busy = marks.map((m) => run(long, `write_file(${JSON.stringify(m)}, "x"); while (true) {}`, { signal: stop.signal }).catch((e: unknown) => e));
    await until(() => marks.filter((m) => fs.existsSync(m)).length >= 2, 'long scripts to start');
    let longSettled = false;
    void Promise.all(busy).then(() => (longSettled = true));
    expect(await quickScriptPool()!.run({ script: '6 * 7', vars: {}, ctx: {}, timeoutMs: 10_000 })).toBe(42);
    expect(await quickScriptPool()!.run({ script: 'x > 1', vars: { x: 2 }, ctx: {}, timeoutMs: 10_000, mode: 'condition' })).toBe(true);
    expect(longSettled).toBe(false);
    stop.abort();
    for (const r of await Promise.all(busy)) expect((r as ScriptCallError).kind).toBe('aborted');
  }, 60_000);

  it('cancelling kills the evaluator and the commands it started', async () => {
    const pidFile = path.join(tmp.dir, 'cancel.pid');
    const stop = new AbortController();
    const pending = run(scriptPool(), `exec_cmd(${JSON.stringify(`sh -c 'echo $$ > ${pidFile}; exec sleep 60'; echo after`)})`, { signal: stop.signal }).catch((e: unknown) => e);
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '', 'the command to start');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    expect(processAlive(pid)).toBe(true);
    stop.abort();
    expect(((await pending) as ScriptCallError).kind).toBe('aborted');
    await until(() => !processAlive(pid), `command ${pid} to be killed`);
  }, 60_000);

  it('API evaluations get a fresh process each; engine evaluators are reused', async () => {
    const pidOf = async (pool: ReturnType<typeof scriptPool>) => Number(await run(pool, 'exec_cmd("echo $PPID")'));
    const api = [await pidOf(apiScriptPool()), await pidOf(apiScriptPool())];
    expect(api[0]).not.toBe(api[1]);
    await until(() => !processAlive(api[0]!), 'the first API evaluator to be gone');
    const engine = [await pidOf(quickScriptPool()), await pidOf(quickScriptPool())];
    expect(engine[0]).toBe(engine[1]);
  }, 60_000);

  it('a time-out reports itself as such and the next call works', async () => {
    await expect(run(quickScriptPool(), 'while (true) {}', { timeoutMs: 500 })).rejects.toMatchObject({ kind: 'timeout', message: expect.stringMatching(/timed out/) });
    expect(await run(quickScriptPool(), '"after"')).toBe('after');
  }, 30_000);
});
