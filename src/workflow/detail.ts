/**
 * The JSON shapes the spec gives a workflow: the listing item and the detail object (spec
 * "Workflow (listing item)" / "Workflow detail"). Shared by `osm workflow` and the HTTP API.
 * Secrets never appear here: runner configs (which may hold passwords) are not part of it.
 */
import { durationText, parseDuration } from '../util/duration.js';
import type { Step, Workflow } from './types.js';

export interface WorkflowParamItem {
  name: string;
  required: boolean;
  default: string;
  generator: string;
}

export interface WorkflowListItem {
  name: string;
  kind: Workflow['kind'];
  description: string;
  tags: string[];
  file_path: string;
  params: WorkflowParamItem[];
  required_params: string[];
  step_count: number;
  module_count: number;
  checksum: string;
}

export interface WorkflowStepDetail {
  index: number;
  name: string;
  type: string;
  command: string;
  timeout: string;
  pre_condition: string;
  exports: Record<string, string>;
  depends_on?: string[];
  parallel_steps?: { index: number; name: string; type: string; command: string }[];
}

export interface WorkflowModuleDetail {
  index: number;
  name: string;
  path: string;
  depends_on: string[];
  condition: string;
}

export interface WorkflowTriggerDetail {
  name: string;
  on: string;
  schedule: string;
  topic: string;
  enabled: boolean;
}

export interface WorkflowDetail extends WorkflowListItem {
  /** When the index last saw the file ('' when it is not indexed yet); set by the service. */
  indexed_at?: string;
  steps: WorkflowStepDetail[];
  modules: WorkflowModuleDetail[];
  triggers: WorkflowTriggerDetail[];
  dependencies: { commands: string[]; files: string[] };
}

/** Param items as the index and the API show them (defaults as text, '' when none). */
export function paramItems(wf: Workflow): WorkflowParamItem[] {
  return wf.params.map((p) => ({ name: p.name, required: p.required, default: String(p.default ?? ''), generator: p.generator ?? '' }));
}

/** Names of params the caller must supply: required and without a default. */
export function requiredParams(wf: Workflow): string[] {
  return wf.params.filter((p) => p.required && (p.default === undefined || String(p.default) === '')).map((p) => p.name);
}

/** Steps of a workflow without loading modules: a module's steps, or a flow's inline steps plus 1 per file module. */
export function estimateStepCount(wf: Workflow): number {
  if (wf.kind === 'module') return wf.steps.length;
  return wf.modules.reduce((n, m) => n + (m.steps?.length ? m.steps.length : 1), 0);
}

/** The listing item of a workflow (indexed_at is added by the index). `stepCount` comes from the loader for flows. */
export function workflowListItem(wf: Workflow, stepCount?: number): WorkflowListItem {
  return {
    name: wf.name,
    kind: wf.kind,
    description: wf.description,
    tags: [...wf.tags],
    file_path: wf.file_path,
    params: paramItems(wf),
    required_params: requiredParams(wf),
    step_count: stepCount ?? estimateStepCount(wf),
    module_count: wf.kind === 'flow' ? wf.modules.length : 0,
    checksum: wf.checksum,
  };
}

/** One line of text that says what a step runs. */
export function stepCommand(step: Step): string {
  const join = (list?: string[]) => (list && list.length ? list.join('\n') : '');
  switch (step.type) {
    case 'bash':
    case 'remote-bash':
      return join(step.parallel_commands) || join(step.commands) || step.command || '';
    case 'function':
      return join(step.parallel_functions) || join(step.functions) || step.function || '';
    case 'http':
      return step.url ? `${(step.method ?? 'GET').toUpperCase()} ${step.url}` : '';
    case 'foreach':
      return step.step ? stepCommand(step.step) : '';
    default:
      return '';
  }
}

/** Timeout as duration text (`30m`); template text is shown as written. */
export function timeoutText(timeout: string | number | undefined): string {
  if (timeout === undefined || timeout === '') return '';
  try {
    return durationText(parseDuration(timeout));
  } catch {
    return String(timeout);
  }
}

function stepDetail(step: Step, index: number): WorkflowStepDetail {
  const out: WorkflowStepDetail = {
    index,
    name: step.name,
    type: step.type,
    command: stepCommand(step),
    timeout: timeoutText(step.timeout),
    pre_condition: step.pre_condition ?? '',
    exports: { ...(step.exports ?? {}) },
  };
  if (step.depends_on && step.depends_on.length) out.depends_on = [...step.depends_on];
  if (step.parallel_steps && step.parallel_steps.length) {
    out.parallel_steps = step.parallel_steps.map((s, i) => ({ index: i, name: s.name, type: s.type, command: stepCommand(s) }));
  }
  return out;
}

/** The detail object of a workflow (steps of a module, modules of a flow, triggers, dependencies). */
export function workflowDetail(wf: Workflow, stepCount?: number): WorkflowDetail {
  return {
    ...workflowListItem(wf, stepCount),
    steps: wf.kind === 'module' ? wf.steps.map(stepDetail) : [],
    modules: wf.kind === 'flow'
      ? wf.modules.map((m, index) => ({ index, name: m.name, path: m.path ?? '', depends_on: [...(m.depends_on ?? [])], condition: m.condition ?? '' }))
      : [],
    triggers: wf.triggers.map((t) => ({ name: t.name, on: t.on, schedule: t.schedule ?? '', topic: t.event?.topic ?? '', enabled: t.enabled })),
    dependencies: { commands: [...wf.dependencies.commands], files: [...wf.dependencies.files] },
  };
}
