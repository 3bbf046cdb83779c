/**
 * Target scope for runs and imports (docs/scope.md): the admission check of run targets (CLI, API,
 * scheduler: createRuns), the scope of an import into a workspace, and `osm scope check`.
 */
import { errors } from '../errors.js';
import type { Workflow } from '../workflow/types.js';
import type { AppContext } from './context.js';
import { ScopeSet, importScope, layerSpecs, compileLayers, readScopeFile, ScopeParseError, specOf, type ImportScope, type LayerSpec, type ScopeCounts, type ScopeDecision, type ScopeSpec } from '../scope/index.js';

/** The org of a workspace (its row), else the given one. */
async function orgOf(app: AppContext, workspace: string, fallback?: string): Promise<{ uuid: string; name?: string } | undefined> {
  const uuid = (await app.repos.workspaces.get(workspace))?.org_uuid || fallback;
  return uuid ? { uuid, name: (await app.repos.orgs.get(uuid))?.name } : undefined;
}

/** The scope layers of a run or import into `workspace` (settings, workspace, org, workflow, run). */
export async function scopeLayersFor(app: AppContext, src: { workspace?: string; orgUuid?: string; workflow?: Workflow; run?: ScopeSpec }): Promise<LayerSpec[]> {
  const org = src.workspace ? await orgOf(app, src.workspace, src.orgUuid) : src.orgUuid ? { uuid: src.orgUuid, name: (await app.repos.orgs.get(src.orgUuid))?.name } : undefined;
  return layerSpecs({ settings: app.settings().settings, workspace: src.workspace, org, workflow: src.workflow, run: src.run });
}

/**
 * Refuses a run request when one of its targets is out of scope, naming every refused target and
 * why (400, OSM_ERR_OUT_OF_SCOPE); nothing is created then.
 */
export async function assertTargetsInScope(app: AppContext, workflow: Workflow, targets: string[], run: ScopeSpec | undefined, spaceOf: (t: string) => string, orgUuid?: string): Promise<void> {
  const refused: string[] = [];
  const sets = new Map<string, ReturnType<typeof compileLayers>>();
  for (const t of targets) {
    const ws = spaceOf(t);
    let set = sets.get(ws);
    if (!set) {
      try {
        set = compileLayers(await scopeLayersFor(app, { workspace: ws, orgUuid, workflow, run }));
      } catch (err) {
        throw errors.validation(err instanceof ScopeParseError ? err.message : String(err));
      }
      sets.set(ws, set);
    }
    if (set.empty) continue;
    const d = set.decide(t);
    if (!d.in_scope) refused.push(`${t}: ${d.explanation}`);
  }
  if (refused.length) {
    const shown = refused.slice(0, 20);
    throw errors.outOfScope(`${refused.length} target(s) out of scope, nothing was run: ${shown.join('; ')}${refused.length > shown.length ? `; … and ${refused.length - shown.length} more` : ''}`);
  }
}

/** A scope file as a run's scope spec; a bad file is a validation error listing every bad line. */
export function scopeFileSpec(path: string): ScopeSpec {
  try {
    return specOf(readScopeFile(path));
  } catch (err) {
    throw errors.validation(err instanceof ScopeParseError ? err.message : String(err));
  }
}

/** The scope of an import into a workspace (settings, workspace and org layers, plus an optional file). */
export async function workspaceImportScope(app: AppContext, workspace: string, source: string, extra?: ScopeSpec): Promise<(ImportScope & { counts: ScopeCounts }) | undefined> {
  const set = compileLayers(await scopeLayersFor(app, { workspace, run: extra }));
  return set.empty ? undefined : importScope(set, source);
}

export interface ScopeCheckResult extends ScopeDecision {
  /** The layers that were consulted (entry texts). */
  scope: LayerSpec[];
}

/** `osm scope check <value>`: the decision and its reason, over the layers of a workspace / workflow / file. */
export async function checkScope(app: AppContext, value: string, opts: { workspace?: string; workflow?: Workflow; scopeFile?: string }): Promise<ScopeCheckResult> {
  // The file is compiled as read, so decisions name its line numbers.
  let file;
  try {
    file = opts.scopeFile ? readScopeFile(opts.scopeFile) : undefined;
  } catch (err) {
    throw errors.validation(err instanceof ScopeParseError ? err.message : String(err));
  }
  const specs = await scopeLayersFor(app, { workspace: opts.workspace, workflow: opts.workflow });
  const set = new ScopeSet([...compileLayers(specs).layers, ...(file ? [file] : [])]);
  return { ...set.decide(value), scope: [...specs, ...(file ? [{ name: 'run', ...specOf(file) }] : [])] };
}
