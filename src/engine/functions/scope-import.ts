/**
 * The target scope of imports made by workflow functions (db_import_* …): rows whose value or URL
 * is out of the run's scope are dropped, and the drops are added to the run's counts in the
 * database (the function may run in an evaluator process; the run row is shared).
 */
import type { FnContext } from '../js-runtime.js';
import type { Store } from '../../store/index.js';
import { cachedScopeSet, importScope, type ImportScope } from '../../scope/index.js';

export function importScopeOf(ctx: FnContext, source: string): ImportScope | undefined {
  if (!ctx.scope?.length) return undefined;
  const set = cachedScopeSet(ctx.scope);
  if (set.empty) return undefined;
  const s = ctx.store as Store | undefined;
  const store = s && typeof s === 'object' && 'runs' in s ? s : undefined;
  return importScope(set, source, (d) => {
    if (store && ctx.dbRunId !== undefined) store.runs.addScopeDrops(ctx.dbRunId, d.by_source, d.samples);
  });
}
