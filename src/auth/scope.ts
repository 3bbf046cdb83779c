/**
 * Organizations as a boundary: what a credential bound to orgs may see. Services take a Scope
 * (from `scopeOf(req.principal)`); an unbound credential's scope is unrestricted. Objects outside
 * the scope answer exactly like objects that do not exist (404), so there is no existence oracle.
 */
import { errors } from '../errors.js';
import { DEFAULT_ORG_UUID, type OrgFilter } from '../store/org-constants.js';
import type { AsyncStore } from '../store/index.js';
import { findOrg } from '../services/orgs.js';
import type { Principal } from './principal.js';

export interface Scope {
  /** Org uuids the caller may see; null = every org. */
  readonly orgs: readonly string[] | null;
}

/** The scope of the CLI, `--no-auth` and unbound credentials. */
export const UNRESTRICTED: Scope = Object.freeze({ orgs: null });

/** The scope of a request's principal (unrestricted when absent or unbound). */
export function scopeOf(principal: Principal | undefined): Scope {
  return principal && principal.orgs.length > 0 ? { orgs: principal.orgs } : UNRESTRICTED;
}

/** True when the scope is limited to some orgs. */
export function isBound(scope: Scope): boolean {
  return scope.orgs !== null;
}

/** True when a row of `orgUuid` (missing = the default org) is visible in `scope`. */
export function inScope(scope: Scope, orgUuid: string | null | undefined): boolean {
  return scope.orgs === null || scope.orgs.includes(orgUuid || DEFAULT_ORG_UUID);
}

/** The org of a workspace (the default org when it has no row). */
export async function workspaceOrg(repos: AsyncStore, name: string): Promise<string> {
  return (await repos.workspaces.get(name))?.org_uuid || DEFAULT_ORG_UUID;
}

/** True when workspace `name` is visible in `scope` (a workspace without a row belongs to the default org). */
export async function workspaceInScope(repos: AsyncStore, scope: Scope, name: string): Promise<boolean> {
  return scope.orgs === null || inScope(scope, await workspaceOrg(repos, name));
}

/** 404 `Workspace not found: <name>` when workspace `name` is outside the scope (no existence oracle). */
export async function requireWorkspaceInScope(repos: AsyncStore, scope: Scope, name: string | undefined): Promise<void> {
  if (name && !(await workspaceInScope(repos, scope, name))) throw errors.workspaceNotFound(name);
}

/**
 * The org filter of a list request: the `?org=` the caller asked for (400 `org not found` when it
 * does not exist — or is outside the caller's orgs, with the same message), else the caller's orgs,
 * else none.
 */
export async function orgFilterFor(app: { repos: AsyncStore }, scope: Scope, requested: string | undefined): Promise<OrgFilter | undefined> {
  if (requested !== undefined && requested.trim() !== '') {
    const org = await findOrg(app, requested);
    if (!org || !inScope(scope, org.uuid)) throw errors.orgFilterNotFound(requested);
    return org.uuid;
  }
  return scope.orgs ?? undefined;
}
