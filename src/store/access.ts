/**
 * Team access tables (migration 011): users with a role and org bindings, API tokens (stored as a
 * hash of the secret), per-username JWT versions (revocation) and the append-only audit log.
 */
import { listPage, nowIso, parseStringArray, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';

export type Role = 'viewer' | 'operator' | 'admin';
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin'];

export interface UserRecord {
  id: number;
  username: string;
  password_hash: string;
  role: Role;
  /** Org uuids the user is bound to; empty = every org. */
  orgs: string[];
  created_at: string;
  updated_at: string;
}

export interface TokenRecord {
  id: number;
  name: string;
  token_hash: string;
  /** The first characters of the secret, to recognise a token in listings. */
  token_prefix: string;
  role: Role;
  orgs: string[];
  created_by: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface AuditRecord {
  id: number;
  created_at: string;
  actor: string;
  actor_kind: string;
  role: string;
  orgs: string[];
  method: string;
  route: string;
  path: string;
  object: string;
  status: number;
  result: string;
  client_ip: string;
  detail: string;
}

export type AuditInput = Omit<AuditRecord, 'id' | 'created_at'> & { created_at?: string };

export interface AuditFilter {
  actor?: string;
  /** ISO lower bound (inclusive) of created_at. */
  since?: string;
  /** Only rows with an id above this (streaming export). */
  after_id?: number;
  result?: string;
}

export interface AccessRepo {
  getUser(username: string): UserRecord | undefined;
  listUsers(): UserRecord[];
  createUser(input: { username: string; password_hash: string; role: Role; orgs?: string[] }): UserRecord;
  /** Changes the given fields; undefined when the user does not exist. */
  updateUser(username: string, patch: { password_hash?: string; role?: Role; orgs?: string[] }): UserRecord | undefined;
  deleteUser(username: string): boolean;

  getToken(id: number): TokenRecord | undefined;
  tokenByHash(hash: string): TokenRecord | undefined;
  /** The live (not revoked) token with this name. */
  liveTokenByName(name: string): TokenRecord | undefined;
  listTokens(opts?: { includeRevoked?: boolean }): TokenRecord[];
  createToken(input: { name: string; token_hash: string; token_prefix: string; role: Role; orgs?: string[]; created_by?: string; expires_at?: string | null }): TokenRecord;
  /** Marks a token revoked; false when it was already revoked or does not exist. */
  revokeToken(id: number): boolean;
  /** Records a use, at most once a minute per token (a write per request would be wasted). */
  touchToken(id: number, at?: string): void;

  /** The JWT version of a username (1 when never bumped). */
  tokenVersion(username: string): number;
  /** Invalidates every JWT issued to `username` so far; returns the new version. */
  bumpTokenVersion(username: string): number;

  audit(input: AuditInput): void;
  /** Newest first, or oldest first with `order: 'asc'` (export). */
  listAudit(filter: AuditFilter, page: Page, order?: 'asc' | 'desc'): ListResult<AuditRecord>;
}

export function mapUser(row: Row): UserRecord {
  return {
    id: Number(row.id),
    username: String(row.username),
    password_hash: String(row.password_hash),
    role: row.role as Role,
    orgs: parseStringArray(row.orgs),
    created_at: String(row.created_at),
    updated_at: String(row.updated_at),
  };
}

export function mapToken(row: Row): TokenRecord {
  return {
    id: Number(row.id),
    name: String(row.name),
    token_hash: String(row.token_hash),
    token_prefix: String(row.token_prefix),
    role: row.role as Role,
    orgs: parseStringArray(row.orgs),
    created_by: String(row.created_by ?? ''),
    expires_at: (row.expires_at as string | null) ?? null,
    revoked_at: (row.revoked_at as string | null) ?? null,
    last_used_at: (row.last_used_at as string | null) ?? null,
    created_at: String(row.created_at),
  };
}

export function mapAudit(row: Row): AuditRecord {
  return {
    id: Number(row.id),
    created_at: String(row.created_at),
    actor: String(row.actor),
    actor_kind: String(row.actor_kind),
    role: String(row.role ?? ''),
    orgs: parseStringArray(row.orgs),
    method: String(row.method),
    route: String(row.route),
    path: String(row.path),
    object: String(row.object ?? ''),
    status: Number(row.status),
    result: String(row.result),
    client_ip: String(row.client_ip ?? ''),
    detail: String(row.detail ?? ''),
  };
}

const TOUCH_INTERVAL_MS = 60_000;

/** The statements of the access repository (positional parameters), dialect-neutral. */
export const ACCESS_SQL = {
  createUser: 'INSERT INTO users (username, password_hash, role, orgs, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
  createToken: 'INSERT INTO api_tokens (name, token_hash, token_prefix, role, orgs, created_by, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *',
  revokeToken: 'UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  touchToken: 'UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
  bumpTokenVersion:
    'INSERT INTO auth_versions (username, token_version) VALUES (?, 2) ON CONFLICT(username) DO UPDATE SET token_version = auth_versions.token_version + 1 RETURNING token_version',
  audit: `INSERT INTO audit_log (created_at, actor, actor_kind, role, orgs, method, route, path, object, status, result, client_ip, detail)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
} as const;

type AccessInput<K extends keyof AccessRepo> = Parameters<AccessRepo[K]>[0];

export const userParams = (input: AccessInput<'createUser'>, now = nowIso()) => [input.username, input.password_hash, input.role, JSON.stringify(input.orgs ?? []), now, now];
export const tokenParams = (input: AccessInput<'createToken'>) => [
  input.name, input.token_hash, input.token_prefix, input.role, JSON.stringify(input.orgs ?? []), input.created_by ?? '', input.expires_at ?? null, nowIso(),
];
export const auditParams = (input: AuditInput) => [
  input.created_at ?? nowIso(), input.actor, input.actor_kind, input.role, JSON.stringify(input.orgs ?? []), input.method, input.route, input.path,
  input.object, input.status, input.result, input.client_ip, input.detail,
];
/** (at, id, threshold): a use is recorded at most once a minute. */
export const touchParams = (id: number, at: string) => [at, id, new Date(Date.parse(at) - TOUCH_INTERVAL_MS).toISOString()];

/** The UPDATE … RETURNING of updateUser, or undefined when the patch is empty. */
export function userUpdate(username: string, patch: Parameters<AccessRepo['updateUser']>[1]): { sql: string; params: unknown[] } | undefined {
  const sets: string[] = [];
  const params: unknown[] = [];
  if (patch.password_hash !== undefined) sets.push('password_hash = ?') && params.push(patch.password_hash);
  if (patch.role !== undefined) sets.push('role = ?') && params.push(patch.role);
  if (patch.orgs !== undefined) sets.push('orgs = ?') && params.push(JSON.stringify(patch.orgs));
  if (sets.length === 0) return undefined;
  return { sql: `UPDATE users SET ${sets.join(', ')}, updated_at = ? WHERE username = ? RETURNING *`, params: [...params, nowIso(), username] };
}

/** The filters of listAudit (dialect-neutral). */
export function auditWhere(filter: AuditFilter): Where {
  const where = new Where().eq('actor', filter.actor).eq('result', filter.result);
  if (filter.since) where.add('created_at >= ?', filter.since);
  if (filter.after_id !== undefined) where.add('id > ?', filter.after_id);
  return where;
}

/** Creates the team-access repository on one connection. */
export function createAccessRepo(db: Db, q: StatementCache): AccessRepo {
  return {
    getUser(username) {
      const row = q('SELECT * FROM users WHERE username = ?').get(username) as Row | undefined;
      return row ? mapUser(row) : undefined;
    },
    listUsers() {
      return (q('SELECT * FROM users ORDER BY username COLLATE NOCASE').all() as Row[]).map(mapUser);
    },
    createUser(input) {
      return mapUser(q(ACCESS_SQL.createUser).get(...userParams(input)) as Row);
    },
    updateUser(username, patch) {
      const u = userUpdate(username, patch);
      if (!u) return this.getUser(username);
      const row = q(u.sql).get(...u.params) as Row | undefined;
      return row ? mapUser(row) : undefined;
    },
    deleteUser(username) {
      return q('DELETE FROM users WHERE username = ?').run(username).changes > 0;
    },

    getToken(id) {
      const row = q('SELECT * FROM api_tokens WHERE id = ?').get(id) as Row | undefined;
      return row ? mapToken(row) : undefined;
    },
    tokenByHash(hash) {
      const row = q('SELECT * FROM api_tokens WHERE token_hash = ?').get(hash) as Row | undefined;
      return row ? mapToken(row) : undefined;
    },
    liveTokenByName(name) {
      const row = q('SELECT * FROM api_tokens WHERE name = ? AND revoked_at IS NULL').get(name) as Row | undefined;
      return row ? mapToken(row) : undefined;
    },
    listTokens(opts = {}) {
      const sql = opts.includeRevoked ? 'SELECT * FROM api_tokens ORDER BY id' : 'SELECT * FROM api_tokens WHERE revoked_at IS NULL ORDER BY id';
      return (q(sql).all() as Row[]).map(mapToken);
    },
    createToken(input) {
      return mapToken(q(ACCESS_SQL.createToken).get(...tokenParams(input)) as Row);
    },
    revokeToken(id) {
      return q(ACCESS_SQL.revokeToken).run(nowIso(), id).changes > 0;
    },
    touchToken(id, at = nowIso()) {
      q(ACCESS_SQL.touchToken).run(...touchParams(id, at));
    },

    tokenVersion(username) {
      const row = q('SELECT token_version FROM auth_versions WHERE username = ?').get(username) as { token_version: number } | undefined;
      return row?.token_version ?? 1;
    },
    bumpTokenVersion(username) {
      const row = q(ACCESS_SQL.bumpTokenVersion).get(username) as { token_version: number };
      return row.token_version;
    },

    audit(input) {
      q(ACCESS_SQL.audit).run(...auditParams(input));
    },
    listAudit(filter, page, order = 'desc') {
      return listPage(db, q, { table: 'audit_log', where: auditWhere(filter), orderBy: order === 'asc' ? 'id ASC' : 'id DESC', map: mapAudit }, page);
    },
  };
}
