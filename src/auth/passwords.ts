/**
 * Password hashes for database users: scrypt from node:crypto (a memory-hard KDF), run on libuv's
 * thread pool so a login never blocks the event loop. Stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>` so parameters can be raised later
 * without invalidating existing hashes.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
/** Upper bounds for parameters read back from a stored hash (a tampered row must not exhaust memory). */
const MAX_LOG_N = 20;

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

const optsFor = (logN: number, r: number, p: number): ScryptOptions => ({ N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r + 1024 * 1024 });

/** Hashes a password with a fresh random salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, optsFor(LOG_N, R, P));
  return ['scrypt', LOG_N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `password` matches `stored`; false for any malformed stored value. Constant time in the key comparison. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![logN, r, p].every(Number.isInteger) || logN < 10 || logN > MAX_LOG_N || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (salt.length < 8 || expected.length < 16) return false;
  try {
    const key = await scrypt(password, salt, expected.length, optsFor(logN, r, p));
    return timingSafeEqual(key, expected);
  } catch {
    return false;
  }
}

/** A hash of a random password, for comparing against when the user does not exist (same timing as a real check). */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}

/** Refuses passwords too weak to protect a shared server; returns the reason or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < 10) return 'a password needs at least 10 characters';
  if (password.length > 1024) return 'a password can have at most 1024 characters';
  if (/^\s|\s$/.test(password)) return 'a password cannot start or end with whitespace';
  return undefined;
}
