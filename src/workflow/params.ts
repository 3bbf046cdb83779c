/**
 * Parameter input and resolution (reference workflow-engine §2.5): `-p k=v` pairs, `-P` files,
 * the precedence between them, and the per-workflow resolution of declared params
 * (provided > generator > rendered default > required error). Pure: the caller reads files.
 */
import YAML from 'yaml';
import { errors } from '../errors.js';
import type { Param } from './types.js';
import { runGenerator as defaultRunGenerator } from './generators.js';
import { render, valueToString } from './template.js';

/** Parses `key=value` pairs (split on the first `=`); reports every bad pair at once. */
export function parseParamPairs(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const issues: string[] = [];
  pairs.forEach((pair, i) => {
    const eq = pair.indexOf('=');
    if (eq === -1) {
      issues.push(`params[${i}]: expected key=value, got ${JSON.stringify(pair)}`);
      return;
    }
    const key = pair.slice(0, eq).trim();
    if (key === '') {
      issues.push(`params[${i}]: empty key in ${JSON.stringify(pair)}`);
      return;
    }
    out[key] = pair.slice(eq + 1);
  });
  if (issues.length > 0) throw errors.invalidParams(issues.join('; '));
  return out;
}

function stringify(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return valueToString(value);
}

function parseStructured(text: string, fileName: string): unknown {
  const lower = fileName.toLowerCase();
  const yaml = () => YAML.parse(text) as unknown;
  if (lower.endsWith('.json')) return JSON.parse(text) as unknown;
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return yaml();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return yaml();
  }
}

/** Parses a `-P` params file (JSON or YAML by extension, else JSON then YAML) into string values. */
export function parseParamsFileText(text: string, fileName: string): Record<string, string> {
  let data: unknown;
  try {
    data = parseStructured(text, fileName);
  } catch (err) {
    throw errors.invalidParams(`${fileName}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw errors.invalidParams(`${fileName}: expected a mapping of param names to values`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) out[key] = stringify(value);
  return out;
}

/** Provided params in precedence order: CLI built-ins (target, tactic…) > `-p` > `-P` file. */
export function mergeProvided(input: {
  fileParams?: Record<string, string>;
  cliParams?: Record<string, string>;
  cliBuiltins?: Record<string, string | undefined>;
}): Record<string, string> {
  const out: Record<string, string> = { ...(input.fileParams ?? {}), ...(input.cliParams ?? {}) };
  for (const [key, value] of Object.entries(input.cliBuiltins ?? {})) if (value !== undefined) out[key] = value;
  return out;
}

/** `true`/`1` (any case) → true; booleans pass through; everything else → false. */
export function toBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1;
  const text = valueToString(value).trim().toLowerCase();
  return text === 'true' || text === '1';
}

/**
 * Built-in variables that count as *provided* params for a declared param of the same name. The
 * lower-case keys are what the reference CLI passes as params on every run (§2.3, §2.5); osm keeps
 * them among the built-ins, so `- name: target, required: true` takes the -t value. `Target` is
 * the run target too: event-triggered modules declare it required and map it from the event input
 * (`input: { Target: event_data.value }`, platform events/vuln-scan-receiver.yaml) — the reference
 * only accepts it there, osm also on the CLI (an error there would help nobody).
 */
export const CLI_PARAM_KEYS: ReadonlySet<string> = new Set([
  'target', 'target_file', 'tactic', 'threads_hold', 'exclude_modules', 'fuzzy_exclude_modules',
  'space_name', 'workspaces_folder', 'heuristics_check', 'org_uuid', 'flow_name', 'Target',
]);

export interface ResolveOptions {
  /** Replaces the generator runner (the plan uses a non-executing one). */
  runGenerator?: (expr: string, paramName: string) => string;
}

/**
 * Builds the variable map of one module/flow execution: `vars` (built-ins), overridden by every
 * provided param, then each declared param in order — provided non-empty value, else generator,
 * else default (bool → boolean; otherwise rendered with the variables known so far), else a
 * `required parameter missing` error. Bool params become booleans; int params stay strings.
 */
export function resolveParams(
  declared: Param[],
  provided: Record<string, string>,
  vars: Record<string, unknown>,
  opts: ResolveOptions = {},
): Record<string, unknown> {
  const gen = opts.runGenerator ?? ((expr: string, name: string) => defaultRunGenerator(expr, name));
  const out: Record<string, unknown> = { ...vars, ...provided };
  for (const param of declared) {
    const isBool = param.type === 'bool';
    let given: unknown = provided[param.name];
    if ((given === undefined || given === '') && CLI_PARAM_KEYS.has(param.name)) given = vars[param.name];
    let value: unknown;
    if (given !== undefined && given !== null && given !== '') {
      value = given;
    } else if (param.generator) {
      value = gen(param.generator, param.name);
    } else if (param.default !== undefined && param.default !== '') {
      value = isBool ? param.default : render(String(param.default), out);
    } else if (param.required) {
      throw errors.requiredParam(param.name);
    } else {
      continue;
    }
    out[param.name] = isBool ? toBool(value) : valueToString(value);
  }
  return out;
}
