/** Logging, colour printing and runtime-variable functions (reference §10.2 "logging"). */
import type { FnImpl } from './registry.js';
import { argStr, asText, stateOf, type LineColor } from './helpers.js';

/** Prints `<prefix> msg` (prefix may be empty) and returns the message. */
const printer = (prefix: string, color?: LineColor): FnImpl => (ctx, m) => {
  const msg = asText(m);
  stateOf(ctx).emit(prefix ? `${prefix} ${msg}` : msg, color);
  return msg;
};

/** The logging functions, by snake_case name (aliases come from the catalogue). */
export const loggingFunctions: Record<string, FnImpl> = {
  log_debug: printer('[DEBUG]'),
  log_info: printer('[INFO]'),
  log_warn: printer('[WARN]', 'yellow'),
  log_error: printer('[ERROR]', 'red'),
  print_green: printer('', 'green'),
  print_blue: printer('', 'blue'),
  print_yellow: printer('', 'yellow'),
  print_red: printer('', 'red'),
  // The runtime also defines the variable as a JS global of the same evaluation (see js-runtime).
  set_var: (ctx, n, v) => {
    const name = argStr(n);
    if (name === null) return '';
    stateOf(ctx).runtimeVars.set(name, v);
    return v;
  },
  get_var: (ctx, n) => {
    const name = argStr(n);
    if (name === null) return '';
    const vars = stateOf(ctx).runtimeVars;
    return vars.has(name) ? vars.get(name) : '';
  },
};
