/**
 * Param names a run request may not use. Provided params are merged over the built-in variables
 * (reference workflow-engine §2.5), so a param named `Output` or `Target` would move where a run
 * writes or what it scans past every check made on the real values. Every built-in name is
 * reserved (case-sensitive, like template variables) except the thread counts, which the
 * reference documents as overridable (`-p threads=99`).
 */
import { errors } from '../errors.js';
import { BUILTIN_VARIABLE_NAMES } from './builtins.js';
import { validateParamValue } from './target.js';

/** Built-ins a param may override on purpose (reference §2.5: "a `threads` param … replaces the tactic value"). */
const OVERRIDABLE: ReadonlySet<string> = new Set(['threads', 'baseThreads']);

/** Every name a run's params may not set. */
export const RESERVED_PARAM_NAMES: ReadonlySet<string> = new Set(BUILTIN_VARIABLE_NAMES.filter((n) => !OVERRIDABLE.has(n)));

/** Throws `params.<name> is a reserved variable name` for a reserved key. */
export function assertParamNameAllowed(key: string): void {
  if (RESERVED_PARAM_NAMES.has(key)) throw errors.reservedParam(key);
}

/** Validates the params of a run request: no reserved names, every key and value safe. */
export function validateRunParams(params: Record<string, string>): void {
  for (const [k, v] of Object.entries(params)) {
    assertParamNameAllowed(k);
    validateParamValue(k, v);
  }
}
