/**
 * `extends` + `override` (reference workflow-engine §1.11). The result is a deep copy of the
 * resolved parent with the child's name (and description/tags/help when set) and the child's
 * override applied. The child's other top-level fields are ignored, as in the reference; the
 * linter warns about them.
 */
import { errors } from '../errors.js';
import type { Dependencies, ModuleRef, RunnerConfig, Step, Workflow } from './types.js';
import type { ListOverride, ParsedWorkflow, WorkflowOverride } from './schema.js';
import { cloneTracked, originOf, setOrigin } from './wf-origin.js';

/** Resolves `child.extends` (recursively); `findParent` returns the parsed, unresolved parent. */
export function resolveInheritance(child: Workflow, findParent: (name: string, childFile: string) => Workflow): Workflow {
  return resolveChain(child as ParsedWorkflow, findParent, []);
}

function sameWorkflow(a: Workflow, b: Workflow): boolean {
  return a === b || (a.file_path !== '' && a.file_path === b.file_path);
}

function resolveChain(child: ParsedWorkflow, findParent: (name: string, childFile: string) => Workflow, chain: Workflow[]): Workflow {
  if (!child.extends) return child;
  const seen = [...chain, child];
  const parent = findParent(child.extends, child.file_path) as ParsedWorkflow;
  if (seen.some((w) => sameWorkflow(w, parent))) {
    throw errors.workflowInvalid(`circular inheritance detected: ${[...seen, parent].map((w) => w.name).join(' -> ')}`);
  }
  const resolvedParent = resolveChain(parent, findParent, seen);
  if (resolvedParent.kind !== child.kind) {
    throw errors.workflowInvalid(`kind mismatch: child ${child.name} is ${child.kind} but parent ${parent.name} is ${resolvedParent.kind}`);
  }
  return merge(resolvedParent, child);
}

function merge(parent: Workflow, child: ParsedWorkflow): Workflow {
  const out = cloneTracked(parent) as ParsedWorkflow;
  delete out.override;
  out.name = child.name;
  if (child.description) out.description = child.description;
  if (child.tags.length > 0) out.tags = [...child.tags];
  if (child.help) out.help = cloneTracked(child.help);
  out.extends = child.extends;
  out.file_path = child.file_path;
  out.checksum = child.checksum;
  out.raw = child.raw;
  const childOrigin = originOf(child);
  if (childOrigin) setOrigin(out, childOrigin);
  if (child.override) applyOverride(out, cloneTracked(child.override));
  return out;
}

function applyOverride(wf: Workflow, o: WorkflowOverride): void {
  if (o.params) applyParams(wf, o.params);
  if (o.steps) {
    if (wf.kind !== 'module') throw errors.workflowInvalid(`override.steps - cannot override steps of a flow (use override.modules)`);
    wf.steps = applyList<Step>(wf.steps, o.steps);
  }
  if (o.modules) {
    if (wf.kind !== 'flow') throw errors.workflowInvalid(`override.modules - cannot override modules of a module (use override.steps)`);
    wf.modules = applyList<ModuleRef>(wf.modules, o.modules);
  }
  if (o.triggers && o.triggers.length > 0) wf.triggers = o.triggers;
  if (o.dependencies) wf.dependencies = unionDependencies(wf.dependencies, o.dependencies);
  if (o.preferences) {
    for (const [k, v] of Object.entries(o.preferences)) {
      if (v !== undefined) (wf.preferences as Record<string, unknown>)[k] = v;
    }
  }
  if (o.runner) wf.runner = o.runner;
  if (o.runner_config) wf.runner_config = mergeRunnerConfig(wf.runner_config, o.runner_config);
}

function applyParams(wf: Workflow, patches: NonNullable<WorkflowOverride['params']>): void {
  for (const [name, patch] of Object.entries(patches)) {
    let param = wf.params.find((p) => p.name === name);
    if (!param) {
      param = { name, type: 'string', required: false };
      wf.params.push(param);
    }
    if (patch.type) param.type = patch.type;
    if (patch.hasDefault) {
      if (patch.default === undefined) delete param.default;
      else param.default = patch.default;
    }
    if (patch.required !== undefined) param.required = patch.required;
    if (patch.generator !== undefined) param.generator = patch.generator || undefined;
    if (param.generator === undefined) delete param.generator;
  }
}

/** append | prepend | replace | merge, by item name. */
function applyList<T extends { name: string }>(base: T[], o: ListOverride<T>): T[] {
  switch (o.mode) {
    case 'prepend':
      return [...o.items, ...base];
    case 'replace':
      return [...o.items];
    case 'merge': {
      const replacements = new Map(o.replace.map((r) => [r.name, r]));
      const removed = new Set(o.remove);
      const merged = base.map((item) => replacements.get(item.name) ?? item).filter((item) => !removed.has(item.name));
      const present = new Set(merged.map((i) => i.name));
      for (const item of o.items) {
        if (!present.has(item.name)) {
          merged.push(item);
          present.add(item.name);
        }
      }
      return merged;
    }
    case 'append':
    default:
      return [...base, ...o.items];
  }
}

function union(a: string[], b: string[]): string[] {
  const out = [...a];
  for (const x of b) if (!out.includes(x)) out.push(x);
  return out;
}

function unionDependencies(base: Dependencies, add: Dependencies): Dependencies {
  const variables = [...base.variables];
  for (const v of add.variables) {
    const i = variables.findIndex((x) => x.name === v.name);
    if (i >= 0) variables[i] = v;
    else variables.push(v);
  }
  return {
    commands: union(base.commands, add.commands),
    files: union(base.files, add.files),
    variables,
    target_types: union(base.target_types, add.target_types),
    functions_conditions: union(base.functions_conditions, add.functions_conditions),
  };
}

/** Non-empty scalars override (booleans only when true); env merges key-wise; volumes append without duplicates. */
function mergeRunnerConfig(base: RunnerConfig, add: RunnerConfig): RunnerConfig {
  const out: RunnerConfig = { ...base };
  const target = out as Record<string, unknown>;
  for (const [k, v] of Object.entries(add)) {
    if (k === 'env' || k === 'volumes') continue;
    if (typeof v === 'boolean') {
      if (v) target[k] = v;
    } else if (v !== undefined && v !== '' && v !== 0) {
      target[k] = v;
    }
  }
  if (add.env) out.env = { ...(base.env ?? {}), ...add.env };
  if (add.volumes) out.volumes = union(base.volumes ?? [], add.volumes);
  return out;
}

