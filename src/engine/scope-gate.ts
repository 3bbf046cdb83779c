/**
 * The engine's target-scope gate (docs/scope.md): loop items out of the run's scope are dropped
 * before they reach a step, counted in the run's scope row (by source) and reported once per step.
 */
import { compileLayers, countDrop, emptyCounts, type LayerSpec, type ScopeCounts } from '../scope/index.js';
import type { Workflow } from '../workflow/types.js';
import type { Execution, Scope } from './types.js';

/** The target scope in force for a scope: a module's own inside a flow, else the run's. */
export function targetScopeOf(scope: Scope): Execution['targetScope'] {
  return scope.targetScope ?? scope.exec.targetScope;
}

/**
 * The target scope of a module run inside a flow when the module's file has its own `scope:` key:
 * the run's layers plus `module:<name>` (it can only narrow). Undefined when the module has none.
 * A module run alone needs none of this: its key is the run's `workflow:<name>` layer already.
 * Throws ScopeParseError on an invalid entry.
 */
export function moduleTargetScope(exec: Execution, wf: Pick<Workflow, 'name' | 'scope'>): Execution['targetScope'] {
  const own = wf.scope;
  if (!own || (own.include?.length ?? 0) + (own.exclude?.length ?? 0) === 0) return undefined;
  const base = exec.targetScope;
  const specs: LayerSpec[] = [...(base?.specs ?? []), { name: `module:${wf.name}`, include: own.include ?? [], exclude: own.exclude ?? [] }];
  return { set: compileLayers(specs), specs, counts: base?.counts ?? emptyCounts() };
}

/** A per-step gate; `admit` is false for an item that must not reach a tool. */
export function scopeGate(scope: Scope, source: string, stepName: string): { admit(item: string): boolean; close(): Promise<void> } | undefined {
  const ts = targetScopeOf(scope);
  if (!ts || ts.set.empty) return undefined;
  let local: ScopeCounts = emptyCounts();
  return {
    admit(item) {
      if (ts.set.admitsItem(item)) return true;
      countDrop(ts.counts, source, item);
      countDrop(local, source, item);
      return false;
    },
    async close() {
      if (local.dropped === 0) return;
      const drops = local;
      local = emptyCounts();
      await scope.exec.deps.repos.runs.addScopeDrops(scope.exec.recorder.run.id, drops.by_source, drops.samples);
      scope.exec.printer.warn(`scope: ${drops.dropped} out-of-scope item(s) of ${stepName} dropped (e.g. ${drops.samples[0]!.value}); see 'osm scope check'`);
      scope.exec.log.write('WARN', 'Out-of-scope items dropped', { step: stepName, dropped: drops.dropped });
    },
  };
}
