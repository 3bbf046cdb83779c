/**
 * The options of a run (`runs.options`): the only keys a stored run may carry back into the engine,
 * defined once. Rows come from many places (the CLI, the API, the scheduler, webhook templates,
 * distributed tasks, and before import cleaned them, snapshot archives), so a row is read through
 * an allowlist: unknown keys are dropped and a value that fails its check is dropped on its own.
 * Creating a run checks the same schema strictly, so a bad value is an error there.
 */
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { errors, messageOf } from '../errors.js';
import { validateParamValue, validateTarget } from '../workflow/target.js';
import type { RunInput } from '../engine/types.js';
import { scopeSpecSchema } from '../scope/schema.js';

/** setTimeout's largest delay (~24.8 days); a longer one would fire at once. */
export const MAX_RUN_TIMEOUT_MS = 2 ** 31 - 1;

/** A value that passes `check` (which throws a catalogue error) or the check's message as an issue. */
function checked(check: (v: string) => void) {
  return (v: string, ctx: z.RefinementCtx) => {
    try {
      check(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: messageOf(err) });
    }
  };
}

/** A worker label: `name` or `key=value` (docs/distributed.md "Routing"). */
export const LABEL_PATTERN = /^[A-Za-z0-9._-]{1,64}(=[A-Za-z0-9._:/@+-]{0,128})?$/;
export const LABEL_HINT = 'a label is name or key=value (letters, digits, ".", "_", "-"; values may also use ":", "/", "@", "+")';

const moduleNames = z.array(z.string().max(255).superRefine(checked((v) => validateParamValue('module', v)))).max(1000);

/** Options a caller sets when it creates a run. */
const optionFields = {
  /** `-T` on the CLI: only shown to workflows as `TargetFile` (the targets were read from it already). */
  targetFile: z.string().max(4096).refine((v) => !v.includes('\0'), 'must not contain NUL'),
  tactic: z.string().max(64).regex(/^[A-Za-z0-9_-]*$/, 'letters, digits, "_" and "-" only'),
  threadsHold: z.number().int().min(0),
  heuristics: z.enum(['none', 'basic', 'advanced']),
  /** `-S` / API `workspace`; the engine makes it a safe folder name, and it reaches workflows as `space_name`. */
  space: z.string().max(255).superRefine(checked((v) => validateParamValue('space', v))),
  /** `-W` on the CLI (an operator's folder); an API request cannot set it. */
  workspacesOverride: z.string().max(4096).refine((v) => isAbsolute(v) && !v.includes('\0'), 'must be an absolute path'),
  exclude: moduleNames,
  fuzzyExclude: moduleNames,
  timeoutMs: z.number().int().positive().max(MAX_RUN_TIMEOUT_MS, `the run timeout must be at most ${Math.floor(MAX_RUN_TIMEOUT_MS / 60_000)} minutes`),
  skipValidation: z.boolean(),
  emptyTarget: z.boolean(),
  disableWorkflowState: z.boolean(),
  disableNotification: z.boolean(),
  /** How many targets of the same request may run at once (API `concurrency`). */
  concurrency: z.number().int().positive(),
  runnerType: z.enum(['host', 'docker', 'ssh']),
  dockerImage: z.string().max(512).superRefine(checked((v) => validateTarget(v, 'docker_image'))),
  sshHost: z.string().max(512).superRefine(checked((v) => validateTarget(v, 'ssh_host'))),
  /** The run's target scope (`--scope-file`, API `scope`): `{ include, exclude }` entry lists. */
  scope: scopeSpecSchema,
  /** Distributed runs: labels a worker must have to take the task. */
  labels: z.array(z.string().regex(LABEL_PATTERN, LABEL_HINT)).max(16),
};

/** Keys the engine and the queue add themselves; never taken from a request. */
const internalFields = {
  /** Where the workflow was found when the run was created; honoured only inside the workflows folder. */
  workflow_path: z.string().max(4096),
  /** The run this one resumes (its completed steps are reused). */
  resume_of: z.number().int().positive(),
};

type Shape = Record<string, z.ZodType>;
type Optional<S extends Shape> = { [K in keyof S]: z.ZodOptional<S[K]> };
type Tolerant<S extends Shape> = { [K in keyof S]: z.ZodCatch<z.ZodOptional<S[K]>> };

function optional<S extends Shape>(shape: S): Optional<S> {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as Optional<S>;
}

/** Each key optional, and a value that fails its check becomes undefined instead of failing the object. */
function tolerant<S extends Shape>(shape: S): Tolerant<S> {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional().catch(undefined)])) as Tolerant<S>;
}

/** The options of a run request (strict: a bad value is an error; unknown keys are dropped). */
export const runOptionsSchema = z.object(optional(optionFields));
export type RunOptions = z.infer<typeof runOptionsSchema>;

/** What a row's options column is read as: the allowlist, each bad value dropped on its own. */
const storedRunOptionsSchema = z.object(tolerant({ ...optionFields, ...internalFields }));
export type StoredRunOptions = z.infer<typeof storedRunOptionsSchema>;

/** Options only the operator's own command line sets: an API duplicate or resume drops them. */
export const OPERATOR_ONLY_OPTIONS = ['targetFile', 'workspacesOverride'] as const satisfies readonly (keyof RunOptions)[];

/** Checks the options of a new run; a 400 naming every bad key. */
export function checkRunOptions(value: unknown): RunOptions {
  const r = runOptionsSchema.safeParse(value ?? {});
  if (!r.success) throw errors.validation(`invalid run options: ${r.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ')}`);
  return withoutUndefined(r.data);
}

/** A stored options column read through the allowlist (never throws). */
export function storedRunOptions(value: unknown): StoredRunOptions {
  const raw = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const r = storedRunOptionsSchema.safeParse(raw);
  return r.success ? withoutUndefined(r.data) : {};
}

/** The caller-settable part of a stored options column (internal keys removed). */
export function requestOptionsOf(value: unknown, opts: { operator: boolean }): RunOptions {
  const { workflow_path: _w, resume_of: _r, ...rest } = storedRunOptions(value);
  if (!opts.operator) for (const k of OPERATOR_ONLY_OPTIONS) delete rest[k];
  return rest;
}

/** The engine input of a run: target and params from the row, flags from the allowlisted options. */
export function engineInputOf(target: string, params: Record<string, string>, options: StoredRunOptions): RunInput {
  const o = options;
  const input: RunInput = { target, params };
  if (o.targetFile !== undefined) input.targetFile = o.targetFile;
  if (o.tactic !== undefined) input.tactic = o.tactic;
  if (o.threadsHold !== undefined) input.threadsHold = o.threadsHold;
  if (o.heuristics !== undefined) input.heuristics = o.heuristics;
  if (o.space !== undefined) input.space = o.space;
  if (o.workspacesOverride !== undefined) input.workspacesOverride = o.workspacesOverride;
  if (o.exclude !== undefined) input.exclude = o.exclude;
  if (o.fuzzyExclude !== undefined) input.fuzzyExclude = o.fuzzyExclude;
  if (o.timeoutMs !== undefined) input.timeoutMs = o.timeoutMs;
  if (o.skipValidation !== undefined) input.skipValidation = o.skipValidation;
  if (o.emptyTarget !== undefined) input.emptyTarget = o.emptyTarget;
  if (o.disableWorkflowState !== undefined) input.disableWorkflowState = o.disableWorkflowState;
  if (o.disableNotification !== undefined) input.disableNotification = o.disableNotification;
  if (o.scope !== undefined && (o.scope.include.length || o.scope.exclude.length)) input.scope = o.scope;
  if (o.runnerType === 'docker' && o.dockerImage) input.runnerOverride = { type: 'docker', config: { image: o.dockerImage } };
  if (o.runnerType === 'ssh' && o.sshHost) {
    const [user, host] = o.sshHost.includes('@') ? o.sshHost.split('@', 2) : ['', o.sshHost];
    input.runnerOverride = { type: 'ssh', config: { host: host!, ...(user ? { user } : {}) } };
  }
  return input;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
