import { closeSync, createReadStream, existsSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Step } from '../../workflow/types.js';
import { render, valueToString } from '../../workflow/template.js';
import { pathSafe } from '../../workflow/heuristics.js';
import { StepFailure, ModuleSkip, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { DEFAULT_SCRIPT_TIMEOUT_MS, runScriptAsync } from '../scripts.js';
import { dispatchNested } from '../nested.js';
import { OrderedOutput } from './ordered-output.js';
import { LANES_AVAILABLE, LanePool } from './lanes.js';
import { laneSignature, trackPid } from './bash.js';
import { targetEnvironment } from '../../workflow/target.js';
import { scopeGate } from '../scope-gate.js';

/**
 * `[[ name ]]` → `{{ name }}` for identifiers only (so JS array literals like `[[1,2]]` and bash
 * tests like `[[ -f "$x" ]]` survive), in every field of the inner step and of every step nested in
 * it — `parallel_steps` children, a nested foreach's `step`, decision routes and on_success /
 * on_error actions — so a loop variable renders at any depth (the reference converts only the inner
 * step's command/commands/input; osm converts everywhere, a superset). The one exception is a
 * nested foreach's own `variable_pre_process`, whose `[[<its variable>]]` is substituted by that
 * foreach per item and must stay as written.
 */
export function convertLoopSyntax<T>(value: T, keep?: string): T {
  if (typeof value === 'string') {
    return value.replace(/\[\[\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\]\]/g, (whole, name: string) => (name === keep ? whole : `{{${name}}}`)) as T;
  }
  if (Array.isArray(value)) return value.map((v) => convertLoopSyntax(v, keep)) as T;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const nestedVar = obj.type === 'foreach' && typeof obj.variable === 'string' ? obj.variable : undefined;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) out[k] = k === 'variable_pre_process' && nestedVar ? convertLoopSyntax(v, nestedVar) : convertLoopSyntax(v, keep);
    return out as T;
  }
  return value;
}

/** Parses a concurrency value (int, float-int or rendered text); empty/≤0 → 1. */
export function parseThreads(value: unknown, vars: Record<string, unknown>): number {
  if (value === undefined || value === null || value === '') return 1;
  const text = typeof value === 'string' ? render(value, vars) : String(value);
  const n = Math.floor(Number(text));
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1024) : 1;
}

/** Items of a foreach: a rendered file path (streamed line by line) or an inline array. */
async function* foreachItems(step: Step, scope: Scope): AsyncGenerator<string> {
  const input = step.input;
  if (Array.isArray(input)) {
    for (const raw of input) {
      const v = render(String(raw), scope.vars).trim();
      if (v) yield v;
    }
    return;
  }
  const path = render(String(input ?? ''), scope.vars).trim();
  if (!path) throw new StepFailure('foreach step must have input');
  if (!existsSync(path) || !statSync(path).isFile()) throw new StepFailure(`failed to count input lines: open ${path}: no such file`);
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) {
    const v = line.trim();
    if (v) yield v;
  }
}

/** Number of items a foreach will run (for its progress bar); undefined when it cannot be told. */
async function countItems(step: Step, scope: Scope): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const _item of foreachItems(step, scope)) n++;
    return n;
  } catch {
    return undefined;
  }
}

/**
 * foreach (reference §3.7): each item runs the inner step with `<variable>`, `_<variable>_` and
 * `_id_` bound; items stream from the input file through a pool of `parallel`/`threads` workers;
 * outputs are reassembled in input order. All items are attempted; the first failure fails the
 * step. Loop values are tainted: they come from tool output.
 */
export async function executeForeach(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  if (!step.variable) throw new StepFailure('foreach step must have variable');
  if (!step.step) throw new StepFailure('foreach step must have step');
  const variable = step.variable;
  const threads = parseThreads(step.parallel ?? step.threads, scope.vars);
  const inner = convertLoopSyntax(step.step);
  const tainted = new Set([...scope.tainted, variable, `_${variable}_`]);
  const out = new OrderedOutput();
  let firstError: StepFailure | undefined;
  let firstErrorItem = '';
  let lines = 0;
  let skip: ModuleSkip | undefined;

  const iterator = foreachItems(step, scope);
  let index = 0;
  let exhausted = false;
  const next = async (): Promise<{ item: string; i: number } | undefined> => {
    if (exhausted) return undefined;
    const r = await iterator.next();
    if (r.done) {
      exhausted = true;
      return undefined;
    }
    return { item: r.value, i: index++ };
  };

  // Items of a plain host bash step run in shell lanes (see lanes.ts): far cheaper than a process
  // spawned per item. OSM_FOREACH_LANES=0 turns them off (every item then spawns as usual).
  let lanes: LanePool | undefined;
  if (LANES_AVAILABLE && inner.type === 'bash' && scope.runner.type === 'host' && !scope.exec.input.runnerOverride && !ctx.timeoutMs && process.env.OSM_FOREACH_LANES !== '0') {
    const env = targetEnvironment(scope.vars, scope.userParamKeys);
    lanes = new LanePool(threads, { ...scope.exec.baseEnv, ...env }, laneSignature(env), process.cwd(), (pid, alive) => (alive ? trackPid(scope, pid) : trackPid(scope, 0, pid)), scope.exec.output);
  }
  const innerCtx: StepContext = { ...ctx, lanes };
  // exports.streaming_output (reference §1.12): every item's output goes to this file (truncated
  // first) as the item completes, instead of being kept; the step output names the file.
  let stream: { path: string; fd: number } | undefined;
  const streamPath = step.exports?.streaming_output ? render(String(step.exports.streaming_output), scope.vars).trim() : '';
  if (streamPath) {
    try {
      mkdirSync(dirname(streamPath), { recursive: true });
      stream = { path: streamPath, fd: openSync(streamPath, 'w') };
    } catch (err) {
      lanes?.close();
      throw new StepFailure(`cannot open streaming_output ${streamPath}: ${(err as Error).message}`);
    }
  }
  const record = (i: number, text: string) => {
    if (!stream) return out.set(i, text);
    if (text !== '') writeSync(stream.fd, text.endsWith('\n') ? text : `${text}\n`);
  };
  const onAbort = () => lanes?.kill();
  scope.exec.signal.addEventListener('abort', onAbort, { once: true });
  // Progress (done/total, rate, ETA) for the terminal: the total is counted alongside the work.
  const printer = scope.exec.printer;
  let done = 0;
  let over = false;
  if (printer.wantsProgress) {
    printer.progress(step.name, 0, undefined);
    void countItems(step, scope).then((total) => {
      if (!over) printer.progress(step.name, done, total);
    });
  }

  // Target scope: out-of-scope items never reach the inner step (dropped and counted).
  const gate = scopeGate(scope, 'foreach', step.name);
  const worker = async () => {
    for (;;) {
      if (scope.exec.signal.aborted || skip) return;
      const got = await next();
      if (!got) return;
      let value = got.item;
      if (step.variable_pre_process) {
        try {
          const script = step.variable_pre_process.replace(/\[\[\s*[A-Za-z_][A-Za-z0-9_]*\s*\]\]/g, `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
          value = valueToString((await runScriptAsync(script, scope, { timeoutMs: DEFAULT_SCRIPT_TIMEOUT_MS, quick: true })).value);
        } catch (err) {
          scope.exec.printer.warn(`variable_pre_process failed for ${JSON.stringify(got.item)}: ${(err as Error).message}`);
        }
      }
      if (gate && !gate.admit(value)) {
        record(got.i, '');
        done++;
        continue;
      }
      const child: Scope = {
        ...scope,
        vars: { ...scope.vars, [variable]: value, [`_${variable}_`]: pathSafe(value), _id_: got.i + 1 },
        tainted,
      };
      try {
        const r = await dispatchNested({ ...inner, name: inner.name || `${step.name}-item` }, child, innerCtx);
        record(got.i, r.output);
        lines += r.lines;
      } catch (err) {
        if (err instanceof ModuleSkip) {
          skip = err;
          return;
        }
        const f = err instanceof StepFailure ? err : new StepFailure((err as Error).message);
        record(got.i, f.output);
        if (!firstError) {
          firstError = f;
          firstErrorItem = got.item;
        }
      } finally {
        done++;
        if (printer.wantsProgress) printer.progress(step.name, done);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: threads }, worker));
  } catch (err) {
    // errors reading the input file surface here
    throw err instanceof StepFailure ? err : new StepFailure((err as Error).message);
  } finally {
    scope.exec.signal.removeEventListener('abort', onAbort);
    over = true;
    if (printer.wantsProgress) printer.progressDone(step.name);
    lanes?.close();
    await gate?.close();
    if (stream) closeSync(stream.fd);
    await out.close();
  }
  if (skip) throw skip;
  const output = stream ? `Results streamed to: ${stream.path}` : out.text();
  const header = `foreach [[${variable}]] in ${Array.isArray(step.input) ? `[${step.input.length} items]` : render(String(step.input ?? ''), scope.vars)} | threads: ${threads}`;
  if (firstError) {
    throw new StepFailure(
      `${firstError.message}\nfailed on input: ${firstErrorItem}${firstError.commands.length ? `\nfailed command: ${firstError.commands[0]}` : ''}`,
      output,
      [header],
      firstError.exitCode,
    );
  }
  return { output, lines, commands: [header], ...(inner.type === 'bash' || inner.type === 'remote-bash' ? { exitCode: 0 } : {}) };
}
