import type { Workflow } from '../../src/workflow/types.js';

/** A parsed workflow with every field at its empty default, overridden by `over`. */
export function wf(over: Partial<Workflow> & { name: string; kind: Workflow['kind'] }): Workflow {
  return {
    description: '',
    tags: [],
    hidden: false,
    params: [],
    dependencies: { commands: [], files: [], variables: [], target_types: [], functions_conditions: [] },
    reports: [],
    triggers: [],
    preferences: {},
    hooks: { pre_scan_steps: [], post_scan_steps: [] },
    runner: 'host',
    runner_config: {},
    steps: [],
    modules: [],
    file_path: '',
    checksum: '',
    raw: '',
    ...over,
  };
}
