/**
 * The normalised workflow model: what `parse` produces (after inheritance) and what the plan and
 * the engine consume. Field names follow the Osmedeus YAML (reference workflow-engine §1) so a
 * user's existing files map one to one. Values that may be templated stay strings here; they are
 * rendered at dispatch time.
 */

export type WorkflowKind = 'module' | 'flow';

export const STEP_TYPES = [
  'bash',
  'function',
  'parallel-steps',
  'foreach',
  'remote-bash',
  'http',
  'llm',
  // agent: an LLM tool-calling loop; agent-acp: an Agent Client Protocol agent over stdio.
  'agent',
  'agent-acp',
  // Parsed for compatibility; the engine fails it with a clear "not supported" error.
  'agent-sdk',
] as const;
export type StepType = (typeof STEP_TYPES)[number];

export type ParamType = 'string' | 'bool' | 'int';

export interface Param {
  name: string;
  type: ParamType;
  /** Scalar default as written (string, boolean or number); undefined when absent or empty string. */
  default?: string | boolean | number;
  required: boolean;
  generator?: string;
}

export interface VariableDependency {
  name: string;
  type?: string;
  required?: boolean;
}

export interface Dependencies {
  commands: string[];
  files: string[];
  variables: VariableDependency[];
  target_types: string[];
  functions_conditions: string[];
}

export interface Report {
  name: string;
  path: string;
  type: string;
  description?: string;
  optional: boolean;
}

export interface TriggerEvent {
  topic?: string;
  filters?: string[];
  filter_functions?: string[];
  dedupe_key?: string;
  dedupe_window?: string;
}

export interface Trigger {
  name: string;
  on: 'cron' | 'event' | 'watch' | 'manual';
  schedule?: string;
  event?: TriggerEvent;
  path?: string;
  debounce?: string;
  /** Legacy `{type, path, field, function, name}` or exports-style map `var: expression`. */
  input?: Record<string, unknown>;
  /** Defaults to false when omitted (as the reference). */
  enabled: boolean;
}

export interface Preferences {
  disable_notifications?: boolean;
  disable_logging?: boolean;
  heuristics_check?: 'none' | 'basic' | 'advanced';
  ci_output_format?: boolean;
  silent?: boolean;
  repeat?: boolean;
  repeat_wait_time?: string;
  empty_target?: boolean;
}

export interface RunnerConfig {
  image?: string;
  env?: Record<string, string>;
  volumes?: string[];
  network?: string;
  persistent?: boolean;
  host?: string;
  port?: number | string;
  user?: string;
  key_file?: string;
  password?: string;
  workdir?: string;
}

export type RunnerType = 'host' | 'docker' | 'ssh';

/** on_success / on_error action. */
export interface Action {
  /**
   * log | abort | continue | export | run | notify. Anything else (or nothing, '') parses and does
   * nothing, as in the reference; the linter reports it.
   */
  action: 'log' | 'abort' | 'continue' | 'export' | 'run' | 'notify' | (string & {});
  message?: string;
  condition?: string;
  name?: string;
  /** Raw YAML value (not rendered) for `export`. */
  value?: unknown;
  type?: string;
  command?: string;
  functions?: string[];
  notify?: string;
}

/** Inline work of a decision case or condition. */
export interface DecisionWork {
  command?: string;
  commands?: string[];
  function?: string;
  functions?: string[];
  goto?: string;
}

export interface DecisionCondition extends DecisionWork {
  if: string;
}

export interface Decision {
  switch?: string;
  cases?: Record<string, DecisionWork>;
  default?: DecisionWork;
  conditions?: DecisionCondition[];
}

export interface LlmMessagePart {
  type: 'text' | 'image_url';
  text?: string;
  image_url?: { url: string; detail?: string } | string;
}

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | LlmMessagePart[];
  name?: string;
  tool_call_id?: string;
}

export interface LlmStepConfig {
  provider?: string;
  model?: string;
  max_tokens?: number;
  temperature?: number;
  top_k?: number;
  top_p?: number;
  n?: number;
  timeout?: string | number;
  max_retries?: number;
  stream?: boolean;
  response_format?: Record<string, unknown>;
  custom_headers?: Record<string, string> | string;
}

/** One entry of an agent step's `agent_tools`: a preset by name, or a custom tool whose handler is a function script. */
export interface AgentToolSpec {
  preset?: string;
  name?: string;
  description?: string;
  /** JSON schema of the arguments (custom tools). */
  parameters?: Record<string, unknown>;
  /** Function script evaluated with the call's arguments bound as `args` (custom tools). */
  handler?: string;
}

/** `acp_config` of an agent-acp step: the agent command to start (instead of a named agent). */
export interface AcpStepConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  write_enabled?: boolean;
}

export interface Step {
  name: string;
  type: StepType;
  log?: string;
  pre_condition?: string;
  /** Seconds, a duration text (`30m`, `1h30m`, `2d`) or a template; undefined = none. */
  timeout?: string | number;
  depends_on?: string[];
  exports?: Record<string, string>;
  on_success?: Action[];
  on_error?: Action[];
  decision?: Decision;
  suppress_details?: boolean;

  // bash / remote-bash
  command?: string;
  commands?: string[];
  parallel_commands?: string[];
  speed_args?: string;
  config_args?: string;
  input_args?: string;
  output_args?: string;
  std_file?: string;

  // function
  function?: string;
  functions?: string[];
  parallel_functions?: string[];

  // parallel-steps
  parallel_steps?: Step[];

  // foreach
  input?: string | string[];
  variable?: string;
  step?: Step;
  /** foreach concurrency: `parallel` (spec) or `threads` (reference); int or template text. */
  parallel?: string | number;
  threads?: string | number;
  variable_pre_process?: string;

  // remote-bash
  step_runner?: RunnerType;
  step_runner_config?: RunnerConfig;
  step_remote_file?: string;
  host_output_file?: string;

  // http
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  request_body?: string;

  // llm
  messages?: LlmMessage[];
  is_embedding?: boolean;
  embedding_input?: string[];
  llm_config?: LlmStepConfig;
  tools?: unknown[];
  tool_choice?: unknown;
  extra_llm_parameters?: Record<string, unknown>;
  stream?: boolean;

  // agent (the LLM tool-calling loop)
  query?: string;
  queries?: string[];
  max_iterations?: number;
  agent_tools?: AgentToolSpec[];
  system_prompt?: string;
  parallel_tool_calls?: boolean;
  /** osm: programs the agent's `run_command` tool may start (exact argv[0] match; arguments as argv, never a shell). */
  allowed_commands?: string[];
  /** Folders the agent's file tools (and an ACP agent's file requests) may touch; default the run's output folder. */
  allowed_paths?: string[];
  /** Reference agent fields osm parses but does not execute (sub_agents, memory, …): the step fails naming them. */
  unsupported_agent_fields?: string[];

  // agent-acp
  agent?: string;
  acp_config?: AcpStepConfig;
  cwd?: string;

  /** Keys present in the YAML that the model does not know (kept for the linter). */
  unknown_keys?: string[];
}

export interface ModuleRef {
  name: string;
  path?: string;
  params?: Record<string, string>;
  depends_on?: string[];
  condition?: string;
  on_success?: Action[];
  on_error?: Action[];
  /** Inline module: when non-empty, this entry itself is the module. */
  steps?: Step[];
  description?: string;
  runner?: RunnerType;
  runner_config?: RunnerConfig;
}

export interface Hooks {
  pre_scan_steps: Step[];
  post_scan_steps: Step[];
}

export interface Workflow {
  kind: WorkflowKind;
  name: string;
  description: string;
  tags: string[];
  hidden: boolean;
  help?: { example_targets?: string[]; usage?: string };
  params: Param[];
  dependencies: Dependencies;
  reports: Report[];
  triggers: Trigger[];
  preferences: Preferences;
  hooks: Hooks;
  runner: RunnerType;
  runner_config: RunnerConfig;
  /** module only */
  steps: Step[];
  /** flow only */
  modules: ModuleRef[];
  /** Set when the file used `extends` (name of the parent as written). */
  extends?: string;
  /** Target scope (`scope:` with include/exclude lists; docs/scope.md). */
  scope?: { include: string[]; exclude: string[] };

  /** Absolute path of the file it was loaded from ('' for inline/synthetic workflows). */
  file_path: string;
  /** `sha256:<hex>` of the raw file bytes. */
  checksum: string;
  /** The raw YAML text of the file (for `show --yaml` and the API). */
  raw: string;
}

/** A problem found while parsing, validating or linting. */
export interface WorkflowIssue {
  severity: 'error' | 'warning' | 'info';
  /** File path as given (relative where possible). */
  file: string;
  /** YAML path, e.g. `steps[2].type`. */
  path: string;
  message: string;
  line?: number;
  rule?: string;
}
