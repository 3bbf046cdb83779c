/**
 * Secrets osm must check but never show again (webhook auth keys): stored as salted scrypt hashes
 * (`scrypt$N$r$p$salt$hash`, base64url). Keys may be chosen by users, so a fast hash would let
 * a stolen database be brute-forced; scrypt makes each guess cost memory and time. Checks run
 * scrypt off the event loop and compare in constant time.
 */
import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16_384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Bounds on the parameters read back, so a tampered row cannot make a check allocate gigabytes. */
const MAX_N = 1 << 20;
const MAX_MEM = 256 * 1024 * 1024;

/** The salted hash of `secret` to store in its place. */
export function hashSecret(secret: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(secret, salt, KEY_LENGTH, { N, r: R, p: P });
  return ['scrypt', N, R, P, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

function scryptAsync(secret: string, salt: Buffer, length: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, length, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

/** True when `secret` is the one `stored` was made from; false for anything malformed. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const hash = Buffer.from(parts[5]!, 'base64url');
  if (![n, r, p].every(Number.isSafeInteger) || n < 2 || n > MAX_N || (n & (n - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  if (salt.length < 8 || hash.length < 16) return false;
  let got: Buffer;
  try {
    got = await scryptAsync(secret, salt, hash.length, { N: n, r, p, maxmem: MAX_MEM });
  } catch {
    return false;
  }
  return timingSafeEqual(got, hash);
}
