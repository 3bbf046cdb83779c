/**
 * What travels through the queue: the task a master adds (job data), the progress a worker
 * reports and the result it returns (job return value). Both ends validate with these schemas:
 * a job written by an older or foreign producer fails cleanly instead of crashing a worker, and a
 * result is checked before the master writes it into its database.
 */
import { z } from 'zod';
import type { Priority } from '../store/index.js';
import { runOptionsSchema } from '../services/run-options.js';
import { localTimestamp } from '../engine/exec-log.js';

/** Version of job data and results; a worker refuses other versions (the schema fails). */
export const PROTOCOL_VERSION = 1;

const str = (max: number) => z.string().max(max);

/** The run's execution-log lines a result carries at most (RESULT_LIMITS.executionLog). */
const EXECUTION_LOG_BYTES = 256 * 1024;

/** Every issue of a failed parse as `path: message`. */
export function issuesText(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}

/**
 * The options of a run a worker honours: a subset of the one run-options schema (paths of the
 * master's machine are never sent; unknown keys are dropped).
 */
export const taskOptionsSchema = runOptionsSchema.pick({
  tactic: true,
  threadsHold: true,
  heuristics: true,
  space: true,
  timeoutMs: true,
  skipValidation: true,
  emptyTarget: true,
  runnerType: true,
  dockerImage: true,
  sshHost: true,
});
export type TaskOptions = z.infer<typeof taskOptionsSchema>;

/** What a task needs from its worker besides its workflow (docs/distributed.md "Routing"). */
export const taskRequirementsSchema = z.object({
  /** Commands the workflow declares in `dependencies` (for a flow, its modules' too). */
  tools: z.array(str(255).min(1).refine((v) => !v.includes('\0'), 'must not contain NUL')).max(200).default([]),
  /** Custom labels the worker must have (`name` or `key=value`). */
  labels: z.array(str(200)).max(16).default([]),
});
export type TaskRequirements = z.infer<typeof taskRequirementsSchema>;

/** Job data: one run of one workflow against one target. */
export const taskDataSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  run_uuid: z.string().uuid(),
  workflow_name: str(255).min(1),
  workflow_kind: z.enum(['flow', 'module']),
  target: str(4096).min(1),
  params: z.record(z.string(), str(65_536)).default({}),
  priority: z.enum(['low', 'normal', 'high', 'critical']).default('normal'),
  workspace: str(255).default(''),
  options: taskOptionsSchema.default({}),
  submitted_at: z.string(),
  /** Additive: a task of an older master has none (any worker with the workflow may take it). */
  requires: taskRequirementsSchema.default({ tools: [], labels: [] }),
  /**
   * Additive: the identity of the master's database (store_meta.store_id). A worker whose own
   * settings open the same PostgreSQL database writes the run straight into it (fenced by the
   * attempt number) instead of shipping its rows.
   */
  store_id: z.string().max(64).default(''),
});
export type TaskData = z.infer<typeof taskDataSchema>;

/** Progress a worker reports while a task runs (`job.updateProgress`). */
export const taskProgressSchema = z.object({
  worker_id: z.string(),
  completed_steps: z.number().int().min(0),
  total_steps: z.number().int().min(0),
  current_step: z.string(),
  /** The attempt this progress belongs to (older attempts' progress is ignored). */
  attempt: z.number().int().min(1).optional(),
});
export type TaskProgress = z.infer<typeof taskProgressSchema>;

const stepSchema = z.object({
  step_uuid: str(64).optional(),
  workspace: str(255),
  module_name: str(255),
  step_name: str(255),
  step_type: str(64),
  step_index: z.number().int(),
  status: z.enum(['pending', 'running', 'completed', 'failed', 'skipped']),
  command: z.string(),
  output: z.string(),
  error_message: z.string(),
  exports: z.record(z.string(), z.unknown()),
  duration_ms: z.number().min(0),
  log_file: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  created_at: z.string(),
});

const eventSchema = z.object({
  topic: str(255),
  event_id: str(64),
  name: str(255),
  source: str(64),
  source_type: str(64),
  data_type: str(64),
  data: z.string(),
  workspace: str(255),
  workflow_name: str(255),
  processed: z.boolean(),
  error: z.string(),
  created_at: z.string(),
});

const artifactSchema = z.object({
  workspace: str(255),
  name: str(1024),
  artifact_path: str(4096),
  artifact_type: str(64),
  content_type: str(128),
  size_bytes: z.number().int().min(0),
  line_count: z.number().int().min(0),
  optional: z.boolean(),
  description: z.string(),
});

/** The job's return value: the run as the worker recorded it. */
export const taskResultSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  worker_id: str(128),
  hostname: str(255),
  run: z.object({
    status: z.enum(['completed', 'failed', 'cancelled']),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    error_message: z.string(),
    total_steps: z.number().int().min(0),
    completed_steps: z.number().int().min(0),
    workspace: str(255),
  }),
  steps: z.array(stepSchema),
  events: z.array(eventSchema),
  artifacts: z.array(artifactSchema),
  truncated: z.boolean(),
  /** The worker wrote the run, its steps and events straight into the master's database (only artifact paths are left to map). */
  direct: z.boolean().optional(),
  /**
   * The run's own lines of its workspace's run-execution.log (JSON lines). That file is shared by
   * the workspace's runs, so it is not shipped whole: the master appends these lines to its own.
   */
  execution_log: z.string().max(EXECUTION_LOG_BYTES + 1024).optional(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;
export type TaskStep = TaskResult['steps'][number];
export type TaskEvent = TaskResult['events'][number];
export type TaskArtifact = TaskResult['artifacts'][number];

/** BullMQ priorities: 1 is served first. */
const PRIORITY_TO_BULL: Readonly<Record<Priority, number>> = { critical: 1, high: 2, normal: 3, low: 4 };

/** The BullMQ priority of a run priority. */
export function bullPriority(p: Priority): number {
  return PRIORITY_TO_BULL[p] ?? PRIORITY_TO_BULL.normal;
}

// ---- bounds --------------------------------------------------------------------------------------

/** Bounds of a task result (it lives in Redis and is written into the master's database). */
export const RESULT_LIMITS = {
  /** The run's execution-log lines a result carries (whole lines; a note line says what was left out). */
  executionLog: EXECUTION_LOG_BYTES,
  executionLogTight: 16 * 1024,
  /** Serialized result size the master accepts without trimming further. */
  maxBytes: 2 * 1024 * 1024,
  stepOutput: 16 * 1024,
  stepOutputTight: 1024,
  exportsBytes: 16 * 1024,
  eventData: 8 * 1024,
  eventDataTight: 1024,
  maxSteps: 5000,
  maxEvents: 2000,
  maxArtifacts: 2000,
} as const;

/**
 * A run's execution-log lines kept within `maxBytes` (whole lines, the first ones), then a JSON
 * line saying how many bytes stayed in the worker's workspace file. `omitted` counts bytes left
 * out before (the collector's).
 */
export function executionLogWithin(text: string, maxBytes: number, workerId: string, omitted = 0): string {
  let kept = text;
  const buf = Buffer.from(text);
  if (buf.length > maxBytes) {
    const end = buf.subarray(0, maxBytes).lastIndexOf(0x0a) + 1;
    kept = buf.subarray(0, end).toString();
    omitted += buf.length - end;
  }
  if (omitted === 0) return kept;
  const note = {
    timestamp: localTimestamp(),
    level: 'WARN',
    message: `${omitted} bytes of this run's execution log were not sent to the master (over the result's limit); they are in worker ${workerId}'s workspace`,
    worker_id: workerId,
  };
  return `${kept}${JSON.stringify(note)}\n`;
}

/**
 * The job's return value: the result without its execution-log lines, which the end record
 * carried (the value is kept in Redis with the job and its event, and parsed by every listener).
 */
export function jobReturnValue(result: TaskResult): TaskResult {
  const { execution_log: _lines, ...returned } = result;
  return returned;
}

const TRUNCATED_NOTE = "\n[truncated by the worker; the full text is in the worker's workspace]";

/**
 * Keeps a result within RESULT_LIMITS: long outputs and event payloads are cut (tighter when the
 * whole is still too large), then the oldest events are dropped. `truncated` says it happened.
 */
export function boundResult(result: TaskResult): TaskResult {
  let changed = false;
  const cut = (text: string, max: number): string => {
    if (text.length <= max) return text;
    changed = true;
    return `${text.slice(0, max)}${TRUNCATED_NOTE}`;
  };
  const shape = (outMax: number, dataMax: number): TaskResult => {
    if (result.steps.length > RESULT_LIMITS.maxSteps || result.events.length > RESULT_LIMITS.maxEvents || result.artifacts.length > RESULT_LIMITS.maxArtifacts) changed = true;
    const steps = result.steps.slice(0, RESULT_LIMITS.maxSteps).map((s) => {
      const exportsText = JSON.stringify(s.exports ?? {});
      const big = exportsText.length > RESULT_LIMITS.exportsBytes;
      if (big) changed = true;
      return {
        ...s,
        output: cut(s.output, outMax),
        command: cut(s.command, outMax),
        error_message: cut(s.error_message, outMax),
        exports: big ? { _truncated: `exports were ${exportsText.length} bytes; kept on the worker` } : s.exports,
      };
    });
    const events = result.events.slice(-RESULT_LIMITS.maxEvents).map((e) => {
      if (e.data.length <= dataMax) return e;
      changed = true;
      return { ...e, data: JSON.stringify({ _truncated: `event data was ${e.data.length} bytes` }) };
    });
    return { ...result, steps, events, artifacts: result.artifacts.slice(0, RESULT_LIMITS.maxArtifacts), truncated: result.truncated || changed };
  };
  const tightLog = (r: TaskResult): TaskResult => {
    if (r.execution_log === undefined || Buffer.byteLength(r.execution_log) <= RESULT_LIMITS.executionLogTight) return r;
    return { ...r, execution_log: executionLogWithin(r.execution_log, RESULT_LIMITS.executionLogTight, r.worker_id) };
  };
  const size = (r: TaskResult) => Buffer.byteLength(JSON.stringify(r));
  let out = shape(RESULT_LIMITS.stepOutput, RESULT_LIMITS.eventData);
  if (size(out) > RESULT_LIMITS.maxBytes) out = tightLog({ ...shape(RESULT_LIMITS.stepOutputTight, RESULT_LIMITS.eventDataTight), truncated: true });
  while (size(out) > RESULT_LIMITS.maxBytes && out.events.length > 0) {
    out = { ...out, events: out.events.slice(Math.ceil(out.events.length / 2)), truncated: true };
  }
  while (size(out) > RESULT_LIMITS.maxBytes && out.steps.length > 0) {
    out = { ...out, steps: out.steps.slice(0, Math.floor(out.steps.length / 2)).map((s) => ({ ...s, output: '', exports: {} })), truncated: true };
  }
  return out;
}
