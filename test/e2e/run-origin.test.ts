/**
 * Where a run's workflow may come from, as the real CLI sees it: a file typed on the command line
 * runs (the operator's own command), but nothing that executes later from a stored row — a queued
 * run, a resume — takes a file outside the workflows folder from that row. Params cannot set
 * built-in variables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runOsm } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

let base: string;
let wf: string;
let outside: string;
let cleanup: () => void;

function osm(args: string[]) {
  return runOsm(['-b', base, '-F', wf, ...args]);
}

function runs(): { run_uuid: string; status: string; workflow_name: string; trigger_name: string }[] {
  const db = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT run_uuid, status, workflow_name, trigger_name FROM runs ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

beforeAll(() => {
  const t = tempDir('osm-origin-');
  cleanup = t.cleanup;
  base = join(t.dir, 'base');
  wf = join(t.dir, 'workflows');
  outside = join(t.dir, 'elsewhere');
  mkdirSync(join(wf, 'modules'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(wf, 'modules', 'installed.yaml'), 'kind: module\nname: installed\nsteps:\n  - name: hi\n    type: bash\n    command: echo installed\n');
});
afterAll(() => cleanup());

describe('a workflow file outside the workflows folder', () => {
  it('runs when the operator names it on the command line', async () => {
    const marker = join(outside, 'ran.marker');
    const file = join(outside, 'mine.yaml');
    writeFileSync(file, `kind: module\nname: mine\nsteps:\n  - name: touch\n    type: bash\n    command: touch ${marker}\n`);
    const r = await osm(['run', '-f', file, '-t', 'own.example']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('is refused for --queue (queued runs execute later from the workflows folder only); nothing is queued', async () => {
    const file = join(outside, 'later.yaml');
    writeFileSync(file, 'kind: module\nname: later\nsteps:\n  - name: hi\n    type: bash\n    command: echo later\n');
    const before = runs().length;
    const r = await osm(['run', '-f', file, '-t', 'later.example', '--queue']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--queue: the daemon finds workflows by name in ${wf}; 'later' (${file}) is not the workflow of that name there`);
    expect(runs().length).toBe(before);
    const ok = await osm(['run', '-m', 'installed', '-t', 'later.example', '--queue']);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('resumes only with the file named again (-f); a resume never reads it from the row', async () => {
    const flag = join(outside, 'flaky.flag');
    const file = join(outside, 'flaky.yaml');
    writeFileSync(file, `kind: module\nname: flaky\nsteps:\n  - name: first\n    type: bash\n    command: echo first\n  - name: second\n    type: bash\n    command: test -f ${flag}\n`);
    const first = await osm(['run', '-f', file, '-t', 'flaky.example']);
    expect(first.code).toBe(1);
    const failed = runs().find((r) => r.workflow_name === 'flaky')!;
    expect(failed.status).toBe('failed');
    writeFileSync(flag, '');
    const byRow = await osm(['run', '--resume', failed.run_uuid]);
    expect(byRow.code).toBe(2);
    expect(byRow.stderr).toContain('Workflow "flaky" is not in the workflows folder: name its file with -f to resume the run with it');
    const named = await osm(['run', '--resume', failed.run_uuid, '-f', file]);
    expect(named.code, named.stderr).toBe(0);
    expect(named.stdout).toContain('Reusing 1 completed step(s): first');
    expect(runs().find((r) => r.trigger_name === `resume:${failed.run_uuid}`)?.status).toBe('completed');
  });
});

describe('params', () => {
  it('-p cannot set a built-in variable', async () => {
    const r = await osm(['run', '-m', 'installed', '-t', 'p.example', '-p', 'Output=/tmp/elsewhere']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('params.Output is a reserved variable name and cannot be set');
    const ok = await osm(['run', '-m', 'installed', '-t', 'p.example', '-p', 'threads=3']);
    expect(ok.code, ok.stderr).toBe(0);
  });
});

describe('operator flags', () => {
  it('-W with a relative folder still works (stored absolute for whoever executes the run)', async () => {
    const r = await runOsm(['-b', base, '-F', wf, 'run', '-m', 'installed', '-t', 'w.example', '-W', 'rel-ws'], { cwd: outside });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(outside, 'rel-ws', 'w.example'))).toBe(true);
  });
});
