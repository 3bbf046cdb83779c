/**
 * The two ways a script stops early. They live apart from js-runtime.ts so the function library
 * can throw them without importing the runtime (which imports the library).
 */
import { OsmError } from '../../errors.js';

/** Thrown by `skip(msg?)`: the current module ends as skipped. */
export class SkipSignal extends Error {
  constructor(msg?: string) {
    super(`skip module: ${msg === undefined || msg === '' || msg === 'undefined' ? 'skip() called' : msg}`);
    this.name = 'SkipSignal';
  }
}

/** A script failed (syntax, reference or runtime error, timeout, `exit()`). */
export class ScriptError extends OsmError {
  constructor(message: string) {
    super('OSM_ERR_SCRIPT', 400, message);
    this.name = 'ScriptError';
  }
}

/** The ScriptError for a JS error message, in the reference's wording. */
export function scriptError(jsMessage: string): ScriptError {
  return new ScriptError(`error executing expression: ${jsMessage}`);
}
