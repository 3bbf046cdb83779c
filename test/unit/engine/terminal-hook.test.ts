/**
 * The queue's slot is freed when a run is terminal, not when its after-work (log flushes,
 * clean-up, diff snapshots) is done: executeStoredRun tells `ended` once, after the terminal write
 * and the summary. A next run of the same workspace started at that moment waits for the ended
 * run's console log to be flushed before it truncates the file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/services/context.js';
import { executeStoredRun } from '../../../src/services/runs.js';
import type { RunOutcome } from '../../../src/engine/executor.js';
import { STATE_FILES } from '../../../src/engine/state-files.js';
import { RunPrinter } from '../../../src/engine/printer.js';
import { tempDir } from '../../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-terminal-hook-');
const workflows = path.join(dir, 'workflows');
mkdirSync(path.join(workflows, 'modules'), { recursive: true });
writeFileSync(
  path.join(workflows, 'modules', 'two-steps.yaml'),
  'kind: module\nname: two-steps\nsteps:\n  - name: one\n    type: bash\n    command: echo one\n  - name: two\n    type: bash\n    command: echo two\n',
);
writeFileSync(path.join(workflows, 'modules', 'fails.yaml'), 'kind: module\nname: fails\nsteps:\n  - name: bad\n    type: bash\n    command: exit 3\n');
const app = createAppContext({ baseFolder: path.join(dir, 'base'), workflowFolder: workflows });
afterAll(() => {
  app.close();
  cleanup();
});
const display = { stdout: false, silent: true, color: false } as const;
// The workspace of a run on a registrable domain is the domain itself.
const consoleLogOf = (target: string) => path.join(app.settings().paths.workspaces, target, STATE_FILES.consoleLog);
const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

describe('ended: told once, when the run is terminal', () => {
  for (const [workflow, expected] of [['two-steps', 'completed'], ['fails', 'failed']] as const) {
    it(`${workflow}: told ${expected} with the row already terminal, before the call returns`, async () => {
      const run = app.store.runs.create({ workflow_name: workflow, workflow_kind: 'module', target: `${workflow}-hook.com`, status: 'queued' });
      const told: { out: RunOutcome; stored: string | undefined; log: string }[] = [];
      const file = consoleLogOf(`${workflow}-hook.com`);
      const out = await executeStoredRun(app, run, display, 'api', { ended: (o) => told.push({ out: o, stored: app.store.runs.get(run.id)?.status, log: read(file) }) });
      expect(told).toHaveLength(1);
      expect(told[0]!.out.status).toBe(expected);
      expect(told[0]!.stored).toBe(expected);
      expect(told[0]!.out.run.status).toBe(expected);
      expect(out.status).toBe(expected);
      expect(told[0]!.out.steps.map((s) => s.name)).toEqual(out.steps.map((s) => s.name));
      // Told before the console log was flushed to its end; it is complete once the call returns.
      expect(read(file)).toContain('Execution Summary');
    });
  }

  it('a completed run: its state file, written before the terminal write, agrees with the row; its artifacts are listed with it', async () => {
    const target = 'state-hook.com';
    const run = app.store.runs.create({ workflow_name: 'two-steps', workflow_kind: 'module', target, status: 'queued' });
    let artifactsWhenTold = -1;
    const out = await executeStoredRun(app, run, display, 'api', { ended: () => (artifactsWhenTold = app.store.artifacts.listByRun(run.id).length) });
    expect(out.status).toBe('completed');
    const row = app.store.runs.get(run.id)!;
    const state = JSON.parse(readFileSync(path.join(app.settings().paths.workspaces, target, STATE_FILES.state), 'utf8'));
    expect(state.run).toMatchObject({ run_uuid: row.run_uuid, status: 'completed', total_steps: 2, completed_steps: 2, workspace: row.workspace, started_at: row.started_at });
    expect(row.completed_steps).toBe(2);
    // The state files are artifacts of the run, there as soon as it is terminal.
    const names = app.store.artifacts.listByRun(run.id).map((a) => a.name).sort();
    expect(names).toEqual(['state-completed', 'state-console-log', 'state-execution-log', 'state-file', 'state-workflow']);
    expect(artifactsWhenTold).toBe(names.length);
    expect(out.artifacts).toHaveLength(names.length);
  });

  it('a run whose workflow cannot be loaded is told too, once', async () => {
    const run = app.store.runs.create({ workflow_name: 'no-such-workflow', workflow_kind: 'module', target: 'example.com', status: 'queued' });
    let n = 0;
    const out = await executeStoredRun(app, run, display, 'api', { ended: () => n++ });
    expect(out.status).toBe('failed');
    expect(n).toBe(1);
    expect(app.store.runs.get(run.id)?.status).toBe('failed');
  });

  it('the next run of the workspace, started when the first is told ended, gets a console log of its own', async () => {
    for (let round = 0; round < 5; round++) {
      const target = `next-${round}-hook.com`;
      const first = app.store.runs.create({ workflow_name: 'two-steps', workflow_kind: 'module', target, status: 'queued' });
      const second = app.store.runs.create({ workflow_name: 'fails', workflow_kind: 'module', target, status: 'queued' });
      let next: Promise<RunOutcome> | undefined;
      await executeStoredRun(app, first, display, 'api', { ended: () => (next = executeStoredRun(app, second, display, 'api')) });
      expect((await next!).status).toBe('failed');
      const log = read(consoleLogOf(target));
      // Only the second run's lines: the first run's summary was flushed before the file was truncated.
      expect(log).not.toContain('\u0000');
      expect(log.startsWith('★ Executing: fails')).toBe(true);
      expect(log).toContain('Workflow: fails');
      expect(log).not.toContain('two-steps');
    }
  });

  it('a console log being closed by an ended run is truncated by the next run only once its last lines are flushed', async () => {
    const file = path.join(dir, 'console-race.log');
    const ended = new RunPrinter({ stdout: false, silent: false, color: false });
    await ended.attachConsoleLog(file, true);
    for (let i = 0; i < 2000; i++) ended.warn(`first run line ${i}`);
    ended.markClosing();
    // The next run of the workspace attaches (truncating) while the ended run still writes its summary.
    const next = new RunPrinter({ stdout: false, silent: false, color: false });
    const attached = next.attachConsoleLog(file, true);
    ended.warn('first run summary');
    await ended.detachConsoleLog();
    await attached;
    next.warn('second run');
    await next.detachConsoleLog();
    // Without the wait the truncation lands first and the ended run's late lines leave a hole of NULs.
    expect(readFileSync(file, 'utf8')).toBe('⚠ second run\n');
  });
});
