import { afterAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../../src/services/context.js';
import { runInputOf } from '../../../src/services/runs.js';
import { checkRunOptions, requestOptionsOf } from '../../../src/services/run-options.js';
import { resumeState } from '../../../src/engine/executor.js';
import { RESERVED_PARAM_NAMES, validateRunParams } from '../../../src/workflow/reserved-params.js';
import type { RunRecord } from '../../../src/store/index.js';
import { tempDir } from '../../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-run-options-');
const app = createAppContext({ baseFolder: dir });
afterAll(() => {
  app.close();
  cleanup();
});

const row = (options: Record<string, unknown>) => ({ target: 'example.com', params: { a: 'b' }, options }) as unknown as RunRecord;

describe('run options are read through an allowlist', () => {
  it('copies only known keys with valid values into the engine input', () => {
    // As the store reads the column: JSON.parse keeps "__proto__" as an own key.
    const stored = JSON.parse(
      JSON.stringify({
        junk: 'x', constructor: 'y',
        workflow_path: '/tmp/evil.yaml', resume_of: 3,
        workspacesOverride: 'relative/path', space: 'a;b', tactic: 'x;y', timeoutMs: 1e12, exclude: ['ok', '$(id)'],
        threadsHold: 5, heuristics: 'none', skipValidation: true, runnerType: 'docker', dockerImage: 'alpine:3',
      }).replace('{', '{"__proto__":{"polluted":true},'),
    ) as Record<string, unknown>;
    const input = runInputOf(row(stored));
    expect(input).toEqual({
      target: 'example.com', params: { a: 'b' }, threadsHold: 5, heuristics: 'none', skipValidation: true,
      runnerOverride: { type: 'docker', config: { image: 'alpine:3' } },
    });
  });

  it('keeps an operator folder that is an absolute path; drops a docker image that could be an option', () => {
    const input = runInputOf(row({ workspacesOverride: '/srv/scans', runnerType: 'docker', dockerImage: '--privileged' }));
    expect(input).toEqual({ target: 'example.com', params: { a: 'b' }, workspacesOverride: '/srv/scans' });
  });

  it('an options column that is not an object reads as no options', () => {
    for (const bad of [null, 'text', 42, ['workspacesOverride', '/']]) expect(runInputOf(row(bad as never))).toEqual({ target: 'example.com', params: { a: 'b' } });
  });

  it('a new run gets a clear error for a bad value; unknown keys are dropped', () => {
    expect(() => checkRunOptions({ timeoutMs: 2 ** 31 })).toThrow('invalid run options: timeoutMs: the run timeout must be at most 35791 minutes');
    expect(() => checkRunOptions({ space: 'a;b' })).toThrow(/invalid run options: space: .*forbidden character ";"/);
    expect(() => checkRunOptions({ workspacesOverride: 'rel' })).toThrow('invalid run options: workspacesOverride: must be an absolute path');
    expect(checkRunOptions({ tactic: 'aggressive', junk: 1, workflow_path: '/x' })).toEqual({ tactic: 'aggressive' });
  });

  it('a copy made through the API loses the options only the operator sets', () => {
    const stored = { workspacesOverride: '/srv/scans', targetFile: '/home/me/t.txt', concurrency: 2, workflow_path: '/w/x.yaml', resume_of: 9 };
    expect(requestOptionsOf(stored, { operator: false })).toEqual({ concurrency: 2 });
    expect(requestOptionsOf(stored, { operator: true })).toEqual({ workspacesOverride: '/srv/scans', targetFile: '/home/me/t.txt', concurrency: 2 });
  });
});

describe('reserved param names', () => {
  it('are the built-in variables (case-sensitive), except the thread counts the reference lets params override', () => {
    for (const name of ['Output', 'Target', 'target', 'Workspace', 'Workspaces', 'TargetSpace', 'BaseFolder', 'Binaries', 'Data', 'TargetFile', 'RunUUID', 'StateFile', 'TempDir', 'workspaces_folder', 'space_name']) {
      expect(RESERVED_PARAM_NAMES.has(name), name).toBe(true);
      expect(() => validateRunParams({ [name]: 'x' })).toThrow(`params.${name} is a reserved variable name and cannot be set`);
    }
    expect(() => validateRunParams({ threads: '9', baseThreads: '4', output: 'json', workspace_note: 'x' })).not.toThrow();
  });
});

describe('resume state', () => {
  it('restores only exports of a run of the same workflow, without built-in names', async () => {
    const source = app.store.runs.create({ workflow_name: 'recon', workflow_kind: 'module', target: 'example.com', status: 'running' });
    const step = app.store.steps.create({ run_id: source.id, run_uuid: source.run_uuid, workspace: 'example.com', step_name: 'enum', step_type: 'bash', status: 'running' });
    app.store.steps.transition(step.id, 'completed', { output: 'done', exports: { Output: '/etc', Target: 'other.example', found: 'x' } });
    const same = await resumeState(app, source.id, 'recon');
    expect([...same!.steps.values()]).toEqual([{ exports: { found: 'x' }, output: 'done' }]);
    expect((await resumeState(app, source.id, 'other-workflow'))!.steps.size).toBe(0);
  });
});
