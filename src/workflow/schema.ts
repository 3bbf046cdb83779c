/**
 * zod schemas of the raw workflow YAML (`kind: module` / `kind: flow`) producing the normalised
 * model of types.ts: missing lists become [], the runner defaults to host, tags become a list.
 * Unknown keys are tolerated (the reference ignores them) and kept for the linter.
 */
import { z } from 'zod';
import type {
  Dependencies, Hooks, ModuleRef, Param, ParamType, Preferences, Report, RunnerConfig, RunnerType, Step, Trigger, Workflow,
} from './types.js';
import {
  RunnerConfigSchema, boolDefault, compact, enumOf, optActions, optAnyMap, optBool, optString, optStringList,
  optStringMap, reqString, scalarText, stringList, unknownKeysOf,
} from './wf-schema-common.js';
import { HookStepSchema, StepSchema, optSteps } from './wf-step-schema.js';
import { scopeSpecSchema } from '../scope/schema.js';

export { StepSchema, HookStepSchema, STEP_KEYS } from './wf-step-schema.js';

const nullish = (v: unknown) => (v === null ? undefined : v);

/** Top-level keys of a workflow file. */
export const WORKFLOW_KEYS: ReadonlySet<string> = new Set([
  'kind', 'name', 'description', 'tags', 'hidden', 'help', 'params', 'dependencies', 'reports', 'triggers',
  'preferences', 'hooks', 'runner', 'runner_config', 'steps', 'modules', 'extends', 'override', 'scope',
]);

/** Top-level keys a child with `extends` may set itself; every other key is ignored (reference §1.11). */
export const EXTENDS_OWN_KEYS: ReadonlySet<string> = new Set(['kind', 'name', 'description', 'tags', 'help', 'extends', 'override']);

/** Keys of a `params[]`, `reports[]` and `triggers[]` entry (anything else is ignored, and linted). */
export const PARAM_KEYS: ReadonlySet<string> = new Set(['name', 'type', 'default', 'required', 'generator']);
export const REPORT_KEYS: ReadonlySet<string> = new Set(['name', 'path', 'type', 'description', 'optional']);
export const TRIGGER_KEYS: ReadonlySet<string> = new Set(['name', 'on', 'schedule', 'event', 'path', 'debounce', 'input', 'enabled']);

/** Keys of a flow's `modules[]` entry. */
export const MODULE_REF_KEYS: ReadonlySet<string> = new Set([
  'name', 'path', 'params', 'depends_on', 'condition', 'on_success', 'on_error', 'decision', 'steps', 'description',
  'runner', 'runner_config', 'inline_path',
]);

const RUNNERS = ['host', 'docker', 'ssh'] as const;
const optRunner = z.preprocess((v) => (v === null || v === '' ? undefined : v), enumOf(RUNNERS).optional());

const Tags = z.preprocess(
  (v) => {
    if (v === null || v === undefined) return [];
    if (typeof v === 'string') return v.split(',');
    if (Array.isArray(v)) return v.map((x) => (x === null ? '' : scalarText(x)));
    return v;
  },
  z.array(z.string({ error: 'must be a string' }), { error: 'must be a comma-separated string or a list' }),
).transform((list) => list.map((t) => t.trim()).filter((t) => t !== ''));

const ParamDefault = z.preprocess(
  nullish,
  z.union([z.string(), z.number(), z.boolean()], { error: 'default must be a scalar value' }).optional(),
).transform((v) => (v === '' ? undefined : v));

const ParamSchema = z
  .looseObject(
    {
      name: reqString('param name is required'),
      type: z.preprocess((v) => (v === null || v === undefined || v === '' ? 'string' : v), enumOf(['string', 'bool', 'int'] as const)),
      default: ParamDefault,
      required: boolDefault(false),
      generator: optString,
    },
    { error: 'must be a mapping with a name' },
  )
  .transform((p): Param => compact({ name: p.name, type: p.type as ParamType, default: p.default, required: p.required, generator: p.generator || undefined }));

const VariableDependency = z
  .looseObject({ name: reqString('variable name is required'), type: optString, required: optBool }, { error: 'must be a mapping' })
  .transform((v) => compact({ name: v.name, type: v.type, required: v.required }));

const DependenciesShape = {
  commands: stringList,
  files: stringList,
  variables: z.preprocess(nullish, z.array(VariableDependency, { error: 'must be a list' }).optional()).transform((v) => v ?? []),
  target_types: stringList,
  functions_conditions: stringList,
};

const DependenciesSchema = z
  .preprocess(nullish, z.looseObject(DependenciesShape, { error: 'must be a mapping' }).optional())
  .transform((d): Dependencies => ({
    commands: d?.commands ?? [],
    files: d?.files ?? [],
    variables: d?.variables ?? [],
    target_types: d?.target_types ?? [],
    functions_conditions: d?.functions_conditions ?? [],
  }));

const ReportSchema = z
  .looseObject(
    {
      name: reqString('report name is required'),
      // Not required: the reference registers whatever the path renders to; the linter warns.
      path: optString,
      type: z.preprocess((v) => (v === null || v === undefined || v === '' ? 'text' : v), z.string({ error: 'must be a string' })),
      description: optString,
      optional: boolDefault(false),
    },
    { error: 'must be a mapping' },
  )
  .transform((r): Report => compact({ name: r.name, path: r.path ?? '', type: r.type, description: r.description, optional: r.optional }));

const TriggerSchema = z
  .looseObject(
    {
      name: reqString('trigger name is required'),
      on: enumOf(['cron', 'event', 'watch', 'manual'] as const, 'trigger needs on: cron, event, watch or manual'),
      schedule: optString,
      event: z.preprocess(
        nullish,
        z
          .looseObject(
            { topic: optString, filters: optStringList, filter_functions: optStringList, dedupe_key: optString, dedupe_window: optString },
            { error: 'must be a mapping' },
          )
          .optional(),
      ),
      path: optString,
      debounce: optString,
      input: optAnyMap,
      enabled: boolDefault(false),
    },
    { error: 'must be a mapping' },
  )
  .transform((t): Trigger => compact({
    name: t.name,
    on: t.on,
    schedule: t.schedule,
    event: t.event
      ? compact({ topic: t.event.topic, filters: t.event.filters, filter_functions: t.event.filter_functions, dedupe_key: t.event.dedupe_key, dedupe_window: t.event.dedupe_window })
      : undefined,
    path: t.path,
    debounce: t.debounce,
    input: t.input,
    enabled: t.enabled,
  }));

const PreferencesSchema = z
  .preprocess(
    nullish,
    z
      .looseObject(
        {
          disable_notifications: optBool,
          disable_logging: optBool,
          // Any text parses; validate.ts reports values other than none|basic|advanced.
          heuristics_check: optString,
          ci_output_format: optBool,
          silent: optBool,
          repeat: optBool,
          repeat_wait_time: optString,
          empty_target: optBool,
        },
        { error: 'must be a mapping' },
      )
      .optional(),
  )
  .transform((p): Preferences => (p ? compact({
    disable_notifications: p.disable_notifications,
    disable_logging: p.disable_logging,
    heuristics_check: p.heuristics_check as Preferences['heuristics_check'],
    ci_output_format: p.ci_output_format,
    silent: p.silent,
    repeat: p.repeat,
    repeat_wait_time: p.repeat_wait_time,
    empty_target: p.empty_target,
  }) : {}));

const HooksSchema = z
  .preprocess(
    nullish,
    z
      .looseObject(
        {
          pre_scan_steps: z.preprocess(nullish, z.array(HookStepSchema, { error: 'must be a list of steps' }).optional()),
          post_scan_steps: z.preprocess(nullish, z.array(HookStepSchema, { error: 'must be a list of steps' }).optional()),
        },
        { error: 'must be a mapping' },
      )
      .optional(),
  )
  .transform((h): Hooks => ({ pre_scan_steps: h?.pre_scan_steps ?? [], post_scan_steps: h?.post_scan_steps ?? [] }));

/** A flow's `modules[]` entry (file module or inline steps). */
export const ModuleRefSchema = z
  .looseObject(
    {
      name: reqString('module name is required'),
      path: optString,
      params: optStringMap,
      depends_on: optStringList,
      condition: optString,
      on_success: optActions,
      on_error: optActions,
      decision: z.unknown().optional(),
      steps: optSteps,
      description: optString,
      runner: optRunner,
      runner_config: RunnerConfigSchema,
      inline_path: optBool,
    },
    { error: 'must be a mapping' },
  )
  .transform((m): ModuleRef & { unknown_keys?: string[] } => {
    const unknown = unknownKeysOf(m, MODULE_REF_KEYS);
    return compact({
      name: m.name, path: m.path || undefined, params: m.params, depends_on: m.depends_on, condition: m.condition,
      on_success: m.on_success, on_error: m.on_error, steps: m.steps, description: m.description,
      runner: m.runner, runner_config: m.runner_config, unknown_keys: unknown.length ? unknown : undefined,
    });
  });

/** One param patch of `override.params` (the scalar shorthand sets the default). */
export interface ParamPatch {
  type?: ParamType;
  /** Present (possibly undefined = cleared) when the override sets a default. */
  default?: string | number | boolean;
  hasDefault: boolean;
  required?: boolean;
  generator?: string;
}

/** `override.steps` / `override.modules`. */
export interface ListOverride<T> {
  mode: 'append' | 'prepend' | 'replace' | 'merge';
  items: T[];
  replace: T[];
  remove: string[];
}

/** The `override:` block of a child workflow. */
export interface WorkflowOverride {
  params?: Record<string, ParamPatch>;
  steps?: ListOverride<Step>;
  modules?: ListOverride<ModuleRef>;
  triggers?: Trigger[];
  dependencies?: Dependencies;
  preferences?: Preferences;
  runner?: RunnerType;
  runner_config?: RunnerConfig;
}

/** A parsed (not yet inheritance-resolved) workflow: the model plus its `override` block. */
export type ParsedWorkflow = Workflow & { override?: WorkflowOverride };

const ParamPatchSchema = z.preprocess(
  nullish,
  z.union(
    [
      z.union([z.string(), z.number(), z.boolean()]).transform((v): ParamPatch => ({ default: v === '' ? undefined : v, hasDefault: true })),
      z
        .looseObject({
          default: z.preprocess(nullish, z.union([z.string(), z.number(), z.boolean()]).optional()),
          type: z.preprocess(nullish, enumOf(['string', 'bool', 'int'] as const).optional()),
          required: optBool,
          generator: optString,
        })
        .transform((p): ParamPatch => compact({
          type: p.type, default: p.default === '' ? undefined : p.default, hasDefault: 'default' in p && p.default !== undefined,
          required: p.required, generator: p.generator,
        })),
    ],
    { error: 'must be a default value or a mapping of default, type, required, generator' },
  ).optional(),
);

const MODES = ['append', 'prepend', 'replace', 'merge'] as const;

function listOverride<T>(item: z.ZodType<T>, listKey: 'steps' | 'modules') {
  return z.preprocess(
    nullish,
    z
      .looseObject(
        {
          mode: z.preprocess((v) => (v === null || v === undefined || v === '' ? 'append' : v), enumOf(MODES)),
          [listKey]: z.preprocess(nullish, z.array(item, { error: 'must be a list' }).optional()),
          replace: z.preprocess(nullish, z.array(item, { error: 'must be a list' }).optional()),
          remove: optStringList,
        },
        { error: 'must be a mapping with mode and a list' },
      )
      .transform((o): ListOverride<T> => ({
        mode: o.mode as ListOverride<T>['mode'],
        items: ((o as Record<string, unknown>)[listKey] as T[] | undefined) ?? [],
        replace: (o.replace as T[] | undefined) ?? [],
        remove: (o.remove as string[] | undefined) ?? [],
      }))
      .optional(),
  );
}

const OverrideSchema = z.preprocess(
  nullish,
  z
    .looseObject(
      {
        params: z.preprocess(nullish, z.record(z.string(), ParamPatchSchema, { error: 'must be a mapping of param names' }).optional()),
        steps: listOverride(StepSchema, 'steps'),
        modules: listOverride(ModuleRefSchema as unknown as z.ZodType<ModuleRef>, 'modules'),
        triggers: z.preprocess(nullish, z.array(TriggerSchema, { error: 'must be a list of triggers' }).optional()),
        dependencies: z.preprocess(nullish, DependenciesSchema.optional()),
        preferences: z.preprocess(nullish, PreferencesSchema.optional()),
        runner: optRunner,
        runner_config: RunnerConfigSchema,
      },
      { error: 'must be a mapping' },
    )
    .optional(),
).transform((o): WorkflowOverride | undefined => {
  if (!o) return undefined;
  const params = o.params
    ? Object.fromEntries(Object.entries(o.params).filter(([, p]) => p !== undefined) as [string, ParamPatch][])
    : undefined;
  return compact({
    params, steps: o.steps, modules: o.modules, triggers: o.triggers, dependencies: o.dependencies,
    preferences: o.preferences, runner: o.runner, runner_config: o.runner_config,
  });
});

const listOf = <T>(item: z.ZodType<T>, what: string) =>
  z.preprocess(nullish, z.array(item, { error: `must be a list of ${what}` }).optional()).transform((v) => v ?? []);

/** The whole workflow file. `file_path`, `checksum` and `raw` are filled in by parse.ts. */
export const WorkflowSchema = z
  .looseObject(
    {
      kind: z.enum(['module', 'flow'], {
        error: (iss) => (iss.input === undefined ? "kind is required (must be 'module' or 'flow')" : `invalid kind '${String(iss.input)}': must be 'module' or 'flow'`),
      }),
      name: reqString('workflow name is required'),
      description: optString,
      tags: Tags,
      hidden: boolDefault(false),
      help: z.preprocess(nullish, z.looseObject({ example_targets: optStringList, usage: optString }, { error: 'must be a mapping' }).optional()),
      params: listOf(ParamSchema, 'params'),
      dependencies: DependenciesSchema,
      reports: listOf(ReportSchema, 'reports'),
      triggers: listOf(TriggerSchema, 'triggers'),
      preferences: PreferencesSchema,
      hooks: HooksSchema,
      runner: optRunner,
      runner_config: RunnerConfigSchema,
      steps: listOf(StepSchema, 'steps'),
      modules: listOf(ModuleRefSchema as unknown as z.ZodType<ModuleRef>, 'modules'),
      extends: optString,
      override: OverrideSchema,
      /** Target scope of runs of this workflow (docs/scope.md); it can only narrow other scopes. */
      scope: z.preprocess(nullish, scopeSpecSchema.optional()),
    },
    { error: 'a workflow file must be a YAML mapping' },
  )
  .transform((w): ParsedWorkflow => compact({
    kind: w.kind,
    name: w.name,
    description: w.description ?? '',
    tags: w.tags,
    hidden: w.hidden,
    help: w.help ? compact({ example_targets: w.help.example_targets, usage: w.help.usage }) : undefined,
    params: w.params,
    dependencies: w.dependencies,
    reports: w.reports,
    triggers: w.triggers,
    preferences: w.preferences,
    hooks: w.hooks,
    runner: w.runner ?? 'host',
    runner_config: w.runner_config ?? {},
    steps: w.steps,
    modules: w.modules,
    extends: w.extends || undefined,
    override: w.override,
    scope: w.scope && (w.scope.include.length || w.scope.exclude.length) ? w.scope : undefined,
    file_path: '',
    checksum: '',
    raw: '',
  }));
