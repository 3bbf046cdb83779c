/**
 * The queue's slot is freed when a run is terminal, not when its after-work (clean-up, diff
 * snapshots) is done: executeStoredRun tells `ended` once, with the terminal row written and the
 * workspace's console log complete (the next run of the workspace truncates it).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/services/context.js';
import { executeStoredRun } from '../../../src/services/runs.js';
import type { RunOutcome } from '../../../src/engine/executor.js';
import { STATE_FILES } from '../../../src/engine/state-files.js';
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

describe('ended: told once, when the run is terminal', () => {
  for (const [workflow, expected] of [['two-steps', 'completed'], ['fails', 'failed']] as const) {
    it(`${workflow}: told ${expected} with the row already terminal in the database, before the call returns`, async () => {
      const run = app.store.runs.create({ workflow_name: workflow, workflow_kind: 'module', target: 'example.com', status: 'queued' });
      const told: { out: RunOutcome; stored: string | undefined; log: string }[] = [];
      const display = { stdout: false, silent: true, color: false } as const;
      const consoleLog = path.join(app.settings().paths.workspaces, 'example.com', STATE_FILES.consoleLog);
      const read = () => (existsSync(consoleLog) ? readFileSync(consoleLog, 'utf8') : '');
      const pending = executeStoredRun(app, run, display, 'api', { ended: (out) => told.push({ out, stored: app.store.runs.get(run.id)?.status, log: read() }) });
      const out = await pending;
      // Told with the console log flushed to its last line: a next run of the workspace may start at once.
      expect(told[0]?.log).toContain('Execution Summary');
      expect(told[0]?.log).toBe(read());
      expect(told).toHaveLength(1);
      expect(told[0]!.out.status).toBe(expected);
      expect(told[0]!.stored).toBe(expected);
      expect(told[0]!.out.run.status).toBe(expected);
      expect(out.status).toBe(expected);
      expect(told[0]!.out.steps.map((s) => s.name)).toEqual(out.steps.map((s) => s.name));
    });
  }

  it('a run whose workflow cannot be loaded is told too, once', async () => {
    const run = app.store.runs.create({ workflow_name: 'no-such-workflow', workflow_kind: 'module', target: 'example.com', status: 'queued' });
    let n = 0;
    const out = await executeStoredRun(app, run, { stdout: false, silent: true, color: false }, 'api', { ended: () => n++ });
    expect(out.status).toBe('failed');
    expect(n).toBe(1);
    expect(app.store.runs.get(run.id)?.status).toBe('failed');
  });
});
