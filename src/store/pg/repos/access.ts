/**
 * Team access on PostgreSQL (statements shared with src/store/access.ts). Usernames compare
 * case-insensitively through the column's osm_nocase collation; listings sort like SQLite's
 * NOCASE (ASCII letters folded, then byte order).
 */
import { ACCESS_SQL, auditParams, auditWhere, mapAudit, mapToken, mapUser, tokenParams, touchParams, userParams, userUpdate, type AccessRepo } from '../../access.js';
import type { Async } from '../../async.js';
import { nowIso } from '../../sql.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

export function createPgAccessRepo(db: PgDb): Async<AccessRepo> {
  const getUser = async (username: string) => {
    const row = await db.one('SELECT * FROM users WHERE username = ?', [username]);
    return row ? mapUser(row) : undefined;
  };
  const token = async (sql: string, params: unknown[]) => {
    const row = await db.one(sql, params);
    return row ? mapToken(row) : undefined;
  };
  return {
    getUser,
    async listUsers() {
      return (await db.all('SELECT * FROM users ORDER BY LOWER(username COLLATE "C"), username COLLATE "C"')).map(mapUser);
    },
    async createUser(input) {
      return mapUser((await db.one(ACCESS_SQL.createUser, userParams(input)))!);
    },
    async updateUser(username, patch) {
      const u = userUpdate(username, patch);
      if (!u) return getUser(username);
      const row = await db.one(u.sql, u.params);
      return row ? mapUser(row) : undefined;
    },
    async deleteUser(username) {
      return (await db.query('DELETE FROM users WHERE username = ?', [username])).rowCount > 0;
    },
    getToken: (id) => token('SELECT * FROM api_tokens WHERE id = ?', [id]),
    tokenByHash: (hash) => token('SELECT * FROM api_tokens WHERE token_hash = ?', [hash]),
    liveTokenByName: (name) => token('SELECT * FROM api_tokens WHERE name = ? AND revoked_at IS NULL', [name]),
    async listTokens(opts = {}) {
      const sql = opts.includeRevoked ? 'SELECT * FROM api_tokens ORDER BY id' : 'SELECT * FROM api_tokens WHERE revoked_at IS NULL ORDER BY id';
      return (await db.all(sql)).map(mapToken);
    },
    async createToken(input) {
      return mapToken((await db.one(ACCESS_SQL.createToken, tokenParams(input)))!);
    },
    async revokeToken(id) {
      return (await db.query(ACCESS_SQL.revokeToken, [nowIso(), id])).rowCount > 0;
    },
    async touchToken(id, at = nowIso()) {
      await db.query(ACCESS_SQL.touchToken, touchParams(id, at));
    },
    async tokenVersion(username) {
      return Number((await db.one('SELECT token_version FROM auth_versions WHERE username = ?', [username]))?.token_version ?? 1);
    },
    async bumpTokenVersion(username) {
      return Number((await db.one(ACCESS_SQL.bumpTokenVersion, [username]))!.token_version);
    },
    async audit(input) {
      await db.query(ACCESS_SQL.audit, auditParams(input));
    },
    listAudit(filter, page, order = 'desc') {
      return pgListPage(db, { table: 'audit_log', where: auditWhere(filter), orderBy: order === 'asc' ? 'id ASC' : 'id DESC', map: mapAudit }, page);
    },
  };
}
