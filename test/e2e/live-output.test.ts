/**
 * Live output of the built CLI: `osm run` shows each line while its step runs (ordering proven by
 * gates the test opens only after a line arrived, never by timing), -q hides it, --json prints
 * documented event lines, `osm logs` reads a run back (local and from a daemon), and
 * `osm run --server` shows the same live output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, finalJson, jsonEvents, ROOT, runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { api, killAllDaemons, startDaemon, stopDaemon, until, type Daemon } from '../helpers/daemon.js';
import { openSse } from '../helpers/sse.js';

const FIX = join(ROOT, 'test/fixtures/live');
let dir: string;
let base: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = tempDir('osm-live-'));
  base = join(dir, 'base');
});
afterAll(async () => {
  await killAllDaemons();
  cleanup();
});

function osm(args: string[], opts: Parameters<typeof runOsm>[1] = {}) {
  return runOsm(['-b', base, '-F', FIX, ...args], opts);
}

/** A CLI process whose stdout is read as it comes. */
class Live {
  readonly child: ChildProcessWithoutNullStreams;
  out = '';
  err = '';
  private waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env } });
    const poke = () => {
      for (const w of this.waiters.splice(0)) w();
    };
    this.child.stdout.on('data', (d) => {
      this.out += d;
      poke();
    });
    this.child.stderr.on('data', (d) => {
      this.err += d;
      poke();
    });
    this.exited = new Promise((resolve) => this.child.on('close', (code) => {
      poke();
      resolve(code);
    }));
    this.child.stdin.end();
  }

  /** Waits until stdout matches (fails when the process exits first). */
  async waitFor(re: RegExp): Promise<RegExpExecArray> {
    for (;;) {
      const m = re.exec(this.out);
      if (m) return m;
      if (this.child.exitCode !== null) throw new Error(`exited before ${re}:\n${this.out}\n${this.err}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 2000);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
}

describe('osm run: live output', () => {
  it('prints a line while its step still runs, then the rest in order', async () => {
    const gate = join(dir, 'run.gate');
    const run = new Live(['-b', base, '-F', FIX, 'run', '-m', 'live-gate', '-t', 'live.example.com', '-p', `gate=${gate}`]);
    await run.waitFor(/^ {2}first-line$/m);
    // The step cannot finish before the gate exists.
    expect(run.out).not.toMatch(/finished in .*\) talk/);
    expect(run.out).toMatch(/\(starting\) talk[\s\S]*\[output\]\n {2}(first-line|err-line)\n/);
    writeFileSync(gate, '');
    expect(await run.exited).toBe(0);
    const out = run.out;
    // Output lines are indented by two spaces (the command line shown at the start contains the same words).
    const at = (re: RegExp) => out.search(re);
    expect(at(/^ {2}first-line$/m)).toBeLessThan(at(/^ {2}second-line$/m));
    expect(at(/^ {2}second-line$/m)).toBeLessThan(at(/finished in .*\) talk/));
    expect(at(/finished in .*\) talk/)).toBeLessThan(at(/^ {2}after-line$/m));
    // Shown once: live, not again as a block when the step ends.
    expect(out.match(/^ {2}second-line$/gm)).toHaveLength(1);
    expect(out).toContain('Status: completed');
    // Output for logs: no escape sequences without a terminal.
    expect(out).not.toContain('\u001b');
  });

  it('-q hides tool output; -v adds the time since the step started', async () => {
    const gate = join(dir, 'q.gate');
    writeFileSync(gate, '');
    const quiet = await osm(['run', '-m', 'live-gate', '-t', 'q.example.com', '-p', `gate=${gate}`, '-q']);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toContain('first-line');
    expect(quiet.stdout).not.toContain('after-line');
    const verbose = await osm(['run', '-m', 'live-gate', '-t', 'v.example.com', '-p', `gate=${gate}`, '-v']);
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toMatch(/^ {2}\+\d+\.\ds after-line$/m);
  });

  it('names the step of each line while several steps run at once', async () => {
    const pair = join(dir, 'pair');
    mkdirSync(pair);
    const run = new Live(['-b', base, '-F', FIX, 'run', '-m', 'live-pair', '-t', 'pair.example.com', '-p', `dir=${pair}`]);
    await run.waitFor(/a-line\n[\s\S]*b-line\n|b-line\n[\s\S]*a-line\n/);
    writeFileSync(join(pair, 'gate'), '');
    expect(await run.exited).toBe(0);
    expect(run.out).toMatch(/^ {2}\[a\] a-line$/m);
    expect(run.out).toMatch(/^ {2}\[b\] b-line$/m);
    // c runs alone: under its own header.
    expect(run.out).toMatch(/\[output\]\n {2}c-line\n/);
  });

  it('names the parallel-steps child of each line, in text and in --json', async () => {
    const text = await osm(['run', '-m', 'live-parallel', '-t', 'par.example.com']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {2}\[left\] left-line$/m);
    expect(text.stdout).toMatch(/^ {2}\[right\] right-line$/m);
    const json = await osm(['run', '-m', 'live-parallel', '-t', 'par.example.com', '--json']);
    expect(json.code).toBe(0);
    const outputs = jsonEvents(json.stdout).filter((e) => e.event === 'output');
    expect(outputs.find((e) => e.line === 'left-line')).toMatchObject({ step: 'group', substep: 'left', stream: 'stdout' });
    expect(outputs.find((e) => e.line === 'right-line')).toMatchObject({ step: 'group', substep: 'right', stream: 'stderr' });

    // osm logs reads the child back from the run's journal.
    const uuid = finalJson(json.stdout).run_uuid as string;
    const all = await osm(['logs', uuid]);
    expect(all.code).toBe(0);
    const shown = all.stdout.split('\n');
    expect(shown[0]).toBe('[warmup] warmup-line');
    expect(shown.slice(1).sort()).toEqual(['', '[group/left] left-line', '[group/right] right-line']);
    expect((await osm(['logs', uuid, '--step', 'group'])).stdout.split('\n').sort()).toEqual(['', '[left] left-line', '[right] right-line']);
    expect((await osm(['logs', uuid, '--step', 'right'])).stdout).toBe('[right] right-line\n');
    const rows = (await osm(['logs', uuid, '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.find((r) => r.line === 'left-line')).toMatchObject({ event: 'line', step: 'group', substep: 'left', stream: 'stdout' });
    expect(rows.find((r) => r.line === 'warmup-line')).not.toHaveProperty('substep');
  });

  it('shows tool output without its escape sequences (titles, screen clears) and keeps the last state of a \\r line', async () => {
    const r = await osm(['run', '-m', 'live-escapes', '-t', 'esc.example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).not.toContain('\u0007');
    const shown = r.stdout.slice(r.stdout.indexOf('[output]\n') + 9, r.stdout.search(/✔ \$ \(finished/)).split('\n');
    expect(shown).toEqual(['  plain', '  titled', '  red', '  cleared', '  step 2', '']);
  });

  it('prints foreach progress as plain lines without a terminal', async () => {
    const r = await osm(['run', '-m', 'live-fan', '-t', 'fan.example.com']);
    expect(r.code).toBe(0);
    const progress = r.stdout.split('\n').filter((l) => l.startsWith('∀ fan: '));
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[progress.length - 1]).toMatch(/^∀ fan: 6\/6 \(100%\) · [\d.]+\/s$/);
    expect(progress[0]).toMatch(/^∀ fan: [1-5]\/6 \(\d+%\) · [\d.]+\/s · ETA \d/);
    for (let i = 1; i <= 6; i++) expect(r.stdout).toContain(`item-${i}`);
  });

  // `script` gives the CLI a pseudo-terminal: the progress is a bar in the spinner line instead.
  it.skipIf(spawnSync('script', ['--version']).status !== 0)('draws a foreach progress bar (done/total, rate) on a terminal', () => {
    const args = [BIN, '-b', base, '-F', FIX, 'run', '-m', 'live-fan', '-t', 'tty.example.com'];
    const cmd = `stty cols 120 rows 40; ${[process.execPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`;
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', TERM: 'xterm' };
    delete env.CI;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stdout.slice(-2000)).toBe(0);
    expect(r.stdout).toMatch(/fan ▕[█░]{20}▏ [1-6]\/6 · [\d.]+\/s/);
    expect(r.stdout).not.toMatch(/^∀ fan: /m);
    expect(r.stdout).toContain('Status: completed');
  });
});

describe('osm run --json', () => {
  it('prints the documented event lines as they happen, then the run record as the last line', async () => {
    const gate = join(dir, 'json.gate');
    const run = new Live(['-b', base, '-F', FIX, 'run', '-m', 'live-gate', '-t', 'json.example.com', '-p', `gate=${gate}`, '--json']);
    await run.waitFor(/"line":"first-line"/);
    expect(run.out).not.toContain('"event":"step.finished"');
    writeFileSync(gate, '');
    expect(await run.exited).toBe(0);
    const events = jsonEvents(run.out);
    const record = finalJson(run.out);
    expect(record).toMatchObject({ status: 'completed', target: 'json.example.com', workflow_name: 'live-gate' });
    const uuid = record.run_uuid as string;
    for (const e of events) {
      expect(e.run_uuid).toBe(uuid);
      expect(new Date(e.ts).toISOString()).toBe(e.ts);
    }
    expect(events[0]).toEqual({ event: 'run.started', ts: events[0]!.ts, run_uuid: uuid, workflow: 'live-gate', target: 'json.example.com', workspace: 'example.com' });
    expect(events.find((e) => e.event === 'step.started' && e.step === 'talk')).toMatchObject({ type: 'bash', module: 'live-gate' });
    expect(events.find((e) => e.event === 'output' && e.line === 'err-line')).toMatchObject({ step: 'talk', stream: 'stderr' });
    expect(events.find((e) => e.event === 'step.finished' && e.step === 'talk')).toMatchObject({ status: 'completed', exit_code: 0, duration_ms: expect.any(Number) });
    expect(events[events.length - 1]).toMatchObject({ event: 'run.finished', status: 'completed', duration_ms: expect.any(Number) });
    const order = events.map((e) => (e.event === 'output' ? `output:${e.line}` : `${e.event}:${e.step ?? ''}`));
    expect(order.indexOf('output:second-line')).toBeLessThan(order.indexOf('step.finished:talk'));
    expect(order.indexOf('step.finished:talk')).toBeLessThan(order.indexOf('step.started:after'));
  });

  it('reports a failing step with its exit code', async () => {
    writeFileSync(join(dir, 'fail-wf.yaml'), 'kind: module\nname: exits\nsteps:\n  - name: boom\n    type: bash\n    command: echo going-down; exit 3\n');
    const r = await runOsm(['-b', base, 'run', '-m', join(dir, 'fail-wf.yaml'), '-t', 'fail.example.com', '--json']);
    expect(r.code).toBe(1);
    const events = jsonEvents(r.stdout);
    expect(events.find((e) => e.event === 'step.finished')).toMatchObject({ step: 'boom', status: 'failed', exit_code: 3 });
    expect(events[events.length - 1]).toMatchObject({ event: 'run.finished', status: 'failed' });
    expect(finalJson(r.stdout).status).toBe('failed');
  });
});

describe('osm logs', () => {
  let uuid: string;

  it('follows a running run with -f until it ends', async () => {
    const gate = join(dir, 'logs.gate');
    const run = new Live(['-b', base, '-F', FIX, 'run', '-m', 'live-gate', '-t', 'logs.example.com', '-p', `gate=${gate}`, '--json']);
    uuid = (await run.waitFor(/"event":"run.started"[^\n]*"run_uuid":"([0-9a-f-]+)"/))[1]!;
    const follow = new Live(['-b', base, 'logs', uuid, '-f']);
    await follow.waitFor(/\[talk\] first-line/);
    expect(follow.child.exitCode).toBeNull();
    writeFileSync(gate, '');
    expect(await follow.exited).toBe(0);
    expect(await run.exited).toBe(0);
    const lines = follow.out.trim().split('\n');
    expect(lines.slice(0, 2).sort()).toEqual(['[talk] err-line', '[talk] first-line']);
    expect(lines.slice(2)).toEqual(['[talk] second-line', '[after] after-line']);
  });

  it('prints what a finished run wrote: all, one step, the last N lines, JSON lines', async () => {
    const all = await osm(['logs', uuid]);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split('\n').slice(2)).toEqual(['[talk] second-line', '[after] after-line']);
    expect((await osm(['logs', uuid, '--step', 'after'])).stdout).toBe('after-line\n');
    expect((await osm(['logs', uuid, '--tail', '2'])).stdout).toBe('[talk] second-line\n[after] after-line\n');
    expect((await osm(['logs', uuid, '--step', 'talk', '--tail', '1'])).stdout).toBe('second-line\n');
    const json = (await osm(['logs', uuid, '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(json.find((j) => j.line === 'after-line')).toMatchObject({ event: 'line', step: 'after', stream: 'stdout', id: expect.any(Number) });
    expect(json[json.length - 1]).toEqual({ event: 'end', status: 'completed' });
    // A step the run does not have is an error, not an empty answer.
    const nostep = await osm(['logs', uuid, '--step', 'nosuch']);
    expect(nostep.code).toBe(1);
    expect(nostep.stdout).toBe('');
    expect(nostep.stderr).toContain('step not found: nosuch');
    expect((await osm(['logs', uuid, '--step', 'nosuch', '-f'])).stderr).toContain('step not found: nosuch');
    const missing = await osm(['logs', 'no-such-run']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found/i);
    expect((await osm(['logs', uuid, '--tail', 'x'])).stderr).toMatch(/--tail must be/);
  });

  it('reads a run that recorded no journal (an older osm) from its step log files', async () => {
    const ws = join(base, 'workspaces', 'example.com', 'logs', uuid);
    expect(readdirSync(ws)).toContain('output.journal');
    const legacy = join(base, 'workspaces', 'example.com', 'logs', 'legacy');
    mkdirSync(legacy, { recursive: true });
    for (const f of readdirSync(ws)) if (f.endsWith('.log')) copyFileSync(join(ws, f), join(legacy, f));
    // The reader itself: a folder without a journal gives each step file's lines in name order.
    const { RunLogReader } = await import('../../src/engine/live/log-reader.js');
    const reader = new RunLogReader(legacy);
    const got = await reader.read(0);
    await reader.close();
    expect(reader.isLegacy).toBe(true);
    expect(got.events.map((e) => (e.kind === 'line' ? `${e.step}:${e.line}` : '')).slice(2)).toEqual(['talk:second-line', 'after:after-line']);
  });
});

describe('against a daemon', () => {
  let d: Daemon;

  beforeAll(async () => {
    d = await startDaemon(join(dir, 'daemon-base'), { workflows: FIX });
  }, 60_000);
  afterAll(async () => {
    await stopDaemon(d);
  });

  it('osm run --server shows the same live output as a local run', async () => {
    const gate = join(dir, 'remote.gate');
    const run = new Live(['-b', join(dir, 'client-base'), 'run', '--server', d.url, '--api-key', d.apiKey, '-m', 'live-gate', '-t', 'remote.example.com', '-p', `gate=${gate}`]);
    await run.waitFor(/^ {2}first-line$/m);
    const runs = (await api(d, 'GET', '/osm/api/runs?target=remote.example.com')).json.data as { run_uuid: string; status: string }[];
    expect(runs[0]!.status).toBe('running');
    expect(run.out).toMatch(/\(starting\) talk/);
    writeFileSync(gate, '');
    expect(await run.exited).toBe(0);
    const out = run.out;
    expect(out.indexOf('second-line')).toBeLessThan(out.indexOf('after-line'));
    expect(out).toMatch(/finished in .*\) talk/);
    expect(out).toContain('Status: completed');
    expect(out).not.toContain('\u001b');
  });

  it('osm run --server --json prints the same event lines and the record last', async () => {
    const gate = join(dir, 'remote-json.gate');
    writeFileSync(gate, '');
    const r = await runOsm(['-b', join(dir, 'client-base'), 'run', '--server', d.url, '--api-key', d.apiKey, '-m', 'live-gate', '-t', 'rj.example.com', '-p', `gate=${gate}`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const events = jsonEvents(r.stdout);
    expect(events[0]).toMatchObject({ event: 'run.started', target: 'rj.example.com' });
    expect(events.filter((e) => e.event === 'output').map((e) => e.line)).toContain('after-line');
    expect(events.find((e) => e.event === 'step.finished' && e.step === 'talk')).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(events[events.length - 1]).toMatchObject({ event: 'run.finished', status: 'completed' });
    expect(finalJson(r.stdout)).toMatchObject({ status: 'completed', target: 'rj.example.com' });
  });

  it('osm run --server and osm logs --server name the parallel-steps child of a line; an unknown --step exits 1', async () => {
    const client = ['-b', join(dir, 'client-base')];
    const remote = ['--server', d.url, '--api-key', d.apiKey];
    const text = await runOsm([...client, 'run', ...remote, '-m', 'live-parallel', '-t', 'rpar.example.com']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {2}\[left\] left-line$/m);
    expect(text.stdout).toMatch(/^ {2}\[right\] right-line$/m);
    const json = await runOsm([...client, 'run', ...remote, '-m', 'live-parallel', '-t', 'rpar.example.com', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const outputs = jsonEvents(json.stdout).filter((e) => e.event === 'output');
    expect(outputs.find((e) => e.line === 'left-line')).toMatchObject({ step: 'group', substep: 'left', stream: 'stdout' });
    expect(outputs.find((e) => e.line === 'warmup-line')).not.toHaveProperty('substep');

    const uuid = finalJson(json.stdout).run_uuid as string;
    const logs = await runOsm([...client, 'logs', uuid, ...remote]);
    expect(logs.code).toBe(0);
    expect(logs.stdout.split('\n').slice(1).sort()).toEqual(['', '[group/left] left-line', '[group/right] right-line']);
    const followed = await runOsm([...client, 'logs', uuid, '-f', '--step', 'group', ...remote]);
    expect(followed.stdout.split('\n').sort()).toEqual(['', '[left] left-line', '[right] right-line']);
    const rows = (await runOsm([...client, 'logs', uuid, '--json', ...remote])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.find((r) => r.line === 'right-line')).toMatchObject({ event: 'line', step: 'group', substep: 'right', stream: 'stderr' });
    expect((await runOsm([...client, 'logs', uuid, '--step', 'warmup', ...remote])).stdout).toBe('warmup-line\n');
    for (const follow of [[], ['-f']]) {
      const nostep = await runOsm([...client, 'logs', uuid, '--step', 'nosuch', ...follow, ...remote]);
      expect(nostep.code, follow.join()).toBe(1);
      expect(nostep.stdout).toBe('');
      expect(nostep.stderr).toContain('step not found: nosuch');
    }
  });

  it('osm logs --server reads and follows the daemon log stream', async () => {
    const gate = join(dir, 'remote-logs.gate');
    const created = await api(d, 'POST', '/osm/api/runs', { module: 'live-gate', target: 'rl.example.com', params: { gate } });
    expect(created.status).toBe(202);
    const uuid = created.json.run_uuid as string;
    const follow = new Live(['-b', join(dir, 'client-base'), 'logs', uuid, '-f', '--server', d.url, '--api-key', d.apiKey]);
    await follow.waitFor(/\[talk\] first-line/);
    writeFileSync(gate, '');
    expect(await follow.exited).toBe(0);
    expect(follow.out).toContain('[after] after-line');
    const tail = await runOsm(['-b', join(dir, 'client-base'), 'logs', uuid, '--tail', '1', '--server', d.url, '--api-key', d.apiKey]);
    expect(tail.stdout).toBe('[after] after-line\n');
    const denied = await runOsm(['-b', join(dir, 'client-base'), 'logs', uuid, '--server', d.url, '--api-key', 'wrong']);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/401/);
    await until(async () => (await api(d, 'GET', `/osm/api/runs/${uuid}`)).json.data.status === 'completed', 'run end');
  });

  it('a graceful shutdown closes open streams and exits 0', async () => {
    const gate = join(dir, 'never.gate');
    const created = await api(d, 'POST', '/osm/api/runs', { module: 'live-gate', target: 'stop.example.com', params: { gate } });
    const logs = await openSse(`${d.url}/osm/api/runs/${created.json.run_uuid}/logs`, { 'x-osm-api-key': d.apiKey });
    await logs.until((e) => e.event === 'line' && JSON.parse(e.data).line === 'first-line');
    const events = await openSse(`${d.url}/osm/api/events/stream`, { 'x-osm-api-key': d.apiKey });
    expect(events.status).toBe(200);
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
    await logs.rest();
    await events.rest();
  });
});
