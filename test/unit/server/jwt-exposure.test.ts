import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signToken, verifyToken } from '../../../src/server/plugins/jwt.js';
import { exposureWarnings, isLoopbackHost } from '../../../src/cli/actions/serve.js';
import { generateSettingsText, parseSettingsText } from '../../../src/settings/load.js';

const SECRET = 'a-secret-signing-key-of-some-length';
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** A token signed by hand, to forge headers jose would never produce. */
function forged(header: Record<string, unknown>, payload: Record<string, unknown>, secret = SECRET, hash = 'sha256'): string {
  const h = b64(header);
  const p = b64(payload);
  const sig = header.alg === 'none' ? '' : createHmac(hash, secret).update(`${h}.${p}`).digest('base64url');
  return `${h}.${p}.${sig}`;
}

describe('JWT (jose, HS256 pinned)', () => {
  const now = Date.now();
  const exp = Math.floor(now / 1000) + 600;

  it('round-trips a token with username, iat and exp', async () => {
    const token = await signToken('alice', SECRET, 60, now);
    const claims = await verifyToken(token, SECRET, now);
    expect(claims).toMatchObject({ username: 'alice', exp: Math.floor(now / 1000) + 3600, iat: Math.floor(now / 1000) });
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
  });

  it('rejects alg none, HS512, RS256 claims, a wrong key, a missing or past exp, a future nbf and a non-string username', async () => {
    expect(await verifyToken(forged({ alg: 'none', typ: 'JWT' }, { username: 'a', exp }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS512', typ: 'JWT' }, { username: 'a', exp }, SECRET, 'sha512'), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'RS256', typ: 'JWT' }, { username: 'a', exp }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a', exp }, 'other-key'), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a' }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a', exp: Math.floor(now / 1000) - 1 }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a', exp, nbf: exp }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 42, exp }), SECRET, now)).toBeUndefined();
    expect(await verifyToken(forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a', exp }), SECRET, now)).toMatchObject({ username: 'a' });
  });

  it('accepts nothing with an empty secret and refuses to sign with one', async () => {
    const token = forged({ alg: 'HS256', typ: 'JWT' }, { username: 'a', exp }, '');
    expect(await verifyToken(token, '', now)).toBeUndefined();
    await expect(signToken('a', '', 60)).rejects.toThrow(/signing key/);
  });

  it('never throws on garbage', async () => {
    for (const t of ['', 'a', 'a.b.c', '....', 'x'.repeat(10_000), '\u0000.\u0000.\u0000']) expect(await verifyToken(t, SECRET, now)).toBeUndefined();
  });
});

describe('listening beyond loopback', () => {
  it('generated settings listen on 127.0.0.1', () => {
    expect(parseSettingsText(generateSettingsText('/b'), '/b').settings.server.host).toBe('127.0.0.1');
  });

  it('knows loopback spellings', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', 'LOCALHOST']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('warns on another interface, and louder without auth', () => {
    expect(exposureWarnings('127.0.0.1', true)).toEqual([]);
    expect(exposureWarnings('127.0.0.1', false)).toEqual([]);
    const warn = exposureWarnings('0.0.0.0', false);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatch(/^WARNING: listening on every network interface/);
    const danger = exposureWarnings('10.1.2.3', true);
    expect(danger.join('\n')).toMatch(/DANGER: authentication is DISABLED \(--no-auth\) and the daemon listens on 10\.1\.2\.3/);
    expect(danger.join('\n')).toMatch(/Anyone who can reach this port can run commands/);
  });
});
