/**
 * Personal API tokens (`osm token …`, `/osm/api/tokens`): a role, optional org bindings and an
 * optional expiry. The secret is returned once, at creation; only its hash is stored.
 */
import { errors } from '../errors.js';
import { newApiToken } from '../auth/api-tokens.js';
import { isRole, type Role } from '../auth/roles.js';
import type { TokenRecord } from '../store/access.js';
import { parseDuration } from '../util/duration.js';
import { orgNames, resolveOrgRefs, viewsOf } from './users.js';
import type { AppContext } from './context.js';

const TOKEN_NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;

export interface TokenView {
  id: number;
  name: string;
  role: Role;
  orgs: { uuid: string; name: string }[];
  prefix: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** active, expired or revoked. */
  status: 'active' | 'expired' | 'revoked';
}

export function tokenView(names: ReadonlyMap<string, string>, t: TokenRecord, now = Date.now()): TokenView {
  const status = t.revoked_at ? 'revoked' : t.expires_at && Date.parse(t.expires_at) <= now ? 'expired' : 'active';
  return {
    id: t.id, name: t.name, role: t.role, orgs: viewsOf(names, t.orgs), prefix: t.token_prefix, created_by: t.created_by,
    created_at: t.created_at, expires_at: t.expires_at, last_used_at: t.last_used_at, revoked_at: t.revoked_at, status,
  };
}

/** `30d`, `12h`, `45m`, `3600s` (or `never`/empty) → an ISO expiry, or null for none. */
export function expiryFrom(text: string | undefined, now = Date.now()): string | null {
  const t = (text ?? '').trim();
  if (t === '' || t.toLowerCase() === 'never') return null;
  let ms: number | undefined;
  try {
    ms = /^\d+(\.\d+)?[smhd]$/.test(t) || /^\d+$/.test(t) ? parseDuration(t) : undefined;
  } catch {
    ms = undefined;
  }
  if (!ms || ms < 1000) throw errors.invalidExpiry(t);
  const at = new Date(now + ms);
  // A duration past the last representable date (e.g. 99999999999d) is an invalid expiry, not a 500.
  if (!Number.isFinite(at.getTime())) throw errors.invalidExpiry(t);
  return at.toISOString();
}

/** Creates a token; the answer holds the secret, which is never shown again. */
export async function createToken(app: AppContext, input: { name: string; role: string; orgs?: string[]; expires?: string; createdBy?: string }): Promise<TokenView & { token: string }> {
  const name = input.name.trim();
  if (!TOKEN_NAME_RE.test(name)) throw errors.invalidTokenName(input.name);
  if (!isRole(input.role)) throw errors.invalidRole(String(input.role));
  if (await app.repos.access.liveTokenByName(name)) throw errors.tokenNameTaken(name);
  const orgs = await resolveOrgRefs(app, input.orgs);
  const expires_at = expiryFrom(input.expires);
  const secret = newApiToken();
  try {
    const row = await app.repos.access.createToken({ name, token_hash: secret.hash, token_prefix: secret.prefix, role: input.role, orgs, created_by: input.createdBy ?? '', expires_at });
    return { ...tokenView(await orgNames(app), row), token: secret.secret };
  } catch (err) {
    if (/UNIQUE constraint/i.test(String((err as Error).message))) throw errors.tokenNameTaken(name);
    throw err;
  }
}

export async function listTokens(app: AppContext, opts: { all?: boolean } = {}): Promise<TokenView[]> {
  const tokens = await app.repos.access.listTokens({ includeRevoked: opts.all });
  const names = await orgNames(app);
  return tokens.map((t) => tokenView(names, t));
}

/** Revokes a token by id or by the name of a live token; it stops working at the next request. */
export async function revokeToken(app: AppContext, ref: string): Promise<{ message: string; id: number; name: string }> {
  const r = ref.trim();
  const token = /^\d+$/.test(r) ? await app.repos.access.getToken(Number(r)) : await app.repos.access.liveTokenByName(r);
  if (!token) throw errors.tokenNotFound(ref);
  await app.repos.access.revokeToken(token.id);
  return { message: token.revoked_at ? 'Token was already revoked' : 'Token revoked', id: token.id, name: token.name };
}
