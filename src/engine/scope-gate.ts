/**
 * The engine's target-scope gate (docs/scope.md): loop items out of the run's scope are dropped
 * before they reach a step, counted in the run's scope row (by source) and reported once per step.
 */
import { countDrop, emptyCounts, type ScopeCounts } from '../scope/index.js';
import type { Scope } from './types.js';

/** A per-step gate; `admit` is false for an item that must not reach a tool. */
export function scopeGate(scope: Scope, source: string, stepName: string): { admit(item: string): boolean; close(): void } | undefined {
  const ts = scope.exec.targetScope;
  if (!ts || ts.set.empty) return undefined;
  let local: ScopeCounts = emptyCounts();
  return {
    admit(item) {
      if (ts.set.admitsItem(item)) return true;
      countDrop(ts.counts, source, item);
      countDrop(local, source, item);
      return false;
    },
    close() {
      if (local.dropped === 0) return;
      const drops = local;
      local = emptyCounts();
      scope.exec.deps.store.runs.addScopeDrops(scope.exec.recorder.run.id, drops.by_source, drops.samples);
      scope.exec.printer.warn(`scope: ${drops.dropped} out-of-scope item(s) of ${stepName} dropped (e.g. ${drops.samples[0]!.value}); see 'osm scope check'`);
      scope.exec.log.write('WARN', 'Out-of-scope items dropped', { step: stepName, dropped: drops.dropped });
    },
  };
}
