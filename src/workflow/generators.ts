/**
 * Param generators (`params[].generator`, reference workflow-engine §2.6): `fn(arg, …)` with a
 * fixed set of names. Generators come from operator-written workflows (trusted), never from
 * users, which is why `execCmd` may run a shell.
 */
import { execFileSync } from 'node:child_process';
import { randomInt as cryptoRandomInt, randomUUID } from 'node:crypto';
import { errors } from '../errors.js';
import { formatGoLayout } from './tpl-go-date.js';

export interface GeneratorOptions {
  /** Environment for getEnvVar (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Clock for currentDate/currentTimestamp (tests). */
  now?: Date;
  /** Working directory for execCmd. */
  cwd?: string;
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
// A hung execCmd would block the whole process (it is synchronous); two minutes is far beyond any
// sane generator and still ends the run with a clear error.
const EXEC_TIMEOUT_MS = 120_000;

class GeneratorError extends Error {}

function int(value: string | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value.trim())) throw new GeneratorError(`invalid ${what}: ${value}`);
  return Number(value.trim());
}

/**
 * Splits generator arguments on commas outside single/double quotes. Quotes are removed;
 * whitespace outside quotes is trimmed, whitespace inside quotes is kept (so `join(' ', a, b)`
 * really joins with a space — the reference trims it away).
 */
export function splitGeneratorArgs(text: string): string[] {
  const args: string[] = [];
  let current = '';
  let pendingSpace = '';
  let quote = '';
  let started = false;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = '';
      else current += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      current += started ? pendingSpace : '';
      pendingSpace = '';
      quote = ch;
      started = true;
    } else if (ch === ',') {
      args.push(current);
      current = '';
      pendingSpace = '';
      started = false;
    } else if (/\s/.test(ch)) {
      if (started) pendingSpace += ch;
    } else {
      current += (started ? pendingSpace : '') + ch;
      pendingSpace = '';
      started = true;
    }
  }
  if (quote) throw new GeneratorError('unterminated quote in arguments');
  if (started || args.length > 0) args.push(current);
  return args;
}

type Impl = (args: string[], opts: GeneratorOptions) => string;

const GENERATORS: Record<string, Impl> = {
  uuid: () => randomUUID(),
  currentDate: (args, opts) => formatGoLayout(opts.now ?? new Date(), args[0] ? args[0] : '2006-01-02'),
  currentTimestamp: (_args, opts) => String(Math.floor((opts.now ?? new Date()).getTime() / 1000)),
  getEnvVar: (args, opts) => {
    if (args.length === 0 || !args[0]) throw new GeneratorError('getEnvVar requires at least one argument');
    const value = (opts.env ?? process.env)[args[0]] ?? '';
    return value === '' && args.length > 1 ? args[1]! : value;
  },
  concat: (args) => args.join(''),
  randomInt: (args) => {
    let min = int(args[0], 0, 'min value');
    let max = int(args[1], 100, 'max value');
    if (min > max) [min, max] = [max, min];
    return String(cryptoRandomInt(min, max + 1));
  },
  randomString: (args) => {
    const length = int(args[0], 16, 'length');
    if (length < 0 || length > 4096) throw new GeneratorError(`invalid length: ${args[0]}`);
    let out = '';
    for (let i = 0; i < length; i++) out += ALNUM[cryptoRandomInt(ALNUM.length)];
    return out;
  },
  execCmd: (args, opts) => {
    if (!args[0]) throw new GeneratorError('execCmd requires a command argument');
    try {
      const out = execFileSync('/bin/sh', ['-c', args[0]], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: EXEC_TIMEOUT_MS,
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
      });
      return out.trim();
    } catch (err) {
      const e = err as { status?: number; signal?: string; message?: string };
      const why = e.signal ? `killed by ${e.signal}` : e.status !== undefined ? `exit code ${e.status}` : (e.message ?? 'unknown error');
      throw new GeneratorError(`command failed: ${why}`);
    }
  },
  toLower: (args) => (args[0] ?? '').toLowerCase(),
  toUpper: (args) => (args[0] ?? '').toUpperCase(),
  trim: (args) => (args[0] ?? '').trim(),
  replace: (args) => {
    if (args.length < 3) throw new GeneratorError('replace requires 3 arguments: input, old, new');
    return args[1] === '' ? args[0]! : args[0]!.split(args[1]!).join(args[2]!);
  },
  split: (args) => {
    if (args.length < 2) throw new GeneratorError('split requires at least 2 arguments: input, delimiter');
    const parts = args[0]!.split(args[1]!);
    const index = int(args[2], 0, 'index');
    return index >= 0 && index < parts.length ? parts[index]! : '';
  },
  join: (args) => {
    if (args.length < 2) throw new GeneratorError('join requires at least 2 arguments');
    return args.slice(1).join(args[0]!);
  },
};

/** Names of the available generators. */
export const GENERATOR_NAMES: readonly string[] = Object.keys(GENERATORS);

/**
 * Runs a generator expression such as `randomString(8)` or `currentDate("2006-01-02")`.
 * Errors are `generator failed for <paramName>: <detail>`.
 */
export function runGenerator(expr: string, paramName = expr, opts: GeneratorOptions = {}): string {
  const m = /^(\w+)\(([\s\S]*)\)$/.exec(expr.trim());
  if (!m) throw errors.generatorFailed(paramName, `invalid generator expression: ${expr}`);
  const name = m[1]!;
  const impl = Object.prototype.hasOwnProperty.call(GENERATORS, name) ? GENERATORS[name] : undefined;
  if (!impl) throw errors.generatorFailed(paramName, `unknown generator ${name}`);
  try {
    const args = m[2]!.trim() === '' ? [] : splitGeneratorArgs(m[2]!);
    return impl(args, opts);
  } catch (err) {
    if (err instanceof GeneratorError) throw errors.generatorFailed(paramName, err.message);
    throw err;
  }
}
