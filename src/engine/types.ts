import type { LanePool } from './steps/lanes.js';
import type { AsyncStore, Store } from '../store/index.js';
import type { DbLocator } from '../store/locator.js';
import type { LoadedSettings } from '../settings/index.js';
import type { WorkflowLoader } from '../workflow/loader.js';
import type { RunnerConfig, RunnerType, Step, Workflow } from '../workflow/types.js';
import type { ProcessRegistry } from './process-registry.js';
import type { RunPrinter } from './printer.js';
import type { ExecutionLog } from './exec-log.js';
import type { RunRecorder } from './recorder.js';
import type { LiveListener, RunOutput } from './live/run-output.js';
import type { LayerSpec, ScopeCounts, ScopeSet, ScopeSpec } from '../scope/index.js';

/** What the engine needs from its host (CLI process or daemon). */
export interface EngineDeps {
  /**
   * The synchronous SQLite store, present only when the engine is SQLite (SQLite-file tooling and
   * inline script evaluation use it); everything else uses `repos` (docs/database.md).
   */
  store?: Store;
  /** Where another process or thread (script evaluators) reopens the same database. */
  db: DbLocator;
  /** The store behind the async repository interface: SQLite (adapted) or PostgreSQL. */
  repos: AsyncStore;
  /** Read at each run start so a settings reload applies to the next run. */
  settings: () => LoadedSettings;
  loader: WorkflowLoader;
  registry: ProcessRegistry;
}

/** Inputs of one run besides the workflow (CLI flags or API fields). */
export interface RunInput {
  target: string;
  /** Provided params (CLI -p over -P file, or the API's params), already validated. */
  params: Record<string, string>;
  targetFile?: string;
  tactic?: string;
  threadsHold?: number;
  heuristics?: 'none' | 'basic' | 'advanced';
  space?: string;
  workspacesOverride?: string;
  exclude?: string[];
  fuzzyExclude?: string[];
  /** Whole-run timeout. */
  timeoutMs?: number;
  skipValidation?: boolean;
  emptyTarget?: boolean;
  disableWorkflowState?: boolean;
  /** Do not send webhook notifications (`--disable-notification`). */
  disableNotification?: boolean;
  /** API runner_type override for bash steps. */
  runnerOverride?: { type: RunnerType; config: RunnerConfig };
  /** The run's own target scope (`--scope-file`, POST /runs `scope`); it narrows the others. */
  scope?: ScopeSpec;
}

/** Options of how a run is shown. */
export interface DisplayOptions {
  stdout: boolean;
  silent: boolean;
  color: boolean;
  verbose?: boolean;
  prefix?: string;
  /** Spinner for long steps (interactive terminals only). */
  spinner?: boolean;
  /** --disable-logging. */
  noLogLines?: boolean;
  /** Hears the run's live events: every output line, step and run change (`osm run --json`). */
  listener?: LiveListener;
}

/** State shared by everything that executes within one run. */
export interface Execution {
  deps: EngineDeps;
  settings: LoadedSettings;
  input: RunInput;
  recorder: RunRecorder;
  printer: RunPrinter;
  /** The run's output as it happens: step log files, journal, live listeners (see live/run-output.ts). */
  output: RunOutput;
  log: ExecutionLog;
  signal: AbortSignal;
  /** Why the run was aborted ('cancelled' | 'timeout'), once it was. */
  abortReason(): string | undefined;
  startedAt: number;
  runUuid: string;
  /** Environment for child processes (process env + binaries on PATH + global_vars). */
  baseEnv: Record<string, string>;
  /** Per-run counter to name step log files. */
  nextLogIndex(): number;
  logDir: string;
  /**
   * Resume of an earlier run: its completed steps (by module and step name) are reused — their
   * exports restored, nothing executed — up to the first step that did not complete.
   */
  resume?: { sourceRunUuid: string; steps: Map<string, { exports: Record<string, unknown>; output: string }>; active: boolean };
  /** Modules of a flow that completed, with their variables (their reports become artifacts). */
  completedModules: { workflow: Workflow; vars: Record<string, unknown> }[];
  /**
   * The target scope in force (docs/scope.md), when one is configured: foreach items and imported
   * rows out of it are dropped; `counts` are this process's drops (imports in evaluator processes
   * add theirs to the run's row directly).
   */
  targetScope?: { set: ScopeSet; specs: LayerSpec[]; counts: ScopeCounts };
  /** A scope was recorded for this run (runs.initScope): its counts are read for the summary. */
  scopeRecorded?: boolean;
}

/** The variables and settings of the module (or flow) currently executing. */
export interface Scope {
  exec: Execution;
  workflow: Workflow;
  moduleName: string;
  vars: Record<string, unknown>;
  /** Variables whose values came from untrusted data (tool output, script results, responses). */
  tainted: Set<string>;
  runner: { type: RunnerType; config: RunnerConfig };
  /** User param keys (for OSM_PARAM_* env vars). */
  userParamKeys: string[];
  /**
   * A module's own target scope inside a flow: the run's layers plus the module's `scope:` key
   * (docs/scope.md). Absent: the run's scope (`exec.targetScope`) applies.
   */
  targetScope?: Execution['targetScope'];
}

/** What a step type executor returns on success. */
export interface DispatchResult {
  output: string;
  lines: number;
  /** Automatic exports (http/llm responses …); always tainted. */
  autoExports?: Record<string, unknown>;
  /** Exports gathered from children (parallel-steps). */
  childExports?: Record<string, unknown>;
  childTainted?: string[];
  /** Rendered commands/scripts, for the step record. */
  commands: string[];
  /** Exit code of the step's last command (steps that run processes). */
  exitCode?: number;
}

/** A failed step: message plus what was rendered and printed. */
export class StepFailure extends Error {
  constructor(
    message: string,
    readonly output = '',
    readonly commands: string[] = [],
    /** Exit code of the failing command; null when it was killed or no process ran. */
    readonly exitCode: number | null = null,
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

/** `skip()` was called: the step is skipped and the module ends as skipped. */
export class ModuleSkip extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModuleSkip';
  }
}

/** The run was cancelled or timed out. */
export class RunAborted extends Error {
  constructor(readonly reason: string) {
    super(reason === 'timeout' ? 'run timed out' : 'run cancelled');
    this.name = 'RunAborted';
  }
}

export type StepExecutor = (step: Step, scope: Scope, ctx: StepContext) => Promise<DispatchResult>;

/** Per-dispatch information. */
export interface StepContext {
  logFile: string;
  timeoutMs?: number;
  /** Shell lanes of an enclosing foreach (see steps/lanes.ts). */
  lanes?: LanePool;
  /** The parallel-steps child this runs as (its name): live output lines say whose they are. */
  part?: string;
}
