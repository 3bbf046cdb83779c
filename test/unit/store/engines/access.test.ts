/** Users, API tokens, JWT versions and the audit log on both engines. */
import { describe, expect, it } from 'vitest';
import { ENGINES, useStore } from './engines.js';

describe.each(ENGINES)('access on $name', (engine) => {
  const s = useStore(engine);

  it('manages users case-insensitively, listed like NOCASE', async () => {
    const bob = await s().access.createUser({ username: 'bob', password_hash: 'h1', role: 'viewer' });
    expect(bob).toMatchObject({ username: 'bob', role: 'viewer', orgs: [] });
    await s().access.createUser({ username: 'Alice', password_hash: 'h2', role: 'admin', orgs: ['o1'] });
    await s().access.createUser({ username: '_svc', password_hash: 'h3', role: 'operator' });
    await expect(s().access.createUser({ username: 'BOB', password_hash: 'x', role: 'viewer' })).rejects.toThrow();
    expect((await s().access.listUsers()).map((u) => u.username)).toEqual(['_svc', 'Alice', 'bob']);
    expect((await s().access.getUser('ALICE'))?.orgs).toEqual(['o1']);
    expect(await s().access.updateUser('bob', {})).toEqual(bob);
    expect(await s().access.updateUser('BOB', { role: 'admin', orgs: ['x'] })).toMatchObject({ username: 'bob', role: 'admin', orgs: ['x'], password_hash: 'h1' });
    expect(await s().access.updateUser('nobody', { role: 'admin' })).toBeUndefined();
    expect(await s().access.deleteUser('bob')).toBe(true);
    expect(await s().access.deleteUser('bob')).toBe(false);
  });

  it('creates, finds, touches at most once a minute and revokes tokens; bumps JWT versions', async () => {
    const t = await s().access.createToken({ name: 'ci', token_hash: 'hash1', token_prefix: 'osm_ab', role: 'operator', expires_at: '2030-01-01T00:00:00.000Z' });
    expect(t).toMatchObject({ name: 'ci', created_by: '', revoked_at: null, last_used_at: null, orgs: [] });
    expect(await s().access.tokenByHash('hash1')).toEqual(t);
    expect(await s().access.liveTokenByName('ci')).toEqual(t);
    await s().access.touchToken(t.id, '2024-01-01T00:00:00.000Z');
    await s().access.touchToken(t.id, '2024-01-01T00:00:30.000Z');
    expect((await s().access.getToken(t.id))?.last_used_at).toBe('2024-01-01T00:00:00.000Z');
    await s().access.touchToken(t.id, '2024-01-01T00:01:01.000Z');
    expect((await s().access.getToken(t.id))?.last_used_at).toBe('2024-01-01T00:01:01.000Z');
    expect(await s().access.revokeToken(t.id)).toBe(true);
    expect(await s().access.revokeToken(t.id)).toBe(false);
    expect(await s().access.liveTokenByName('ci')).toBeUndefined();
    const t2 = await s().access.createToken({ name: 'ci', token_hash: 'hash2', token_prefix: 'osm_cd', role: 'viewer', orgs: ['o'], created_by: 'admin' });
    expect((await s().access.listTokens()).map((x) => x.id)).toEqual([t2.id]);
    expect((await s().access.listTokens({ includeRevoked: true })).map((x) => x.id)).toEqual([t.id, t2.id]);
    expect(await s().access.tokenVersion('bob')).toBe(1);
    expect(await s().access.bumpTokenVersion('bob')).toBe(2);
    expect(await s().access.bumpTokenVersion('bob')).toBe(3);
    expect(await s().access.tokenVersion('bob')).toBe(3);
  });

  it('appends to the audit log and lists it filtered, both orders', async () => {
    const entry = (actor: string, result: string, created_at: string) => ({ actor, actor_kind: 'user', role: 'admin', orgs: ['o'], method: 'POST', route: '/r', path: '/r', object: '', status: 200, result, client_ip: '127.0.0.1', detail: '', created_at });
    await s().access.audit(entry('alice', 'ok', '2024-01-01T00:00:00.000Z'));
    await s().access.audit(entry('bob', 'denied', '2024-01-02T00:00:00.000Z'));
    await s().access.audit(entry('alice', 'ok', '2024-01-03T00:00:00.000Z'));
    const desc = await s().access.listAudit({}, { offset: 0, limit: 2 });
    expect(desc.total).toBe(3);
    expect(desc.data.map((a) => a.created_at)).toEqual(['2024-01-03T00:00:00.000Z', '2024-01-02T00:00:00.000Z']);
    expect(desc.data[0]).toMatchObject({ actor: 'alice', orgs: ['o'], status: 200 });
    const asc = await s().access.listAudit({ actor: 'alice' }, { offset: 0, limit: 10 }, 'asc');
    expect(asc.data.map((a) => a.created_at)).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-03T00:00:00.000Z']);
    expect((await s().access.listAudit({ after_id: asc.data[0]!.id, result: 'ok' }, { offset: 0, limit: 10 })).total).toBe(1);
    expect((await s().access.listAudit({ since: '2024-01-02' }, { offset: 0, limit: 10 })).total).toBe(2);
  });
});
