/**
 * Personal API tokens: `osm_` + 43 random base64url characters (256 bits). Only a SHA-256 of the
 * secret is stored — with that much entropy a slow KDF adds nothing, and lookups stay one index
 * probe per request.
 */
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'osm_';

/** A new secret with its stored hash and display prefix. */
export function newApiToken(): { secret: string; hash: string; prefix: string } {
  const secret = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashApiToken(secret), prefix: secret.slice(0, TOKEN_PREFIX.length + 6) };
}

/** The stored form of a token secret. */
export function hashApiToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** True for strings shaped like a personal API token (cheap pre-check before a lookup). */
export function looksLikeApiToken(value: string | undefined): value is string {
  return typeof value === 'string' && value.startsWith(TOKEN_PREFIX) && value.length >= TOKEN_PREFIX.length + 20 && value.length <= 200;
}
