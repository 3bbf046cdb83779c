import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { finalJson, processesWith, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

// foreach items of a host bash step run in shell lanes (src/engine/steps/lanes.ts). These tests
// hold lanes to what a fresh `bash -c` per item gives (OSM_FOREACH_LANES=0 turns lanes off).
const FIX = join(ROOT, 'test/fixtures/engine');
let base: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-lanes-'));
});
afterAll(() => cleanup());

function osm(args: string[], opts: Parameters<typeof runOsm>[1] = {}) {
  return runOsm(['-b', base, '-F', FIX, ...args], opts);
}

function stepRow(runUuid: string, step: string): { output: string; status: string; log_file: string; error_message: string } {
  const d = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
  try {
    return d
      .prepare('SELECT s.output, s.status, s.log_file, s.error_message FROM step_results s JOIN runs r ON r.id = s.run_id WHERE r.run_uuid = ? AND s.step_name = ?')
      .get(runUuid, step) as { output: string; status: string; log_file: string; error_message: string };
  } finally {
    d.close();
  }
}


describe('foreach shell lanes', () => {
  it('give each item what a fresh bash -c gives: no state leaks between items, stdin empty, env set', async () => {
    const outputs: Record<string, string> = {};
    for (const lanes of ['1', '0']) {
      const r = await osm(['run', '-m', 'foreach-lanes', '-t', 'lanes.example.com', '-q', '--json'], { env: { OSM_FOREACH_LANES: lanes } });
      expect(r.code, r.stderr).toBe(0);
      const run = finalJson(r.stdout);
      outputs[lanes] = stepRow(run.run_uuid, 'semantics').output;
      expect(stepRow(run.run_uuid, 'fanned').output).toBe('fan-a\nfan-b\nfan-c\nfan-d');
    }
    const cwd = ROOT.split('/').pop();
    expect(outputs['1']).toBe(
      ['a', 'b', 'c', 'd'].map((x) => `out-${x} lane=[unset] prev=[] dir=${cwd} stdin=0 target=lanes.example.com args=0 bg=[]\nerr-${x}`).join('\n'),
    );
    expect(outputs['1']).toBe(outputs['0']);
  });

  it('a failing item fails the step, names the item, and every other item still runs', async () => {
    const r = await osm(['run', '-m', 'foreach-lanes', '-t', 'lanes.example.com', '-p', 'failon=c', '-q', '--json']);
    expect(r.code).toBe(1);
    const run = finalJson(r.stdout);
    const row = stepRow(run.run_uuid, 'fanned');
    expect(row.status).toBe('failed');
    expect(row.error_message).toContain('command exited with code 1');
    expect(row.error_message).toContain('failed on input: c');
    expect(row.output).toContain('fan-a');
    expect(row.output).toContain('fan-d');
  });

  it('large item output is capped in memory but complete in the step log', async () => {
    const big = 6 * 1024 * 1024;
    const r = await osm(['run', '-m', 'foreach-lanes', '-t', 'lanes.example.com', '-p', `big=${big}`, '-q', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const row = stepRow(finalJson(r.stdout).run_uuid, 'fanned');
    expect(statSync(row.log_file).size).toBeGreaterThanOrEqual(big);
  });

  it('Ctrl-C kills every lane and the processes its items started', async () => {
    const marker = `osm-lane-sleep-${process.pid}-${Date.now()}`;
    let child: { kill: (s: NodeJS.Signals) => boolean } | undefined;
    const done = osm(['run', '-m', 'foreach-lanes-sleep', '-t', 'sleep.example.com', '-p', `marker=${marker}`], { onSpawn: (c) => (child = c) });
    const until = Date.now() + 20_000;
    const items = `${marker}-`; // the item processes (the osm process itself has `marker=…`)
    while (processesWith(items).length < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(items).length).toBe(4); // parallel: 4
    child!.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    const gone = Date.now() + 5000;
    while (processesWith(marker).length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(marker)).toEqual([]);
  });

  it('when the engine is killed with SIGKILL, the lanes kill what their items started', async () => {
    const marker = `osm-lane-orphan-${process.pid}-${Date.now()}`;
    let child: { kill: (s: NodeJS.Signals) => boolean } | undefined;
    const done = osm(['run', '-m', 'foreach-lanes-sleep', '-t', 'orphan.example.com', '-p', `marker=${marker}`], { onSpawn: (c) => (child = c) });
    const items = `${marker}-`;
    const until = Date.now() + 20_000;
    while (processesWith(items).length < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(items).length).toBe(4);
    child!.kill('SIGKILL');
    await done;
    const gone = Date.now() + 10_000;
    while (processesWith(items).length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(items)).toEqual([]);
  });

  it('exports.streaming_output writes every item output to the file and names it as the step output', async () => {
    const r = await osm(['run', '-m', 'foreach-stream', '-t', 'stream.example.com', '-q', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = finalJson(r.stdout);
    expect(stepRow(run.run_uuid, 'streamed').output).toMatch(/^Results streamed to: .*\/stream\/results\.txt$/);
    expect(stepRow(run.run_uuid, 'after').output).toBe('out-s1 out-s2 out-s3 out-s4 out-s5');
  });
});
