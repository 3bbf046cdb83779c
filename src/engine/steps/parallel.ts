import { cpus } from 'node:os';
import type { Step } from '../../workflow/types.js';
import { StepFailure, ModuleSkip, type DispatchResult, type Scope, type StepContext } from '../types.js';
import { dispatchNested } from '../nested.js';
import { evaluateExports } from '../exports.js';
import { mapLimit } from '../pool.js';

/**
 * parallel-steps: children run concurrently (pool of 2×CPU), each with a copy of the current
 * variables. Output = non-empty child outputs joined; child exports merge into this step's exports.
 */
export async function executeParallelSteps(step: Step, scope: Scope, ctx: StepContext): Promise<DispatchResult> {
  const children = step.parallel_steps ?? [];
  if (children.length === 0) throw new StepFailure('parallel-steps step must have parallel_steps');
  const results = await mapLimit(children, Math.max(2, cpus().length * 2), async (child) => {
    const childScope: Scope = { ...scope, vars: { ...scope.vars }, tainted: new Set(scope.tainted) };
    try {
      const r = await dispatchNested(child, childScope, { ...ctx, part: ctx.part ? `${ctx.part}/${child.name}` : child.name });
      const vars = { ...childScope.vars, ...(r.autoExports ?? {}) };
      for (const k of Object.keys(r.autoExports ?? {})) childScope.tainted.add(k);
      const ex = await evaluateExports(child, { ...childScope, vars });
      return { ok: true as const, r, exports: { ...(r.autoExports ?? {}), ...ex.values }, tainted: [...Object.keys(r.autoExports ?? {}), ...ex.tainted] };
    } catch (err) {
      if (err instanceof ModuleSkip) throw err;
      return { ok: false as const, name: child.name, err: err instanceof StepFailure ? err : new StepFailure((err as Error).message) };
    }
  });
  const outputs: string[] = [];
  const exports: Record<string, unknown> = {};
  const tainted: string[] = [];
  let lines = 0;
  let failure: { name: string; err: StepFailure } | undefined;
  for (const r of results) {
    if (r.ok) {
      if (r.r.output) outputs.push(r.r.output);
      lines += r.r.lines;
      Object.assign(exports, r.exports);
      tainted.push(...r.tainted);
    } else {
      if (r.err.output) outputs.push(r.err.output);
      failure ??= { name: r.name, err: r.err };
    }
  }
  const commands = children.map((c) => `${c.name} (${c.type})`);
  if (failure) throw new StepFailure(`parallel step '${failure.name}' failed: ${failure.err.message}`, outputs.join('\n'), commands, failure.err.exitCode);
  return { output: outputs.join('\n'), lines, childExports: exports, childTainted: tainted, commands };
}
