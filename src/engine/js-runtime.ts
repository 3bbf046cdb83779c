/**
 * The JavaScript runtime for workflow expressions (reference server-api §10.1, workflow-engine §2.7),
 * built on node:vm.
 *
 * Isolation rules, and why:
 * - Every evaluation gets a fresh context, so nothing (a `var`, a patched prototype) leaks into the next.
 * - The context is created from a null-prototype object with string code generation and wasm off,
 *   so `this.constructor.constructor('…')` and `eval` fail inside the sandbox realm.
 * - No host object ever enters the sandbox: library functions are sandbox-realm wrappers around one
 *   host callback held in a closure; arguments leave as JSON text, results come back as JSON text
 *   parsed by the sandbox's own JSON, host errors come back as messages. A host function, array or
 *   error in the sandbox would hand out the host's `Function` constructor.
 * - Library functions are installed as non-writable, non-configurable globals before variables are
 *   bound, and variables never replace an existing global: an export named `file_exists` cannot
 *   shadow `file_exists(...)`. camelCase aliases that clash with JS globals (`parseInt`,
 *   `parseFloat`, `toString`) are not installed: in scripts those are the JS built-ins, and the
 *   library's versions are `parse_int`, `parse_float`, `to_string`.
 * - Time limit: vm `timeout` for script code; blocking library calls (exec_cmd, sleep, http) get the
 *   remaining budget. The result is exported inside the sandbox under the same budget, so a
 *   hostile getter cannot hang the host either.
 */
import vm from 'node:vm';
import { boundFunctionNames, getFunction } from './functions/registry.js';
import { CALL_STATE, makeEmitter, setNestedEvaluator, type CallState } from './functions/helpers.js';
import { ScriptError, SkipSignal, scriptError } from './functions/signals.js';
import type { OutboundPolicy } from '../util/outbound.js';

export { ScriptError, SkipSignal };

/** What library functions may know about the evaluation's run. */
import type { LayerSpec } from '../scope/index.js';

export interface FnContext {
  workspace?: string;
  runUuid?: string;
  dbRunId?: number;
  workflowName?: string;
  workflowKind?: string;
  target?: string;
  /** The workspace folder (`{{Output}}`). */
  output?: string;
  stateFile?: string;
  /** Receives every printed line; default: a line on process.stdout. */
  log?: (line: string) => void;
  /** For database functions (registered by the data plane). */
  store?: unknown;
  settings?: unknown;
  signal?: AbortSignal;
  /** Working directory of commands started by functions. */
  cwd?: string;
  /**
   * Set for evaluations made for an API client: the http functions may then only reach what
   * the policy allows (src/util/outbound.ts). Workflow scripts run without one.
   */
  outbound?: OutboundPolicy;
  /** The run's target scope layers (docs/scope.md): imports drop and count rows out of scope. */
  scope?: LayerSpec[];
}

export interface EvalOptions {
  /** Default 10 000 ms. */
  timeoutMs?: number;
  ctx?: FnContext;
  /** Bind only the variables whose names appear in the script (conditions). */
  lazyBind?: boolean;
}

export interface EvalResult {
  /** The value of the last expression statement, as plain JSON-able data (`undefined` → null). */
  value: unknown;
  /** Every line printed by log_ / print_ / printf / cat_file, in order. */
  logs: string[];
}

const DEFAULT_TIMEOUT_MS = 10_000;
const UNDEF = '\u0000osm:undefined';

/** Runs once per context: installs the library and returns the sandbox-side helpers. */
const BRIDGE = new vm.Script(`(function (host, names, UNDEF) {
  'use strict';
  const g = globalThis, parse = JSON.parse, stringify = JSON.stringify, define = Object.defineProperty;
  const freeze = Object.freeze, hasOwn = Object.prototype.hasOwnProperty, E = Error, S = String, WS = WeakSet;
  define(E, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
  define(g, 'Error', { value: E, writable: false, configurable: false, enumerable: false });
  delete g.WebAssembly;
  const argReplacer = (k, v) => (v === undefined || typeof v === 'function' ? UNDEF : typeof v === 'bigint' ? S(v) : v);
  const call = (name, args) => {
    const r = parse(host(name, stringify(args, argReplacer)));
    if (hasOwn.call(r, 'e')) throw new E(r.e);
    return r.v;
  };
  // Library functions live on a frozen object spliced into the global's prototype chain: one cheap
  // object instead of hundreds of interceptor-backed global properties, and a name that already
  // resolves (a variable, a JS built-in such as parseInt) is never bound over it.
  const lib = Object.create(Object.getPrototypeOf(g));
  const install = (n, f) => {
    define(f, 'name', { value: n });
    lib[n] = freeze(f);
  };
  for (let i = 0; i < names.length; i++) {
    const n = names[i];
    if (n in g) continue;
    if (n === 'set_var' || n === 'setVar') {
      install(n, (...args) => {
        const v = call(n, args);
        const key = S(args[0]);
        // Defines a global for the rest of this evaluation, unless the name is a library function.
        if (args[0] !== undefined && args[0] !== '' && !(key in lib)) {
          try { define(g, key, { value: args[1], writable: true, configurable: true, enumerable: false }); } catch (e) { /* not definable */ }
        }
        return v;
      });
    } else install(n, (...args) => call(n, args));
  }
  freeze(lib);
  Object.setPrototypeOf(g, lib);
  const bind = (json) => {
    const vars = parse(json);
    for (const k in vars) if (!(k in g)) define(g, k, { value: vars[k], writable: true, configurable: true, enumerable: true });
  };
  const plain = (k, v) => (typeof v === 'bigint' ? S(v) : typeof v === 'function' || typeof v === 'symbol' ? undefined : v);
  const exportValue = (v) => {
    const box = { t: !!v, v: v === undefined ? null : v };
    try { return stringify(box, plain); } catch (e) {
      const seen = new WS();
      return stringify(box, (k, x) => {
        x = plain(k, x);
        if (x !== null && typeof x === 'object') { if (seen.has(x)) return null; seen.add(x); }
        return x;
      });
    }
  };
  const errorText = (e) => {
    try {
      if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
        const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name + ': ' : '';
        return name + e.message;
      }
      return S(e);
    } catch (x) { return 'uncaught exception'; }
  };
  return { bind, exportValue, errorText };
})`, { filename: 'osm-bridge.js' });

const EXPORT_SCRIPT = new vm.Script('__osm_export__(__osm_value__)', { filename: 'osm-export.js' });
const ERROR_SCRIPT = new vm.Script('__osm_error_text__(__osm_value__)', { filename: 'osm-error.js' });

// Compiled scripts are context-independent; workflows evaluate the same expressions repeatedly.
const scriptCache = new Map<string, vm.Script>();
const SCRIPT_CACHE_LIMIT = 500;

/** Compiles (cached) or throws the ScriptError of a syntax error. */
function compile(source: string): vm.Script {
  const hit = scriptCache.get(source);
  if (hit) return hit;
  // Node answers import() in a vm script with a rejection whose error belongs to the host realm,
  // i.e. a way to the host's Function constructor; the keyword can only mean that call here.
  if (DYNAMIC_IMPORT.test(source)) throw scriptError('import() is not allowed in scripts');
  let script: vm.Script;
  try {
    script = new vm.Script(source, { filename: 'osm-script.js' });
  } catch (err) {
    const e = err as Error;
    throw scriptError(`${e.name ?? 'SyntaxError'}: ${e.message}`);
  }
  if (scriptCache.size >= SCRIPT_CACHE_LIMIT) scriptCache.delete(scriptCache.keys().next().value!);
  scriptCache.set(source, script);
  return script;
}

/** `import(`, also with whitespace or a comment before the parenthesis (not `x.import(`). */
const DYNAMIC_IMPORT = /(?<![.\w$])import\s*(?:\(|\/[*/])/;

let rejectionGuardInstalled = false;

/**
 * A script can leave a rejected promise behind (`Promise.reject(1)`); Node would treat it as an
 * unhandled rejection of the whole process. Rejections of sandbox promises (not instances of the
 * host's Promise) are the script's own business and are dropped; host rejections keep the default
 * behaviour when nobody else listens.
 */
function installRejectionGuard(): void {
  if (rejectionGuardInstalled) return;
  rejectionGuardInstalled = true;
  process.on('unhandledRejection', (reason, promise) => {
    if (!(promise instanceof Promise)) return;
    if (process.listenerCount('unhandledRejection') > 1) return;
    throw reason;
  });
}

interface Sandbox {
  context: vm.Context;
  global: Record<string, unknown>;
  bind: (json: string) => void;
}

/** Derives the function context from the variables (Workspace, RunUUID, DBRunID…), explicit ctx first. */
function deriveContext(base: FnContext | undefined, vars: Record<string, unknown>): FnContext {
  const s = (k: string) => (typeof vars[k] === 'string' && vars[k] !== '' ? (vars[k] as string) : typeof vars[k] === 'number' ? String(vars[k]) : undefined);
  const runId = Number(vars.DBRunID);
  const derived: FnContext = {
    workspace: s('Workspace') ?? s('TargetSpace'),
    runUuid: s('RunUUID') ?? s('TaskID'),
    dbRunId: vars.DBRunID !== undefined && vars.DBRunID !== '' && Number.isInteger(runId) ? runId : undefined,
    workflowName: s('WorkflowName'),
    workflowKind: s('WorkflowKind'),
    target: s('Target'),
    output: s('Output'),
    stateFile: s('StateFile'),
  };
  const out: FnContext = { ...base };
  for (const [k, v] of Object.entries(derived) as [keyof FnContext, unknown][]) {
    if (v !== undefined && (out[k] === undefined || out[k] === '')) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** JSON text of the variables to bind (non-JSON values dropped, BigInt as text). */
function varsJson(vars: Record<string, unknown>, only?: Set<string>): string {
  const picked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(vars)) if (!only || only.has(k)) picked[k] = v;
  try {
    return JSON.stringify(picked, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) ?? '{}';
  } catch {
    // A cyclic variable: bind the others.
    const safe: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(picked)) {
      try {
        JSON.stringify(v);
        safe[k] = v;
      } catch {
        // skipped
      }
    }
    return JSON.stringify(safe);
  }
}

/** The host side of every library call: JSON in, JSON out, errors as messages. */
function makeHost(ctx: FnContext, state: CallState & { fatal?: Error }): (name: string, argsJson: string) => string {
  const fnCtx = { ...ctx, [CALL_STATE]: state } as FnContext;
  const revive = (_k: string, v: unknown) => (v === UNDEF ? undefined : v);
  return (name, argsJson) => {
    if (state.fatal) return JSON.stringify({ e: state.fatal.message });
    if (ctx.signal?.aborted) return JSON.stringify({ e: 'evaluation cancelled' });
    const fn = getFunction(name);
    if (!fn) return JSON.stringify({ e: `${name} is not a function` });
    try {
      const args = JSON.parse(argsJson, revive) as unknown[];
      const v = fn(fnCtx, ...args);
      // A blocking call (exec_cmd, sleep …) that used up the budget ends the script as a timeout,
      // whether or not vm's own timer got to fire before the call returned.
      if (Date.now() >= state.deadline) {
        state.fatal = scriptError('script timed out: the time budget ran out during a library call');
        return JSON.stringify({ e: state.fatal.message });
      }
      return JSON.stringify({ v }, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? '{}';
    } catch (err) {
      // skip() and exit() end the evaluation even when the script catches the JS error.
      if (err instanceof SkipSignal || err instanceof ScriptError) state.fatal = err;
      return JSON.stringify({ e: err instanceof Error ? err.message : String(err) });
    }
  };
}

/** A fresh sandbox with the library installed. */
function createSandbox(host: (name: string, argsJson: string) => string): Sandbox & { exportValue: unknown; errorText: unknown } {
  const context = vm.createContext(Object.create(null), { codeGeneration: { strings: false, wasm: false }, microtaskMode: 'afterEvaluate' });
  const setup = BRIDGE.runInContext(context) as (h: unknown, n: string[], u: string) => { bind: (j: string) => void; exportValue: unknown; errorText: unknown };
  const helpers = setup(host, boundFunctionNames(), UNDEF);
  const global = vm.runInContext('globalThis', context) as Record<string, unknown>;
  return { context, global, bind: helpers.bind, exportValue: helpers.exportValue, errorText: helpers.errorText };
}

/** Runs a tiny helper script in the sandbox under the remaining budget; returns its string result. */
function runHelper(sb: ReturnType<typeof createSandbox>, which: 'export' | 'error', value: unknown, timeoutMs: number): string | null {
  const g = sb.global;
  try {
    Object.defineProperty(g, '__osm_value__', { value, configurable: true, writable: true });
    Object.defineProperty(g, which === 'export' ? '__osm_export__' : '__osm_error_text__', {
      value: which === 'export' ? sb.exportValue : sb.errorText,
      configurable: true,
      writable: true,
    });
    const out = (which === 'export' ? EXPORT_SCRIPT : ERROR_SCRIPT).runInContext(sb.context, { timeout: Math.max(1, timeoutMs) });
    return typeof out === 'string' ? out : null;
  } catch (err) {
    // vm's own timer may fire a moment before Date.now() reaches the deadline: trust its code.
    if ((err as { code?: string } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return HELPER_TIMED_OUT;
    return null;
  }
}

const HELPER_TIMED_OUT = '\u0000timeout';

/** A primitive completion value as JSON would carry it (`undefined`, NaN, symbols → null). */
function primitiveValue(v: unknown): unknown {
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  return null;
}

interface RunOutcome extends EvalResult {
  truthy: boolean;
}

/** One evaluation. `parent` shares logs and budget with a nested (osm-func) evaluation. */
function run(script: string, vars: Record<string, unknown>, opts: EvalOptions, parent?: CallState): RunOutcome {
  installRejectionGuard();
  // vm wants a positive integer.
  const timeoutMs = opts.timeoutMs !== undefined && Number.isFinite(opts.timeoutMs) ? Math.max(1, Math.round(opts.timeoutMs)) : DEFAULT_TIMEOUT_MS;
  const deadline = Math.min(Date.now() + timeoutMs, parent?.deadline ?? Infinity);
  const ctx = deriveContext(opts.ctx, vars);
  const logs: string[] = [];
  const emit = makeEmitter(logs, ctx.log);
  const state: CallState & { fatal?: Error } = {
    logs,
    emit: parent ? (line, color) => { logs.push(line); parent.emit(line, color); } : emit,
    deadline,
    vars,
    runtimeVars: new Map(),
    evaluate: (nested) => run(nested, vars, { ctx: opts.ctx, timeoutMs: Math.max(1, deadline - Date.now()) }, state).value,
  };
  if (ctx.signal?.aborted) throw scriptError('evaluation cancelled');
  const compiled = compile(script);
  const sb = createSandbox(makeHost(ctx, state));
  const only = opts.lazyBind ? new Set(script.match(/[A-Za-z_$][\w$]*/g) ?? []) : undefined;
  sb.bind(varsJson(vars, only));
  let completion: unknown;
  try {
    completion = compiled.runInContext(sb.context, { timeout: Math.max(1, deadline - Date.now()), breakOnSigint: false });
  } catch (err) {
    if (state.fatal) throw state.fatal;
    if ((err as { code?: string } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' || deadline <= Date.now()) {
      throw scriptError(`script timed out after ${timeoutMs}ms`);
    }
    const primitive = err === null || (typeof err !== 'object' && typeof err !== 'function');
    const text = primitive ? String(err) : runHelper(sb, 'error', err, Math.min(1000, Math.max(50, deadline - Date.now())));
    throw scriptError(text === HELPER_TIMED_OUT ? 'uncaught exception (its message could not be read in time)' : (text ?? 'uncaught exception'));
  }
  if (state.fatal) throw state.fatal;
  // Primitives and functions are exported on the host side; only objects can run code (getters, toJSON).
  if (completion === null || (typeof completion !== 'object' && typeof completion !== 'function')) {
    return { value: primitiveValue(completion), logs, truthy: Boolean(completion) };
  }
  if (typeof completion === 'function') return { value: null, logs, truthy: true };
  const exported = runHelper(sb, 'export', completion, deadline - Date.now());
  if (exported === null || exported === HELPER_TIMED_OUT) {
    if (exported === HELPER_TIMED_OUT || deadline <= Date.now()) throw scriptError(`script timed out after ${timeoutMs}ms`);
    throw scriptError('the result cannot be exported');
  }
  const box = JSON.parse(exported) as { t: boolean; v?: unknown };
  return { value: box.v ?? null, logs, truthy: box.t };
}

/** Evaluates a script; the result is the value of its last expression statement. */
export function evaluate(script: string, vars: Record<string, unknown>, opts: EvalOptions = {}): EvalResult {
  const { value, logs } = guarded(opts, () => run(script, vars, opts));
  return { value, logs };
}

/** Evaluates a condition with JS truthiness (`"false"` is true); errors propagate. */
export function evaluateCondition(expr: string, vars: Record<string, unknown>, opts: EvalOptions = {}): boolean {
  return guarded(opts, () => run(expr, vars, opts)).truthy;
}

/**
 * A script stopped by its time limit is terminated wherever it is — possibly inside a database
 * function, between BEGIN and COMMIT, where no JS `catch` runs. A transaction the evaluation
 * opened and left open is rolled back here, so the connection is never left holding the lock.
 */
function guarded<T>(opts: EvalOptions, fn: () => T): T {
  const store = opts.ctx?.store as { inTransaction?: () => boolean; rollbackOpen?: () => boolean } | undefined;
  const wasOpen = Boolean(store?.inTransaction?.());
  try {
    return fn();
  } finally {
    if (store && !wasOpen) store.rollbackOpen?.();
  }
}

/** True when text looks like a function call (`name(`): the rule for evaluating exports. */
export function looksLikeFunctionCall(text: string): boolean {
  return /\w+\s*\(/.test(text);
}

setNestedEvaluator((script, vars, ctx, timeoutMs) => evaluate(script, vars, { ctx, timeoutMs }));
