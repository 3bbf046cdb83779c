import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinVariables, tacticThreads, type BuiltinInput } from '../../../src/workflow/builtin-vars.js';
import { BUILTIN_VARIABLES } from '../../../src/workflow/builtins.js';

const paths = {
  base: '/b',
  binaries: '/b/external-binaries',
  data: '/b/external-data',
  configs: '/b/external-configs',
  agentConfigs: '/b/external-agent-configs',
  scripts: '/b/external-scripts',
  workflows: '/b/workflows',
  markdownTemplates: '/b/markdown-report-templates',
  snapshot: '/b/snapshot',
  workspaces: '/b/workspaces',
};

const base: BuiltinInput = { target: 'test.example.com', paths, runUuid: 'uuid-1', moduleName: 'mod', now: new Date(2024, 2, 7, 8, 9, 10) };

describe('builtinVariables', () => {
  it('produces only names from BUILTIN_VARIABLE_NAMES', () => {
    const vars = builtinVariables({
      ...base,
      flowName: 'flow',
      tempDir: '/tmp/osm-tmp-x',
      chunk: { index: 0, size: 5, total: 2, start: 0, end: 4 },
      eventEnvelope: JSON.stringify({ topic: 't', source: 's', data_type: 'd', timestamp: 'ts', data: { a: 1 } }),
    });
    const unknown = Object.keys(vars).filter((k) => !BUILTIN_VARIABLES.has(k));
    expect(unknown).toEqual([]);
    expect(vars).toMatchObject({ EventTopic: 't', EventData: '{"a":1}', ChunkSize: 5, TempFile: path.join('/tmp/osm-tmp-x', 'osm-tmp-file') });
  });

  it('derives folders, workspace and state paths', () => {
    const vars = builtinVariables(base);
    expect(vars).toMatchObject({
      BaseFolder: '/b',
      Data: '/b/external-data',
      ExternalData: '/b/external-data',
      ExternalAgents: '/b/external-agent-configs',
      ExternalMarkdowns: '/b/markdown-report-templates',
      SnapshotsFolder: '/b/snapshot',
      Workspaces: '/b/workspaces',
      Target: 'test.example.com',
      TargetFile: '',
      TargetSpace: 'example.com',
      Workspace: 'example.com',
      Output: '/b/workspaces/example.com',
      StateFile: '/b/workspaces/example.com/run-state.json',
      StateWorkflowFolder: '/b/workspaces/example.com/run-modules',
      HeuristicsCheck: 'basic',
      TargetType: 'domain',
      TargetRootDomain: 'example.com',
      ModuleName: 'mod',
      FlowName: '',
      RunUUID: 'uuid-1',
      DBRunID: 0,
      HooksEnabled: false,
      Version: 'v5.1.0',
      TaskDate: '2024-03-07',
      Today: '2024-03-07',
      CurrentTime: '2024-03-07T08:09:10',
      target: 'test.example.com',
      tactic: 'default',
      threads_hold: '0',
      heuristics_check: 'basic',
      space_name: '',
    });
    expect(vars.TimeStamp).toBe(String(Math.floor(base.now!.getTime() / 1000)));
    expect(vars.RandomString).toMatch(/^[a-z]{6}$/);
    expect(vars.TempDir).toBeUndefined();
    expect(vars.flow_name).toBeUndefined();
  });

  it('honours -W, -S, heuristics none and exclusions', () => {
    const vars = builtinVariables({ ...base, workspacesOverride: '/w', space: 'mine', heuristics: 'none', excludeModules: ['a', 'b'], fuzzyExcludeModules: ['x'] });
    expect(vars).toMatchObject({ Workspaces: '/w', TargetSpace: 'mine', Output: '/w/mine', workspaces_folder: '/w', space_name: 'mine', exclude_modules: 'a,b', fuzzy_exclude_modules: 'x', HeuristicsCheck: 'none' });
    expect(vars.TargetType).toBeUndefined();
  });

  it('reports the platform in Go names', () => {
    const vars = builtinVariables(base);
    expect(['linux', 'darwin', 'windows', 'freebsd', 'openbsd', 'aix', 'sunos']).toContain(vars.PlatformOS);
    expect(typeof vars.PlatformInDocker).toBe('boolean');
    expect(typeof vars.PlatformInKubernetes).toBe('boolean');
    expect(vars.PlatformArch).not.toBe('x64');
    expect(typeof vars.PlatformCloudProvider).toBe('string');
  });
});

describe('tacticThreads', () => {
  it('maps tactics to scan_tactic values', () => {
    expect(tacticThreads('aggressive')).toEqual({ threads: 40, baseThreads: 20 });
    expect(tacticThreads('fast')).toEqual({ threads: 40, baseThreads: 20 });
    expect(tacticThreads('gently')).toEqual({ threads: 5, baseThreads: 2 });
    expect(tacticThreads('thorough')).toEqual({ threads: 5, baseThreads: 2 });
    expect(tacticThreads('default')).toEqual({ threads: 10, baseThreads: 5 });
    expect(tacticThreads('whatever')).toEqual({ threads: 10, baseThreads: 5 });
  });

  it('≤0 falls back to 10; threadsHold forces; baseThreads ≥ 1', () => {
    expect(tacticThreads('gently', { aggressive: 40, default: 10, gently: 0 })).toEqual({ threads: 10, baseThreads: 5 });
    expect(tacticThreads('default', undefined, 1)).toEqual({ threads: 1, baseThreads: 1 });
    expect(tacticThreads('aggressive', undefined, 7)).toEqual({ threads: 7, baseThreads: 3 });
    expect(tacticThreads('aggressive', undefined, 0)).toEqual({ threads: 40, baseThreads: 20 });
    const vars = builtinVariables({ ...base, tactic: 'aggressive', threadsHold: 3 });
    expect(vars).toMatchObject({ threads: 3, baseThreads: 1, threads_hold: '3', tactic: 'aggressive' });
  });
});
