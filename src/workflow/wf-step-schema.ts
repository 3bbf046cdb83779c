/**
 * The zod schema of one workflow step (every step type). Type-specific requirements such as
 * "bash step must have command" are checked after inheritance by validate.ts, because an
 * `override` may complete a step that looks partial here.
 */
import { z } from 'zod';
import { STEP_TYPES, type Step, type StepType, type RunnerType } from './types.js';
import {
  DecisionSchema, LlmConfigSchema, RunnerConfigSchema, compact, optActions, optAnyMap, optBool, optConcurrency,
  optMessages, optString, optStringList, optStringMap, optTimeout, reqString, scalarText, unknownKeysOf,
} from './wf-schema-common.js';

/** Reference agent-step fields osm parses but does not execute: an agent step using one fails, naming it. */
export const UNSUPPORTED_AGENT_KEYS = [
  'sub_agents', 'max_agent_depth', 'memory', 'models', 'output_schema', 'plan_prompt', 'plan_max_tokens', 'stop_condition',
  'on_tool_start', 'on_tool_end',
];

/** Keys of agent/agent-acp/agent-sdk steps. */
const AGENT_KEYS = [
  'query', 'queries', 'max_iterations', 'agent_tools', 'system_prompt', 'parallel_tool_calls', 'allowed_commands',
  'agent', 'acp_config', 'cwd', 'allowed_paths', 'sdk_config', ...UNSUPPORTED_AGENT_KEYS,
];

const AgentToolSchema = z.preprocess(
  (v) => (typeof v === 'string' ? { preset: v } : v),
  z.looseObject(
    {
      preset: optString,
      name: optString,
      description: optString,
      parameters: optAnyMap,
      handler: optString,
    },
    { error: 'must be a preset name, {preset: name} or {name, description, parameters, handler}' },
  ),
);

const AcpConfigSchema = z.preprocess(
  (v) => (v === null ? undefined : v),
  z
    .looseObject(
      { command: optString, args: optStringList, env: optStringMap, write_enabled: optBool },
      { error: 'must be a mapping with command, args, env, write_enabled' },
    )
    .optional(),
);

const optPositiveInt = z.preprocess(
  (v) => (v === null ? undefined : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.number({ error: 'must be a whole number' }).int('must be a whole number').optional(),
);

/** Every key a step may carry; anything else is reported by the linter as unknown. */
export const STEP_KEYS: ReadonlySet<string> = new Set([
  'name', 'type', 'log', 'pre_condition', 'timeout', 'depends_on', 'exports', 'on_success', 'on_error', 'decision',
  'suppress_details', 'command', 'commands', 'parallel_commands', 'speed_args', 'config_args', 'input_args',
  'output_args', 'std_file', 'function', 'functions', 'parallel_functions', 'parallel_steps', 'input', 'variable',
  'step', 'parallel', 'threads', 'variable_pre_process', 'step_runner', 'step_runner_config', 'step_remote_file',
  'host_output_file', 'url', 'method', 'headers', 'request_body', 'messages', 'is_embedding', 'embedding_input',
  'llm_config', 'tools', 'tool_choice', 'extra_llm_parameters', 'stream', ...AGENT_KEYS,
]);

const TYPE_LIST = STEP_TYPES.join(', ');

/** Export values are expressions: scalars become text; structures are rejected. */
const optExports = z.preprocess(
  (v) => {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, x === null ? '' : scalarText(x)]));
  },
  z.record(z.string(), z.string({ error: 'export value must be a scalar expression' }), { error: 'must be a mapping of variable names to expressions' }).optional(),
);

const optForeachInput = z.preprocess(
  (v) => (Array.isArray(v) ? v.map(scalarText) : scalarText(v)),
  z.union([z.string(), z.array(z.string())], { error: 'must be a file path or a list of strings' }).optional(),
);

function stepTypeSchema(defaultType?: StepType) {
  const base = z.enum(STEP_TYPES, {
    error: (iss) => (iss.input === undefined ? 'step type is required' : `must be one of ${TYPE_LIST}`),
  });
  return defaultType ? z.preprocess((v) => (v === null || v === undefined ? defaultType : v), base) : base;
}

/** Builds the raw → Step schema; `defaultType` serves hook steps, where a missing type means bash. */
function buildStepSchema(defaultType?: StepType): z.ZodType<Step> {
  return z
    .looseObject(
      {
        name: reqString('step name is required'),
        type: stepTypeSchema(defaultType),
        log: optString,
        pre_condition: optString,
        timeout: optTimeout,
        depends_on: optStringList,
        exports: optExports,
        on_success: optActions,
        on_error: optActions,
        decision: DecisionSchema,
        suppress_details: optBool,
        command: optString,
        commands: optStringList,
        parallel_commands: optStringList,
        speed_args: optString,
        config_args: optString,
        input_args: optString,
        output_args: optString,
        std_file: optString,
        function: optString,
        functions: optStringList,
        parallel_functions: optStringList,
        get parallel_steps() {
          return z.preprocess((v) => (v === null ? undefined : v), z.array(StepSchema, { error: 'must be a list of steps' }).min(1, 'must list at least one step').optional());
        },
        input: optForeachInput,
        variable: optString,
        get step() {
          return z.preprocess((v) => (v === null ? undefined : v), StepSchema.optional());
        },
        parallel: optConcurrency,
        threads: optConcurrency,
        variable_pre_process: optString,
        step_runner: optString,
        step_runner_config: RunnerConfigSchema,
        step_remote_file: optString,
        host_output_file: optString,
        url: optString,
        method: optString,
        headers: optStringMap,
        request_body: optString,
        messages: optMessages,
        is_embedding: optBool,
        embedding_input: optStringList,
        llm_config: LlmConfigSchema,
        tools: z.preprocess((v) => (v === null ? undefined : v), z.array(z.unknown(), { error: 'must be a list' }).optional()),
        tool_choice: z.unknown().optional(),
        extra_llm_parameters: optAnyMap,
        stream: optBool,
        query: optString,
        queries: optStringList,
        max_iterations: optPositiveInt,
        agent_tools: z.preprocess((v) => (v === null ? undefined : v), z.array(AgentToolSchema, { error: 'must be a list of tools' }).optional()),
        system_prompt: optString,
        parallel_tool_calls: optBool,
        allowed_commands: optStringList,
        allowed_paths: optStringList,
        agent: optString,
        acp_config: AcpConfigSchema,
        cwd: optString,
      },
      { error: 'must be a mapping' },
    )
    .transform((raw): Step => {
      const unknown = unknownKeysOf(raw, STEP_KEYS);
      return compact({
        name: raw.name,
        type: raw.type as StepType,
        log: raw.log,
        pre_condition: raw.pre_condition,
        timeout: raw.timeout,
        depends_on: raw.depends_on,
        exports: raw.exports,
        on_success: raw.on_success,
        on_error: raw.on_error,
        decision: raw.decision,
        suppress_details: raw.suppress_details,
        command: raw.command,
        commands: raw.commands,
        parallel_commands: raw.parallel_commands,
        speed_args: raw.speed_args,
        config_args: raw.config_args,
        input_args: raw.input_args,
        output_args: raw.output_args,
        std_file: raw.std_file,
        function: raw.function,
        functions: raw.functions,
        parallel_functions: raw.parallel_functions,
        parallel_steps: raw.parallel_steps,
        input: raw.input,
        variable: raw.variable,
        step: raw.step,
        parallel: raw.parallel,
        threads: raw.threads,
        variable_pre_process: raw.variable_pre_process,
        // validate.ts reports values other than docker|ssh with the reference's wording.
        step_runner: raw.step_runner as RunnerType | undefined,
        step_runner_config: raw.step_runner_config,
        step_remote_file: raw.step_remote_file,
        host_output_file: raw.host_output_file,
        url: raw.url,
        method: raw.method,
        headers: raw.headers,
        request_body: raw.request_body,
        messages: raw.messages,
        is_embedding: raw.is_embedding,
        embedding_input: raw.embedding_input,
        llm_config: raw.llm_config,
        tools: raw.tools,
        tool_choice: raw.tool_choice,
        extra_llm_parameters: raw.extra_llm_parameters,
        stream: raw.stream,
        query: raw.query,
        queries: raw.queries,
        max_iterations: raw.max_iterations,
        agent_tools: raw.agent_tools?.map((t) => compact({ preset: t.preset, name: t.name, description: t.description, parameters: t.parameters, handler: t.handler })),
        system_prompt: raw.system_prompt,
        parallel_tool_calls: raw.parallel_tool_calls,
        allowed_commands: raw.allowed_commands,
        allowed_paths: raw.allowed_paths,
        unsupported_agent_fields: presentKeys(raw, UNSUPPORTED_AGENT_KEYS),
        agent: raw.agent,
        acp_config: raw.acp_config ? compact({ command: raw.acp_config.command, args: raw.acp_config.args, env: raw.acp_config.env, write_enabled: raw.acp_config.write_enabled }) : undefined,
        cwd: raw.cwd,
        unknown_keys: unknown.length > 0 ? unknown : undefined,
      });
    }) as unknown as z.ZodType<Step>;
}

/** The keys of `keys` present (not null) in `raw`; undefined when none. */
function presentKeys(raw: Record<string, unknown>, keys: readonly string[]): string[] | undefined {
  const found = keys.filter((k) => raw[k] !== undefined && raw[k] !== null);
  return found.length ? found : undefined;
}

/** A step as written in `steps:` (type required). */
export const StepSchema: z.ZodType<Step> = z.lazy(() => buildStepSchema());

/** A hook step (`hooks.pre_scan_steps` / `post_scan_steps`): a missing type means bash. */
export const HookStepSchema: z.ZodType<Step> = z.lazy(() => buildStepSchema('bash'));

/** A list of steps (null = absent). */
export const optSteps = z.preprocess((v) => (v === null ? undefined : v), z.array(StepSchema, { error: 'must be a list of steps' }).optional());
