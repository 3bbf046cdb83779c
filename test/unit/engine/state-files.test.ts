/** The run state files: the workflow state written only when its text changed, the run state under both names. */
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STATE_FILES, writeRunState, writeWorkflowState } from '../../../src/engine/state-files.js';
import type { Workflow } from '../../../src/workflow/types.js';
import type { RunRecord } from '../../../src/store/index.js';
import { tempDir } from '../../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-state-files-');
afterAll(cleanup);

const wf = (description: string) => ({ kind: 'module', name: 'wf', description, params: [], steps: [{ name: 's', type: 'bash', command: 'true' }], raw: 'raw text', checksum: 'c' }) as unknown as Workflow;

describe('writeWorkflowState', () => {
  it('writes the workflow without its raw text, and again only when the text or the file changed', () => {
    const file = path.join(dir, STATE_FILES.workflow);
    writeWorkflowState(dir, wf('first'));
    const first = readFileSync(file, 'utf8');
    expect(first).toContain('description: first');
    expect(first).not.toContain('raw text');
    const ino = statSync(file).ino;
    // The same workflow (another copy of it, as another run loads it): the file is left as it is.
    writeWorkflowState(dir, wf('first'));
    expect(statSync(file).ino).toBe(ino);
    // Another text: written.
    writeWorkflowState(dir, wf('second'));
    expect(readFileSync(file, 'utf8')).toContain('description: second');
    // Changed by someone else, same size and an old mtime: written again all the same.
    writeFileSync(file, readFileSync(file, 'utf8').replace('second', 'secXnd'));
    utimesSync(file, new Date(0), new Date(0));
    writeWorkflowState(dir, wf('second'));
    expect(readFileSync(file, 'utf8')).toContain('description: second');
  });
});

describe('writeRunState', () => {
  it('writes the same state under run-state.json and run-completed.json', () => {
    const run = { run_uuid: 'u1', workflow_name: 'wf', workflow_kind: 'module', target: 't', params: {}, status: 'completed', workspace: 'w', started_at: 'a', completed_at: 'b', total_steps: 2, completed_steps: 2, hooks_enabled: false, run_mode: 'local', priority: 'normal' } as unknown as RunRecord;
    writeRunState(dir, run, { total_assets: 3 });
    const state = readFileSync(path.join(dir, STATE_FILES.state), 'utf8');
    expect(readFileSync(path.join(dir, STATE_FILES.completed), 'utf8')).toBe(state);
    expect(JSON.parse(state)).toMatchObject({ run: { run_uuid: 'u1', completed_steps: 2 }, workspace: { total_assets: 3 } });
  });
});
