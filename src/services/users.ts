/**
 * Users of a shared daemon (`osm user …`, `/osm/api/users`): names, roles, org bindings and
 * password hashes in the database. The settings' own logins stay the built-in administrators and
 * their names cannot be taken by a database user.
 */
import { errors } from '../errors.js';
import { hashPassword, passwordProblem } from '../auth/passwords.js';
import { isSettingsUser } from '../auth/principal.js';
import { isRole, type Role } from '../auth/roles.js';
import type { UserRecord } from '../store/access.js';
import { requireOrg } from './orgs.js';
import type { AppContext } from './context.js';

const USER_NAME_RE = /^[A-Za-z0-9._@-]{1,64}$/;

/** A user as listings show it: never the password hash. */
export interface UserView {
  username: string;
  role: Role;
  orgs: { uuid: string; name: string }[];
  created_at: string;
  updated_at: string;
}

/** Org refs (names or uuids) → uuids; an unknown org is a 404 naming it. */
export async function resolveOrgRefs(app: AppContext, refs: readonly string[] | undefined): Promise<string[]> {
  const out: string[] = [];
  for (const ref of refs ?? []) {
    const uuid = (await requireOrg(app, ref.trim())).uuid;
    if (!out.includes(uuid)) out.push(uuid);
  }
  return out;
}

/** Org uuids → `{ uuid, name }` for display (a deleted org shows with an empty name). */
export async function orgViews(app: AppContext, uuids: readonly string[]): Promise<{ uuid: string; name: string }[]> {
  return uuids.length === 0 ? [] : viewsOf(await orgNames(app), uuids);
}

/** Every org's name by uuid (one read, for showing the org bindings of many users or tokens). */
export async function orgNames(app: AppContext): Promise<Map<string, string>> {
  return new Map((await app.repos.orgs.list()).map((o) => [o.uuid, o.name]));
}

/** Org uuids → `{ uuid, name }` with the names of `orgNames`. */
export function viewsOf(names: ReadonlyMap<string, string>, uuids: readonly string[]): { uuid: string; name: string }[] {
  return uuids.map((uuid) => ({ uuid, name: names.get(uuid) ?? '' }));
}

export function userView(names: ReadonlyMap<string, string>, u: UserRecord): UserView {
  return { username: u.username, role: u.role, orgs: viewsOf(names, u.orgs), created_at: u.created_at, updated_at: u.updated_at };
}

function checkRole(role: unknown): Role {
  if (!isRole(role)) throw errors.invalidRole(String(role));
  return role;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw errors.weakPassword(problem);
}

async function requireUser(app: AppContext, username: string): Promise<UserRecord> {
  const u = await app.repos.access.getUser(username);
  if (!u) throw errors.userNotFound(username);
  return u;
}

/** Adds a user with a role and optional org bindings. */
export async function addUser(app: AppContext, input: { username: string; password: string; role: string; orgs?: string[] }): Promise<UserView> {
  const username = input.username.trim();
  if (!USER_NAME_RE.test(username)) throw errors.invalidUserName(input.username);
  const role = checkRole(input.role);
  if (isSettingsUser(app, username)) throw errors.userNameTaken(username);
  if (await app.repos.access.getUser(username)) throw errors.userExists(username);
  checkPassword(input.password);
  const orgs = await resolveOrgRefs(app, input.orgs);
  const password_hash = await hashPassword(input.password);
  try {
    // Sessions of an earlier user of the same name must not come back to life.
    await app.repos.access.bumpTokenVersion(username);
    const created = await app.repos.access.createUser({ username, password_hash, role, orgs });
    return userView(await orgNames(app), created);
  } catch (err) {
    if (/UNIQUE constraint/i.test(String((err as Error).message))) throw errors.userExists(username);
    throw err;
  }
}

export async function listUsers(app: AppContext): Promise<UserView[]> {
  const users = await app.repos.access.listUsers();
  const names = await orgNames(app);
  return users.map((u) => userView(names, u));
}

export async function getUser(app: AppContext, username: string): Promise<UserView> {
  const u = await requireUser(app, username);
  return userView(await orgNames(app), u);
}

/** Changes a password; every session of the user ends (its JWTs stop working). */
export async function setPassword(app: AppContext, username: string, password: string): Promise<UserView> {
  await requireUser(app, username);
  checkPassword(password);
  const password_hash = await hashPassword(password);
  const u = await app.repos.access.updateUser(username, { password_hash });
  if (!u) throw errors.userNotFound(username);
  await app.repos.access.bumpTokenVersion(u.username);
  return userView(await orgNames(app), u);
}

/** Changes role and/or org bindings; they apply to the user's next request. */
export async function updateUser(app: AppContext, username: string, patch: { role?: string; orgs?: string[] }): Promise<UserView> {
  await requireUser(app, username);
  const role = patch.role !== undefined ? checkRole(patch.role) : undefined;
  const orgs = patch.orgs !== undefined ? await resolveOrgRefs(app, patch.orgs) : undefined;
  const u = await app.repos.access.updateUser(username, {
    ...(role !== undefined ? { role } : {}),
    ...(orgs !== undefined ? { orgs } : {}),
  });
  if (!u) throw errors.userNotFound(username);
  return userView(await orgNames(app), u);
}

/** Removes a user; its sessions end at once. */
export async function removeUser(app: AppContext, username: string): Promise<{ message: string; username: string }> {
  const u = await requireUser(app, username);
  await app.repos.tx(async () => {
    await app.repos.access.deleteUser(u.username);
    await app.repos.access.bumpTokenVersion(u.username);
  });
  return { message: 'User removed', username: u.username };
}
