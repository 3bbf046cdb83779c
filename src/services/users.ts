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
export function resolveOrgRefs(app: AppContext, refs: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const ref of refs ?? []) {
    const uuid = requireOrg(app, ref.trim()).uuid;
    if (!out.includes(uuid)) out.push(uuid);
  }
  return out;
}

/** Org uuids → `{ uuid, name }` for display (a deleted org shows with an empty name). */
export function orgViews(app: AppContext, uuids: readonly string[]): { uuid: string; name: string }[] {
  return uuids.map((uuid) => ({ uuid, name: app.store.orgs.get(uuid)?.name ?? '' }));
}

export function userView(app: AppContext, u: UserRecord): UserView {
  return { username: u.username, role: u.role, orgs: orgViews(app, u.orgs), created_at: u.created_at, updated_at: u.updated_at };
}

function checkRole(role: unknown): Role {
  if (!isRole(role)) throw errors.invalidRole(String(role));
  return role;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw errors.weakPassword(problem);
}

function requireUser(app: AppContext, username: string): UserRecord {
  const u = app.store.access.getUser(username);
  if (!u) throw errors.userNotFound(username);
  return u;
}

/** Adds a user with a role and optional org bindings. */
export async function addUser(app: AppContext, input: { username: string; password: string; role: string; orgs?: string[] }): Promise<UserView> {
  const username = input.username.trim();
  if (!USER_NAME_RE.test(username)) throw errors.invalidUserName(input.username);
  const role = checkRole(input.role);
  if (isSettingsUser(app, username)) throw errors.userNameTaken(username);
  if (app.store.access.getUser(username)) throw errors.userExists(username);
  checkPassword(input.password);
  const orgs = resolveOrgRefs(app, input.orgs);
  const password_hash = await hashPassword(input.password);
  try {
    // Sessions of an earlier user of the same name must not come back to life.
    app.store.access.bumpTokenVersion(username);
    return userView(app, app.store.access.createUser({ username, password_hash, role, orgs }));
  } catch (err) {
    if (/UNIQUE constraint/i.test(String((err as Error).message))) throw errors.userExists(username);
    throw err;
  }
}

export function listUsers(app: AppContext): UserView[] {
  return app.store.access.listUsers().map((u) => userView(app, u));
}

export function getUser(app: AppContext, username: string): UserView {
  return userView(app, requireUser(app, username));
}

/** Changes a password; every session of the user ends (its JWTs stop working). */
export async function setPassword(app: AppContext, username: string, password: string): Promise<UserView> {
  requireUser(app, username);
  checkPassword(password);
  const password_hash = await hashPassword(password);
  const u = app.store.access.updateUser(username, { password_hash });
  if (!u) throw errors.userNotFound(username);
  app.store.access.bumpTokenVersion(u.username);
  return userView(app, u);
}

/** Changes role and/or org bindings; they apply to the user's next request. */
export function updateUser(app: AppContext, username: string, patch: { role?: string; orgs?: string[] }): UserView {
  requireUser(app, username);
  const u = app.store.access.updateUser(username, {
    ...(patch.role !== undefined ? { role: checkRole(patch.role) } : {}),
    ...(patch.orgs !== undefined ? { orgs: resolveOrgRefs(app, patch.orgs) } : {}),
  });
  if (!u) throw errors.userNotFound(username);
  return userView(app, u);
}

/** Removes a user; its sessions end at once. */
export function removeUser(app: AppContext, username: string): { message: string; username: string } {
  const u = requireUser(app, username);
  app.store.tx(() => {
    app.store.access.deleteUser(u.username);
    app.store.access.bumpTokenVersion(u.username);
  });
  return { message: 'User removed', username: u.username };
}
