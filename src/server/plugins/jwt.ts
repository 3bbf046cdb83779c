import { timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/** JWT claims issued by the login route. */
export interface OsmClaims {
  username: string;
  iat: number;
  exp: number;
}

const ALG = 'HS256';
const encoder = new TextEncoder();

/** Signs an HS256 JWT with claims username, iat, exp (lifetime in minutes), through `jose`. */
export async function signToken(username: string, secret: string, lifetimeMinutes: number, now = Date.now(), extra: Record<string, unknown> = {}): Promise<string> {
  if (!secret) throw new Error('the JWT signing key (server.jwt.secret_signing_key) is empty');
  const iat = Math.floor(now / 1000);
  return new SignJWT({ ...extra, username })
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setIssuedAt(iat)
    .setExpirationTime(iat + Math.round(lifetimeMinutes * 60))
    .sign(encoder.encode(secret));
}

/**
 * Verifies an HS256 JWT with `jose`: the algorithm is pinned (a token claiming `none`, RS256 or
 * HS512 is rejected), `exp` is required and enforced, `nbf` honoured, and `username` must be a
 * string. Returns the claims (and any extra ones) or undefined; never throws.
 */
export async function verifyToken(token: string, secret: string, now = Date.now()): Promise<(OsmClaims & Record<string, unknown>) | undefined> {
  if (!secret || typeof token !== 'string' || token.length > 8192) return undefined;
  try {
    const { payload } = await jwtVerify(token, encoder.encode(secret), {
      algorithms: [ALG],
      requiredClaims: ['exp'],
      currentDate: new Date(now),
      clockTolerance: 0,
    });
    if (typeof payload.username !== 'string' || typeof payload.exp !== 'number') return undefined;
    return { ...payload, username: payload.username, iat: Number(payload.iat ?? 0), exp: payload.exp };
  } catch {
    return undefined;
  }
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
