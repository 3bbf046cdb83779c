import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Workflow } from '../workflow/types.js';
import { render } from '../workflow/template.js';
import { matchesTargetType, analyzeTarget } from '../workflow/heuristics.js';
import { OsmError } from '../errors.js';
import { runConditionAsync } from './scripts.js';
import type { Scope } from './types.js';

/** A failed dependency check; `block` holds the multi-line explanation printed on stderr. */
export class DependencyError extends OsmError {
  constructor(message: string, readonly block?: string) {
    super('OSM_ERR_DEPENDENCY', 400, `dependency check failed: ${message}`);
  }
}

/** True when `name` is an executable in one of the PATH folders (binaries folder first). */
export function commandExists(name: string, pathEnv: string): boolean {
  if (name.includes('/')) return isExecutable(name);
  return pathEnv.split(delimiter).some((dir) => dir && isExecutable(join(dir, name)));
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a workflow's `dependencies` before any step runs (reference §1.4): commands on PATH or in
 * the binaries folder, target types, the `Target` variable type, and functions_conditions. Listed
 * `files` that are missing are reported as warnings (the reference does not check them at all).
 */
export async function checkDependencies(wf: Workflow, scope: Scope, opts: { skipValidation?: boolean; emptyTarget?: boolean }): Promise<string[]> {
  const warnings: string[] = [];
  const deps = wf.dependencies;
  checkStaticDependencies(wf, String(scope.vars.Target ?? ''), scope.exec.baseEnv.PATH ?? '', opts);
  for (const f of deps.files) {
    let path = f;
    try {
      path = render(f, scope.vars);
    } catch {
      /* keep raw */
    }
    if (path && !existsSync(path)) warnings.push(`dependency file not found: ${path}`);
  }
  for (const cond of deps.functions_conditions) {
    let ok = false;
    let detail = '';
    try {
      ok = await runConditionAsync(cond, scope);
    } catch (err) {
      detail = `: ${(err as Error).message}`;
    }
    if (!ok) throw new DependencyError(`function condition failed: ${cond}${detail}`);
  }
  return warnings;
}

/**
 * The checks that need no JS runtime: required commands on PATH (binaries folder first) and the
 * target's type. Also run by `osm run --dry-run` (reference §3.16: a dry run still fails on a
 * target-type mismatch).
 */
export function checkStaticDependencies(wf: Workflow, target: string, pathEnv: string, opts: { skipValidation?: boolean; emptyTarget?: boolean }): void {
  const deps = wf.dependencies;
  const missing = deps.commands.filter((c) => c && !commandExists(c, pathEnv));
  if (missing.length) {
    throw new DependencyError(`required command not found: ${missing.join(', ')} (looked in the binaries folder and PATH; install with your package manager or 'osm install binary')`);
  }
  if (!opts.skipValidation && !opts.emptyTarget && target) {
    if (deps.target_types.length) {
      const ok = deps.target_types.some((t) => matchesTargetType(target, t));
      if (!ok) throw mismatch(target, deps.target_types);
    }
    for (const v of deps.variables) {
      if (v.name.toLowerCase() === 'target' && v.type) {
        const types = v.type.split(',').map((t) => t.trim()).filter(Boolean);
        if (types.length && !types.some((t) => matchesTargetType(target, t))) throw mismatch(target, types);
      }
    }
  }
}

function mismatch(target: string, types: string[]): DependencyError {
  const detected = analyzeTarget(target, { level: 'basic' }).type;
  const block = [
    '✘ Target type mismatch',
    `  Supplied: ${target}`,
    `  Detected type: ${detected}`,
    `  The workflow's dependency required types: ${types.join(', ')}`,
    '  Hint: use --skip-validation to run anyway, or pass a target of the required type',
  ].join('\n');
  return new DependencyError(`Target type mismatch: ${target} is ${detected}; dependency required types: ${types.join(', ')}`, block);
}
