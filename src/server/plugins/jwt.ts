import { createHmac, timingSafeEqual } from 'node:crypto';

/** JWT claims issued by the login route. */
export interface OsmClaims {
  username: string;
  iat: number;
  exp: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/** Signs an HS256 JWT with claims username, iat, exp (lifetime in minutes). */
export function signToken(username: string, secret: string, lifetimeMinutes: number, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const payload = Buffer.from(JSON.stringify({ username, iat, exp: iat + Math.round(lifetimeMinutes * 60) })).toString('base64url');
  const sig = createHmac('sha256', secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${sig}`;
}

/**
 * Verifies an HS256 JWT. The algorithm is pinned (a token claiming `none`, RS256 or HS512 is
 * rejected), the signature is compared in constant time, and `exp` is required and enforced.
 * Returns the claims or undefined.
 */
export function verifyToken(token: string, secret: string, now = Date.now()): OsmClaims | undefined {
  if (!secret || typeof token !== 'string') return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [h, p, s] = parts as [string, string, string];
  let header: { alg?: string };
  let claims: Partial<OsmClaims> & { nbf?: number };
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!header || header.alg !== 'HS256') return undefined;
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  let given: Buffer;
  try {
    given = Buffer.from(s, 'base64url');
  } catch {
    return undefined;
  }
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const nowSec = Math.floor(now / 1000);
  if (typeof claims.exp !== 'number' || claims.exp <= nowSec) return undefined;
  if (typeof claims.nbf === 'number' && claims.nbf > nowSec) return undefined;
  if (typeof claims.username !== 'string') return undefined;
  return { username: claims.username, iat: Number(claims.iat ?? 0), exp: claims.exp };
}

/** Constant-time string comparison (lengths leak, contents do not). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
