/**
 * Target scope (docs/scope.md). Layers, narrowest last, each able only to narrow:
 *   settings   `scope.include/exclude` of the settings file
 *   workspace  `scope.workspaces.<name>` of the settings file
 *   org        `scope.orgs.<uuid or name>` of the settings file
 *   workflow   the workflow's `scope:` key
 *   run        `osm run --scope-file`, or the `scope` field of POST /runs
 * A value is in scope when every layer admits it.
 */
import type { Settings } from '../settings/schema.js';
import type { Workflow } from '../workflow/types.js';
import { countDrop, emptyCounts, parseScopeSpec, ScopeSet, type ScopeCounts, type ScopeLayer, type ScopeSpec } from './model.js';

export * from './model.js';
export { parseRule, ruleMatches, type ScopeRule } from './rules.js';
export { parseValue, networkTokens, isNetworkValue, type ScopeValue } from './value.js';

/** A layer as stored and sent between processes: its name and entry texts. */
export interface LayerSpec extends ScopeSpec {
  name: string;
}

export interface ScopeSources {
  settings?: Settings;
  workspace?: string;
  /** The org's uuid and name (settings may key its scope by either). */
  org?: { uuid: string; name?: string };
  workflow?: Pick<Workflow, 'name' | 'scope'>;
  run?: ScopeSpec;
}

function has(spec: Partial<ScopeSpec> | undefined): spec is ScopeSpec {
  return Boolean(spec && ((spec.include?.length ?? 0) > 0 || (spec.exclude?.length ?? 0) > 0));
}

/** The non-empty layers for these sources, as specs (in order). */
export function layerSpecs(src: ScopeSources): LayerSpec[] {
  const out: LayerSpec[] = [];
  const s = src.settings?.scope;
  if (s && has(s)) out.push({ name: 'settings', include: s.include, exclude: s.exclude });
  if (s && src.workspace) {
    const w = s.workspaces[src.workspace];
    if (has(w)) out.push({ name: `workspace:${src.workspace}`, ...w });
  }
  if (s && src.org) {
    const o = s.orgs[src.org.uuid] ?? (src.org.name ? s.orgs[src.org.name] : undefined);
    if (has(o)) out.push({ name: `org:${src.org.name || src.org.uuid}`, ...o });
  }
  if (src.workflow && has(src.workflow.scope)) out.push({ name: `workflow:${src.workflow.name}`, ...src.workflow.scope });
  if (has(src.run)) out.push({ name: 'run', include: src.run.include, exclude: src.run.exclude });
  return out;
}

/** Compiles layer specs (entries were validated where they were written; a bad one throws ScopeParseError). */
export function compileLayers(specs: LayerSpec[]): ScopeSet {
  return new ScopeSet(specs.map((l): ScopeLayer => parseScopeSpec(l, l.name)));
}

export function scopeSetFor(src: ScopeSources): ScopeSet {
  return compileLayers(layerSpecs(src));
}

/**
 * What an import checks rows against (src/ingest): `admits` a value, `drop` counts one, `flush`
 * persists the counts so far (called when an import finishes).
 */
export interface ImportScope {
  admits(value: string): boolean;
  drop(value: string): void;
  flush?(): void;
}

/**
 * An ImportScope over a scope set: drops are counted under `source` and handed to `persist`
 * (e.g. the run's row) on flush; `counts` accumulates everything for the caller.
 */
export function importScope(set: ScopeSet, source: string, persist?: (delta: ScopeCounts) => void): ImportScope & { counts: ScopeCounts } {
  const counts = emptyCounts();
  let pending = emptyCounts();
  return {
    counts,
    admits: (value) => set.admitsItem(value),
    drop(value) {
      countDrop(counts, source, value);
      countDrop(pending, source, value);
    },
    flush() {
      if (pending.dropped > 0 && persist) persist(pending);
      pending = emptyCounts();
    },
  };
}

/** Compiled scope sets by their specs (evaluator processes see the same specs many times). */
const cache = new Map<string, ScopeSet>();
export function cachedScopeSet(specs: LayerSpec[]): ScopeSet {
  const key = JSON.stringify(specs);
  let set = cache.get(key);
  if (!set) {
    set = compileLayers(specs);
    if (cache.size > 50) cache.clear();
    cache.set(key, set);
  }
  return set;
}
