import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { finalJson, processesWith, runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIX = join(ROOT, 'test/fixtures/engine');
let base: string;
let cleanup: () => void;

function osm(args: string[], opts: Parameters<typeof runOsm>[1] = {}) {
  return runOsm(['-b', base, '-F', FIX, ...args], opts);
}


async function waitFor(cond: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-run-'));
});
afterAll(() => cleanup());

describe('workflow preferences and dry-run checks', () => {
  it('preferences act as defaults: empty_target runs without -t, silent hides step output', async () => {
    const r = await osm(['run', '-m', 'prefs-empty']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('PREFS-STEP-OUTPUT'); // silent
    expect(r.stdout).toMatch(/Status: completed/);
  });

  it('a dry run still fails on a target-type mismatch (and passes for a matching target)', async () => {
    const bad = await osm(['run', '-m', 'deps-url-only', '-t', 'example.com', '--dry-run']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Target type mismatch/i);
    const good = await osm(['run', '-m', 'deps-url-only', '-t', 'https://example.com/x', '--dry-run']);
    expect(good.code, good.stderr).toBe(0);
  });
});

describe('reference run flags', () => {
  it('--chunk-size prints the chunks; --chunk-count/--chunk-part run one slice; out of range is an error', async () => {
    const file = join(base, 'chunk-targets.txt');
    writeFileSync(file, 'a.com\nb.com\nc.com\nd.com\ne.com\n');
    const info = await osm(['run', '-m', 'foreach', '-T', file, '--chunk-size', '2']);
    expect(info.code).toBe(0);
    expect(info.stdout).toContain('Chunk Info: 5 total targets, 3 chunks of size 2');
    const part = await osm(['run', '-m', 'precondition-error-continue', '-T', file, '--chunk-count', '2', '--chunk-part', '1', '--json']);
    expect(part.stdout).toContain('Processing chunk 2/2 (2 targets, indices 3-4)');
    const runs = finalJson(part.stdout);
    expect(runs.map((r: { target: string }) => r.target)).toEqual(['d.com', 'e.com']);
    const bad = await osm(['run', '-m', 'foreach', '-T', file, '--chunk-size', '2', '--chunk-part', '5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('chunk-part 5 exceeds total chunks 3 (0-indexed)');
  });

  it('--std-module runs a module read from stdin; --queue only queues runs; version prints the version', async () => {
    const yaml = 'kind: module\nname: from-stdin\nsteps:\n  - name: s\n    type: bash\n    command: echo "STDIN-MODULE {{Target}}"\n';
    const r = await osm(['run', '--std-module', '-t', 'std.example.com'], { input: yaml });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('STDIN-MODULE std.example.com');
    const q = await osm(['run', '-m', 'precondition-error-continue', '-t', 'q1.example.com', '-t', 'q2.example.com', '--queue', '--json']);
    expect(q.code).toBe(0);
    const queued = JSON.parse(q.stdout);
    expect(queued.map((x: { status: string; target: string }) => [x.status, x.target])).toEqual([['queued', 'q1.example.com'], ['queued', 'q2.example.com']]);
    const v = await osm(['version']);
    expect(v.stdout).toMatch(/^osm - security-automation workflow engine\nVersion: /);
  });

  it('--disable-logging drops the log lines; --ci-output-format prints only the JSON record', async () => {
    const plain = await osm(['run', '-m', 'precondition-error-continue', '-t', 'log.example.com']);
    expect(plain.stdout).toContain('INFO Execution Summary');
    const quiet = await osm(['run', '-m', 'precondition-error-continue', '-t', 'log.example.com', '--disable-logging']);
    expect(quiet.stdout).not.toContain('INFO Execution Summary');
    expect(quiet.stdout).toContain('Status: completed');
    const ci = await osm(['run', '-m', 'precondition-error-continue', '-t', 'log.example.com', '--ci-output-format']);
    expect(finalJson(ci.stdout).status).toBe('completed');
  });

  it('osm health checks folders, database, workflows and their tools; osm eval is func eval', async () => {
    const h = await runOsm(['-b', join(base, 'health-base'), 'health', '--json']);
    expect(h.code, h.stdout).toBe(0);
    const report = JSON.parse(h.stdout);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c: { section: string }) => c.section)).toEqual(expect.arrayContaining(['Folders', 'Database', 'Workflows']));
    const text = await runOsm(['-b', join(base, 'health-base'), 'health']);
    expect(text.stdout).toContain('▶ Folders');
    // The engine fixtures name a tool nobody has: a warning naming the workflow, an error with --strict.
    const missing = await osm(['health', '--json']);
    const bin = JSON.parse(missing.stdout).checks.filter((c: { section: string; ok: boolean }) => c.section === 'Binaries' && !c.ok);
    expect(bin.length).toBeGreaterThan(0);
    expect(bin[0]).toMatchObject({ optional: true, detail: expect.stringMatching(/^not found, needed by /) });
    expect(missing.code).toBe(0);
    const strict = await osm(['health', '--json', '--strict']);
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout).ok).toBe(false);
    const e = await osm(['eval', '-t', 'a.com', 'toUpperCase("{{Target}}")']);
    expect(e.stdout.trim()).toBe('A.COM');
  });

  it('--queue then --queue-run executes the queued runs here; --as-cron creates a schedule', async () => {
    const qbase = join(base, 'queue-base');
    const q = (args: string[]) => runOsm(['-b', qbase, '-F', FIX, ...args]);
    expect((await q(['run', '-m', 'precondition-error-continue', '-t', 'qa.example.com', '-t', 'qb.example.com', '--queue'])).code).toBe(0);
    const r = await q(['run', '--queue-run', '-c', '2', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const runs = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')));
    expect(runs.map((x: { target: string; status: string }) => `${x.target}:${x.status}`).sort()).toEqual(['qa.example.com:completed', 'qb.example.com:completed']);
    const c = await q(['run', '-m', 'precondition-error-continue', '-t', 'cron.example.com', '--as-cron', '0 3 * * *', '--json']);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)[0]).toMatchObject({ workflow_name: 'precondition-error-continue', schedule: '0 3 * * *', trigger_type: 'cron' });
  });

  it('--convert-to-file runs once with a file of all targets as the target', async () => {
    const r = await osm(['run', '-m', 'precondition-error-continue', '-t', 'a.com', '-t', 'b.com', '--convert-to-file', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = finalJson(r.stdout);
    expect(readFileSync(run.target, 'utf8')).toBe('a.com\nb.com\n');
  });
});

describe('timeouts and cancellation', () => {
  it('a sleep 30 step with timeout: 1 fails in about a second and leaves no process behind', async () => {
    const marker = `osm-timeout-${process.pid}-${Date.now()}`;
    const started = Date.now();
    const r = await osm(['run', '-m', 'timeout', '-t', 'example.com', '-p', `marker=${marker}`]);
    const elapsed = Date.now() - started;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('command timed out after 1.0s');
    expect(elapsed).toBeLessThan(25_000); // far below the 30 s sleep: the group was killed
    expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
  });

  it('--timeout cancels the whole run and records it failed', async () => {
    const marker = `osm-runtimeout-${process.pid}-${Date.now()}`;
    const r = await osm(['run', '-m', 'long', '-t', 'example.com', '-p', `marker=${marker}`, '--timeout', '1s', '--json']);
    expect(r.code).toBe(1);
    const run = finalJson(r.stdout);
    expect(run.status).toBe('failed');
    expect(run.error_message).toMatch(/timed out/i);
    expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
  });

  it('Ctrl-C cancels: children killed, run recorded cancelled, exit 130', async () => {
    const marker = `osm-sigint-${process.pid}-${Date.now()}`;
    let child: { kill: (s: NodeJS.Signals) => boolean } | undefined;
    const p = osm(['run', '-m', 'long', '-t', 'example.com', '-p', `marker=${marker}`], { onSpawn: (c) => (child = c) });
    // Match the step's shell only (the osm process's own argv contains the marker too).
    expect(await waitFor(() => processesWith(`sleep 30; echo ${marker}`).length > 0)).toBe(true);
    child!.kill('SIGINT');
    const r = await p;
    expect(r.code).toBe(130);
    expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
    const d = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
    const row = d.prepare("SELECT status, current_pid FROM runs WHERE workflow_name = 'long' ORDER BY id DESC").get() as { status: string; current_pid: number };
    d.close();
    expect(row.status).toBe('cancelled');
    expect(row.current_pid).toBe(0);
  });
});

describe('untrusted targets', () => {
  const hostile = ['a.com;id', '$(id)', '`id`', 'a.com&&id', 'a.com\nid', '-oProxyCommand=x', 'a.com|touch x', 'a.com > x'];
  for (const t of hostile) {
    it(`rejects ${JSON.stringify(t)} before anything runs`, async () => {
      const r = await osm(['run', '-m', 'marker', '-t', t]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Error: .*(contains forbidden character|must not start with)/m);
      expect(r.stdout).not.toContain('ran ');
    });
  }

  it('rejects hostile params too, naming the parameter', async () => {
    const r = await osm(['run', '-m', 'marker', '-t', 'example.com', '-p', 'x=$(id)']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('params["x"]');
  });

  it('nothing was executed by the rejected runs', () => {
    const ws = join(base, 'workspaces');
    const touched = existsSync(ws) ? readdirSync(ws).filter((d) => existsSync(join(ws, d, 'MARKER-RAN'))) : [];
    expect(touched).toEqual([]);
  });
});

describe('targets, params and output modes', () => {
  it('reads -T files and stdin, de-duplicates, runs with -c and prints a multi-target summary', async () => {
    const list = join(base, 'targets.txt');
    writeFileSync(list, '# comment\none.example.com\ntwo.example.com\n\none.example.com\n');
    const r = await osm(['run', '-m', 'marker', '-T', list, '-c', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Running against 2 targets (concurrency: 2)');
    expect(r.stdout).toContain('Multi-Target Summary');
    expect(r.stdout).toContain('Completed: 2/2');
    const s = await osm(['run', '-m', 'marker'], { input: 'stdin.example.com\n' });
    expect(s.code).toBe(0);
    expect(s.stdout).toContain('ran stdin.example.com');
  });

  it('-P params file with -p overriding it', async () => {
    const pf = join(base, 'params.yaml');
    writeFileSync(pf, 'greeting: from-file\n');
    const r = await osm(['run', '-m', 'bash-forms', '-t', 'example.com', '-P', pf, '-q']);
    expect(r.code).toBe(0);
    const both = await osm(['run', '-m', 'bash-forms', '-t', 'example.com', '-P', pf, '-p', 'greeting=from-cli']);
    expect(both.stdout).toContain('from-cli example.com');
  });

  it('-q hides step output but keeps the summary; errors still go to stderr', async () => {
    const r = await osm(['run', '-m', 'bash-forms', '-t', 'example.com', '-q']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('[output]');
    expect(r.stdout).toContain('Status: completed');
  });

  it('--dry-run prints the plan and executes nothing', async () => {
    rmSync(join(base, 'workspaces/example.com/MARKER-RAN'), { force: true });
    const r = await osm(['run', '-m', 'marker', '-t', 'dry.example.com', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('DRY-RUN');
    expect(r.stdout).toContain('marker');
    expect(existsSync(join(base, 'workspaces/example.com/MARKER-RAN'))).toBe(false);
  });

  it('no targets is a clear error; --empty-target generates one', async () => {
    const r = await osm(['run', '-m', 'marker']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no targets specified');
    const e = await osm(['run', '-m', 'function-forms', '--empty-target', '--json']);
    expect(e.code).toBe(0);
    expect(finalJson(e.stdout).target).toMatch(/^empty-/);
  });

  it('unknown workflow names the searched folder and suggests close names', async () => {
    const r = await osm(['run', '-m', 'markr', '-t', 'example.com']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('workflow not found: markr');
    expect(r.stderr).toContain('marker');
  });

  it('several -m modules run in sequence', async () => {
    const r = await osm(['run', '-m', 'marker', '-m', 'mod-c', '-t', 'example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout.indexOf('ran example.com')).toBeLessThan(r.stdout.indexOf('MOD-C-RAN'));
  });
});

describe('bundled sample workflows', () => {
  it('run green with the default workflows folder', async () => {
    for (const args of [['-m', 'sample-recon'], ['-m', 'sample-foreach'], ['-f', 'sample-flow']]) {
      const r = await runOsm(['-b', base, 'run', ...args, '-t', 'sample.example.com']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Status: completed');
    }
    const d = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
    const flowRun = d.prepare("SELECT id, status FROM runs WHERE workflow_name = 'sample-flow' ORDER BY id DESC").get() as { id: number; status: string };
    expect(flowRun.status).toBe('completed');
    const reports = d.prepare("SELECT name FROM artifacts WHERE run_id = ? AND artifact_type = 'report'").all(flowRun.id) as { name: string }[];
    expect(reports.map((r) => r.name).sort()).toEqual(['hosts', 'summary']);
    d.close();
  });
});

describe('resume', () => {
  it('continues a failed run from its first unfinished step, reusing completed steps and exports', async () => {
    const flag = join(base, 'resume-flag');
    rmSync(flag, { force: true });
    const first = await osm(['run', '-m', 'resume', '-t', 'resume.example.io', '-p', `flag_file=${flag}`, '--json']);
    expect(first.code).toBe(1);
    const failed = finalJson(first.stdout);
    expect(failed.status).toBe('failed');
    writeFileSync(flag, 'x');
    const second = await osm(['run', '--resume', failed.run_uuid]);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Reusing 1 completed step(s): prepare');
    expect(second.stdout).toContain('↺ prepare (reused from run');
    expect(second.stdout).toContain('flaky ok token=tok-resume.example.io');
    expect(second.stdout).toContain('Status: completed');
    // The reused step did not run again.
    expect(readFileSync(join(base, 'workspaces/example.io/resume-count.txt'), 'utf8')).toBe('prepared\n');
    // The original stays failed (terminal statuses are never reopened); the resumed run is a new row.
    const d = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
    expect((d.prepare('SELECT status FROM runs WHERE run_uuid = ?').get(failed.run_uuid) as { status: string }).status).toBe('failed');
    const resumed = d.prepare("SELECT run_uuid, status FROM runs WHERE trigger_name = ?").get(`resume:${failed.run_uuid}`) as { run_uuid: string; status: string };
    d.close();
    expect(resumed.status).toBe('completed');
    const again = await osm(['run', '--resume', resumed.run_uuid]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("Cannot resume run with status 'completed'");
  });
});

describe('workflow show with a target', () => {
  it('prints the plan: rendered commands for that target, nothing executed', async () => {
    rmSync(join(base, 'workspaces/example.com/MARKER-RAN'), { force: true });
    const r = await osm(['workflow', 'show', 'marker', '-t', 'plan.example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('DRY-RUN');
    expect(r.stdout).toContain(`touch "${join(base, 'workspaces/example.com/MARKER-RAN')}" && echo ran plan.example.com`);
    expect(existsSync(join(base, 'workspaces/example.com/MARKER-RAN'))).toBe(false);
  });
});
