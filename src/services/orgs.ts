/**
 * Organization use cases shared by /osm/api/orgs* and `osm org`. An org reference (path segment,
 * `?org=` filter, CLI argument) is a name (case-insensitive) or a uuid: a uuid-shaped reference is
 * looked up by uuid first, anything else by name first, then the other way.
 */
import { z } from 'zod';
import { errors } from '../errors.js';
import { DEFAULT_ORG_UUID, type OrgRecord, type OrgRowCounts, type OrgStats, type AsyncStore } from '../store/index.js';
import type { Scope } from '../auth/scope.js';

type Ctx = { repos: AsyncStore };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Longest org name, description, tag and tag list accepted. */
export const ORG_LIMITS = { name: 100, description: 2_000, tag: 100, tags: 100, workspaces: 10_000 } as const;

/** True for a canonical 8-4-4-4-12 hex uuid. */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** The org a reference names, or undefined. */
export async function findOrg(app: Ctx, ref: string): Promise<OrgRecord | undefined> {
  const text = ref.trim();
  if (text === '') return undefined;
  if (!isUuid(text)) return app.repos.orgs.getByName(text);
  return (await app.repos.orgs.get(text.toLowerCase())) ?? (await app.repos.orgs.getByName(text));
}

/** The org a path or CLI argument names; 404 `org not found: <ref>`. */
export async function requireOrg(app: Ctx, ref: string): Promise<OrgRecord> {
  const org = await findOrg(app, ref);
  if (!org) throw errors.orgNotFound(ref);
  return org;
}

/** The uuid of a `?org=` filter (undefined when absent or empty); 400 `org not found: <ref>`. */
export async function orgFilter(app: Ctx, ref: string | undefined): Promise<string | undefined> {
  if (ref === undefined || ref.trim() === '') return undefined;
  const org = await findOrg(app, ref);
  if (!org) throw errors.orgFilterNotFound(ref);
  return org.uuid;
}

const tags = z
  .array(z.string().max(ORG_LIMITS.tag, `at most ${ORG_LIMITS.tag} characters per tag`))
  .max(ORG_LIMITS.tags, `at most ${ORG_LIMITS.tags} tags`)
  .transform((list) => [...new Set(list.map((t) => t.trim()).filter(Boolean))]);
const description = z.string().max(ORG_LIMITS.description, `at most ${ORG_LIMITS.description} characters`);

/** Body of POST /orgs (unknown keys ignored). */
export const createOrgSchema = z.object({
  name: z.string().optional(),
  description: description.nullish(),
  uuid: z.string().nullish(),
  tags: tags.nullish(),
});

/** Body of PUT /orgs/{uuid}: empty name and description are ignored; tags replace when present. */
export const updateOrgSchema = z.object({
  name: z.string().nullish(),
  description: description.nullish(),
  tags: tags.nullish(),
  workspaces: z.array(z.string().min(1, 'empty workspace name')).max(ORG_LIMITS.workspaces, `at most ${ORG_LIMITS.workspaces} workspaces`).nullish(),
});

/** Every zod issue as `path: message`. */
function issues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw errors.orgInvalidBody('expected a JSON object');
  const r = schema.safeParse(body);
  if (!r.success) throw errors.orgInvalidBody(issues(r.error));
  return r.data;
}

/** A trimmed org name, or the reason it cannot be one. */
function checkName(raw: string): { name: string } | { problem: string } {
  const name = raw.trim();
  if (name.length > ORG_LIMITS.name) return { problem: `name: at most ${ORG_LIMITS.name} characters` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return { problem: 'name: control characters are not allowed' };
  // A uuid-shaped name would be ambiguous with the uuid lookup of every org reference.
  if (isUuid(name)) return { problem: 'name: must not be a uuid' };
  return { name };
}

/** True for SQLite's unique-constraint error (a concurrent create won the name). */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** An org with its stats (GET /orgs items). */
export type OrgWithStats = OrgRecord & { stats: OrgStats };

/** GET /orgs: every org with its stats, the default org first, then by name. */
export async function listOrgs(app: Ctx, scope?: Scope): Promise<{ data: OrgWithStats[]; total: number }> {
  const orgs = (await app.repos.orgs.list()).filter((o) => !scope?.orgs || scope.orgs.includes(o.uuid));
  const stats = await app.repos.orgs.statsAll(orgs);
  const data = orgs.map((o) => ({ ...o, stats: stats.get(o.uuid)! }));
  return { data, total: data.length };
}

/** POST /orgs: 400 `name is required`, `invalid request body: …`, `failed to create org "<name>": …`. */
export async function createOrg(app: Ctx, body: unknown): Promise<OrgRecord> {
  const b = parseBody(createOrgSchema, body);
  if (b.name === undefined || b.name.trim() === '') throw errors.orgNameRequired();
  const checked = checkName(b.name);
  if ('problem' in checked) throw errors.orgInvalidBody(checked.problem);
  const { name } = checked;
  let uuid: string | undefined;
  if (b.uuid !== undefined && b.uuid !== null && b.uuid.trim() !== '') {
    if (!isUuid(b.uuid.trim())) throw errors.orgInvalidBody('uuid: must be a uuid (8-4-4-4-12 hex digits)');
    uuid = b.uuid.trim().toLowerCase();
    if (await app.repos.orgs.get(uuid)) throw errors.orgCreateFailed(name, `an org with uuid ${uuid} already exists`);
  }
  const taken = await app.repos.orgs.getByName(name);
  if (taken) throw errors.orgCreateFailed(name, `an org named "${taken.name}" already exists`);
  try {
    return await app.repos.orgs.create({ name, description: b.description?.trim() ?? '', tags: b.tags ?? [], uuid });
  } catch (err) {
    if (isUniqueViolation(err)) throw errors.orgCreateFailed(name, 'an org with this name or uuid already exists');
    throw err;
  }
}

/** GET /orgs/{ref}. */
export async function getOrg(app: Ctx, ref: string, scope?: Scope): Promise<OrgRecord> {
  const org = await requireOrg(app, ref);
  // Another org than the caller's answers like an unknown one.
  if (scope?.orgs && !scope.orgs.includes(org.uuid)) throw errors.orgNotFound(ref);
  return org;
}

/** GET /orgs/{ref}/stats. */
export async function getOrgStats(app: Ctx, ref: string, scope?: Scope): Promise<OrgStats> {
  return app.repos.orgs.stats(await getOrg(app, ref, scope));
}

export interface OrgUpdateResult {
  data: OrgRecord;
  /** Present when workspaces were given: rows that changed org, per table. */
  assigned?: OrgRowCounts;
  /** Given workspace names without a workspaces row (their runs, if any, were still moved). */
  unknown_workspaces?: string[];
}

/**
 * PUT /orgs/{ref}: rename (403 for the default org; 409 when the name is taken), description,
 * tags (replace), and assignment of workspaces with their assets, vulnerabilities and runs.
 */
export async function updateOrg(app: Ctx, ref: string, body: unknown): Promise<OrgUpdateResult> {
  const org = await requireOrg(app, ref);
  const b = parseBody(updateOrgSchema, body);
  const patch: { name?: string; description?: string; tags?: string[] } = {};
  if (b.name !== undefined && b.name !== null && b.name.trim() !== '') {
    const checked = checkName(b.name);
    if ('problem' in checked) throw errors.orgInvalidBody(checked.problem);
    if (checked.name !== org.name) {
      if (org.uuid === DEFAULT_ORG_UUID) throw errors.defaultOrgProtected();
      const taken = await app.repos.orgs.getByName(checked.name);
      if (taken && taken.uuid !== org.uuid) throw errors.orgNameTaken(taken.name);
      patch.name = checked.name;
    }
  }
  if (b.description !== undefined && b.description !== null && b.description.trim() !== '') patch.description = b.description.trim();
  if (b.tags !== undefined && b.tags !== null) patch.tags = b.tags;
  const workspaces = (b.workspaces ?? []).map((w) => w.trim()).filter(Boolean);
  const run = async (): Promise<OrgUpdateResult> => {
    let data: OrgRecord;
    try {
      data = (await app.repos.orgs.update(org.uuid, patch)) ?? org;
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.orgNameTaken(patch.name ?? org.name);
      throw err;
    }
    if (workspaces.length === 0) return { data };
    const { counts, missing } = await app.repos.orgs.assign(org.uuid, workspaces);
    return { data, assigned: counts, ...(missing.length > 0 ? { unknown_workspaces: missing } : {}) };
  };
  return app.repos.tx(run);
}

/** Moves workspaces into an org (`osm org assign`). */
export function assignWorkspaces(app: Ctx, ref: string, workspaces: string[]): Promise<OrgUpdateResult> {
  return updateOrg(app, ref, { workspaces });
}

export interface OrgDeleteResult {
  message: 'org deleted';
  uuid: string;
  name: string;
  purged: boolean;
  /** Rows deleted (purge) or moved to the default org, per table. */
  rows: OrgRowCounts;
}

/**
 * DELETE /orgs/{ref}?purge=: 403 for the default org; the org's rows move to the default org, or
 * with `purge` are deleted (409 while the org has active runs), in one transaction.
 */
export async function deleteOrg(app: Ctx, ref: string, purge: boolean): Promise<OrgDeleteResult> {
  const org = await requireOrg(app, ref);
  if (org.uuid === DEFAULT_ORG_UUID) throw errors.defaultOrgProtected();
  if (purge) {
    const active = await app.repos.orgs.activeRuns(org.uuid);
    if (active > 0) throw errors.orgBusy(org.name, active);
  }
  const rows = await app.repos.orgs.remove(org.uuid, purge);
  return { message: 'org deleted', uuid: org.uuid, name: org.name, purged: purge, rows };
}
