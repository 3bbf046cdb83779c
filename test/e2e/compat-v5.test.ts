/**
 * Constructs found in the public Osmedeus v5 workflows (platform/osmedeus-workflow) that osm
 * used to reject or mishandle, reproduced by small fixtures of our own (test/fixtures/compat-v5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runOsm, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { createAppContext } from '../../src/services/context.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';

const FIX = join(ROOT, 'test/fixtures/compat-v5');
let base: string;
let cleanup: () => void;

function osm(args: string[]) {
  return runOsm(['-b', base, '-F', FIX, ...args]);
}

beforeAll(() => {
  ({ dir: base, cleanup } = tempDir('osm-compat-'));
});
afterAll(() => cleanup());

describe('public v5 workflow constructs', () => {
  it('validate accepts a report without path (warning) and the rest of the folder', async () => {
    const r = await osm(['workflow', 'validate', FIX, '--format', 'json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { failed: number; results: { name: string; issues: { rule: string; path: string }[] }[] };
    expect(out.failed).toBe(0);
    const arith = out.results.find((x) => x.name === 'arith-module')!;
    expect(arith.issues.map((i) => `${i.rule}:${i.path}`)).toContain('report-path:reports[0].path');
    // The event trigger's input defines `origin`: not an undefined variable.
    const ev = out.results.find((x) => x.name === 'event-only')!;
    expect(ev.issues.filter((i) => i.rule === 'undefined-variable')).toEqual([]);
    const flow = out.results.find((x) => x.name === 'compat-flow')!;
    expect(flow.issues.map((i) => `${i.rule}:${i.path}`)).toContain('action:modules[1].on_success[0].action');
  });

  it('renders arithmetic, satisfies a declared target param from -t and registers only reports with a path', async () => {
    const r = await osm(['run', '-m', 'arith-module', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('ARITH target=example.com workers=60 half=2 next=8 double=120');
    expect(r.stdout).toMatch(/Status: completed/);
    const db = new Database(join(base, 'database-osm.sqlite'), { readonly: true });
    try {
      const names = (db.prepare("SELECT name FROM artifacts WHERE artifact_type = 'report'").all() as { name: string }[]).map((x) => x.name);
      expect(names).toContain('real-report');
      expect(names).not.toContain('no-path-report');
    } finally {
      db.close();
    }
  });

  it('dry-run and show render a {{ fn("{{x}}") }} call as empty instead of failing', async () => {
    const r = await osm(['run', '-m', 'arith-module', '-t', 'example.com', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('log_error("Got  lines")');
    const s = await osm(['workflow', 'show', 'arith-module', '-t', 'example.com']);
    expect(s.code, s.stderr).toBe(0);
  });

  it('a module whose manual trigger is disabled is skipped before its params are resolved', async () => {
    const r = await osm(['run', '-m', 'event-only', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('Manual trigger is disabled');
    expect(r.stdout).not.toContain('EVENT-ONLY-RAN');
    expect(r.stderr).not.toContain('required parameter missing');
  });

  it('its dry run and plan show the skip even when a required param is missing', async () => {
    const dry = await osm(['run', '-m', 'manual-off-param', '-t', 'example.com', '--dry-run']);
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout + dry.stderr).toContain('manual trigger is disabled');
    expect(dry.stderr).not.toContain('required parameter missing');
    const run = await osm(['run', '-m', 'manual-off-param', '-t', 'example.com']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).not.toContain('MANUAL-OFF-RAN');
  });

  it('inside a flow such a module is skipped too and its dependents still run', async () => {
    const r = await osm(['run', '-f', 'compat-flow', '-t', 'example.com']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toContain('EVENT-ONLY-RAN');
    expect(r.stdout).toContain('ECHO-MOD example.com 20');
    expect(r.stdout).toMatch(/skipped\s*│\s*event-only/);
    expect(r.stdout).toContain("an action without 'action:' was ignored");
    expect(r.stdout).not.toContain('never runs');
    const dry = await osm(['run', '-f', 'compat-flow', '-t', 'example.com', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('skipped (manual-trigger-disabled)');
    expect(existsSync(join(base, 'workspaces', 'example.com'))).toBe(true);
  });

  it('an event-triggered run of that module does run (the manual-trigger check is for CLI runs only)', async () => {
    const { dir, cleanup: drop } = tempDir('osm-compat-ev-');
    try {
      const app = createAppContext({ baseFolder: dir, workflowFolder: FIX });
      const scheduler = new Scheduler(app, { log: () => {} });
      try {
        await scheduler.start();
        app.store.events.insert({ topic: 'compat.asset', source: 'tester', data: { value: 'ev.example.com' } });
        await scheduler.processPending();
        const queued = app.store.runs.list({}, { offset: 0, limit: 10 }).data;
        expect(queued.map((r) => [r.workflow_name, r.trigger_type, r.status])).toEqual([['event-only', 'event', 'queued']]);
      } finally {
        await scheduler.stop();
        app.close();
      }
      const r = await runOsm(['-b', dir, '-F', FIX, 'run', '--queue-run']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/ev\.example\.com\s+event-only\s+completed/);
      const consoleLog = readFileSync(join(dir, 'workspaces', 'example.com', 'run-console.log'), 'utf8');
      expect(consoleLog).toContain('EVENT-ONLY-RAN ev.example.com tester');
      expect(consoleLog).not.toContain('Manual trigger is disabled');
    } finally {
      drop();
    }
  });
});
