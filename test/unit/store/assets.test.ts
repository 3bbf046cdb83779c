import { describe, expect, it } from 'vitest';
import { memStore, page } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';

describe('assets.upsertMany', () => {
  it('inserts new rows with all timestamps at now and typed values', () => {
    const store = memStore();
    const res = store.assets.upsertMany('ws', [{ asset_value: 'a.example.com', url: 'https://a.example.com', a: ['1.2.3.4'], tech: ['nginx'], status_code: 200, is_cdn: true }], T0);
    expect(res).toMatchObject({ new: 1, updated: 0, unchanged: 0 });
    expect(res.newIds).toEqual(res.ids);
    const asset = store.assets.get(res.ids[0]!)!;
    expect(asset).toMatchObject({ workspace: 'ws', a: ['1.2.3.4'], tech: ['nginx'], status_code: 200, is_cdn: true, is_waf: false, created_at: T0, updated_at: T0, last_seen_at: T0 });
  });

  it('merges: non-empty incoming wins, booleans OR-ed, first-seen kept, updated_at moves only on change', () => {
    const store = memStore();
    const [id] = store.assets.upsertMany('ws', [{ asset_value: 'a.com', title: 'Old', tech: ['nginx'], status_code: 200, is_cdn: true, host_ip: '1.1.1.1' }], T0).ids;

    // Same values again (empty/zero fields do not erase anything): unchanged, only last_seen_at moves.
    const same = store.assets.upsertMany('ws', [{ asset_value: 'a.com', title: 'Old', status_code: 0, tech: [], is_cdn: false }], T1);
    expect(same).toMatchObject({ new: 0, updated: 0, unchanged: 1, ids: [id] });
    expect(store.assets.get(id!)).toMatchObject({ title: 'Old', tech: ['nginx'], status_code: 200, is_cdn: true, host_ip: '1.1.1.1', created_at: T0, updated_at: T0, last_seen_at: T1 });

    // A real change: updated_at and last_seen_at move, created_at stays.
    const changed = store.assets.upsertMany('ws', [{ asset_value: 'a.com', title: 'New', tech: ['caddy'], is_waf: true }], T2);
    expect(changed).toMatchObject({ new: 0, updated: 1, unchanged: 0, updatedIds: [id] });
    expect(store.assets.get(id!)).toMatchObject({ title: 'New', tech: ['caddy'], status_code: 200, is_cdn: true, is_waf: true, created_at: T0, updated_at: T2, last_seen_at: T2 });
  });

  it('open_ports (migration 013) accumulate in port order and are a recorded change; port_json_data is stored', () => {
    const store = memStore();
    const [id] = store.assets.upsertMany('ws', [{ asset_value: '192.0.2.1', open_ports: ['443/tcp', '22/tcp'], port_json_data: '{"22":{"service":"ssh"}}' }], T0).ids;
    expect(store.assets.get(id!)).toMatchObject({ open_ports: ['22/tcp', '443/tcp'], port_json_data: '{"22":{"service":"ssh"}}' });
    // A scan of other ports adds to the list instead of replacing it.
    expect(store.assets.upsertMany('ws', [{ asset_value: '192.0.2.1', open_ports: ['80/tcp'] }], T1)).toMatchObject({ updated: 1 });
    expect(store.assets.get(id!)).toMatchObject({ open_ports: ['22/tcp', '80/tcp', '443/tcp'], updated_at: T1 });
    expect(store.assets.history('ws', T0, T2).map((h) => [h.field, h.new_value])).toEqual([['open_ports', ['22/tcp', '80/tcp', '443/tcp']]]);
    // Ports already known: no change.
    expect(store.assets.upsertMany('ws', [{ asset_value: '192.0.2.1', open_ports: ['80/tcp', '22/tcp'] }], T2)).toMatchObject({ updated: 0, unchanged: 1 });
  });

  it('treats response time and raw JSON as volatile: stored, but not a change', () => {
    const store = memStore();
    const [id] = store.assets.upsertMany('ws', [{ asset_value: 'a.com', time: '10ms', raw_json_data: '{"t":1}' }], T0).ids;
    const res = store.assets.upsertMany('ws', [{ asset_value: 'a.com', time: '12ms', raw_json_data: '{"t":2}' }], T1);
    expect(res.unchanged).toBe(1);
    expect(store.assets.get(id!)).toMatchObject({ time: '12ms', raw_json_data: '{"t":2}', updated_at: T0, last_seen_at: T1 });
  });

  it('keys on (workspace, asset_value, url) and coerces untrusted values', () => {
    const store = memStore();
    const res = store.assets.upsertMany('ws', [
      { asset_value: 'a.com' },
      { asset_value: 'a.com', url: 'https://a.com/' },
      { asset_value: 'a.com', url: 'https://a.com/' },
      { asset_value: 'a.com', status_code: '301' as unknown as number, tech: 'php, mysql' as unknown as string[], tls: { v: '1.3' } as unknown as string },
    ]);
    expect(res).toMatchObject({ new: 2, updated: 0, unchanged: 2 });
    expect(res.ids[0]).toBe(res.ids[3]);
    expect(store.assets.get(res.ids[0]!)).toMatchObject({ status_code: 301, tech: ['php', 'mysql'], tls: '{"v":"1.3"}' });
    store.assets.upsertMany('other', [{ asset_value: 'a.com' }]);
    expect(store.assets.list({}, page()).total).toBe(3);
  });

  it('reports every invalid row and writes nothing', () => {
    const store = memStore();
    expect(() => store.assets.upsertMany('ws', [{ asset_value: 'ok.com' }, { asset_value: '' }, { asset_value: ' ' }])).toThrow(
      'rows[1].asset_value: required; rows[2].asset_value: required',
    );
    expect(store.assets.list({}, page()).total).toBe(0);
    expect(() => store.assets.upsertMany('', [{ asset_value: 'a' }])).toThrow('Workspace is required');
  });
});

describe('assets.list and delete', () => {
  it('filters, searches, sorts newest first and paginates', () => {
    const store = memStore();
    store.assets.upsertMany('ws1', [{ asset_value: 'a.ws1.com', asset_type: 'subdomain', status_code: 200, title: 'Login page' }], T0);
    store.assets.upsertMany('ws1', [{ asset_value: 'b.ws1.com', asset_type: 'url', status_code: 404, url: 'https://b.ws1.com/x' }], T1);
    store.assets.upsertMany('ws2', [{ asset_value: '10.0.0.1', asset_type: 'ip', host_ip: '10.0.0.1' }], T2);
    expect(store.assets.list({}, page()).data.map((a) => a.asset_value)).toEqual(['10.0.0.1', 'b.ws1.com', 'a.ws1.com']);
    expect(store.assets.list({ workspace: 'ws1' }, page()).total).toBe(2);
    expect(store.assets.list({ asset_type: 'ip' }, page()).total).toBe(1);
    expect(store.assets.list({ status_code: 404 }, page()).data[0]?.asset_value).toBe('b.ws1.com');
    expect(store.assets.list({ workspace: 'ws1', status_code: 200, asset_type: 'subdomain' }, page()).total).toBe(1);
    expect(store.assets.list({ search: 'login' }, page()).total).toBe(1); // title, case-insensitive
    expect(store.assets.list({ search: '/x' }, page()).total).toBe(1); // url
    expect(store.assets.list({ search: '10.0.0' }, page()).total).toBe(1);
    expect(store.assets.list({ search: '_' }, page()).total).toBe(0);
    expect(store.assets.list({}, page(1, 1))).toMatchObject({ total: 3, data: [{ asset_value: 'b.ws1.com' }] });

    const id = store.assets.list({ asset_type: 'ip' }, page()).data[0]!.id;
    expect(store.assets.delete(id)).toBe(true);
    expect(store.assets.delete(id)).toBe(false);
    expect(store.assets.list({}, page()).total).toBe(2);
  });
});

describe('asset diff queries', () => {
  it('finds added, changed and removed rows of a window', () => {
    const store = memStore();
    store.assets.upsertMany('ws', [{ asset_value: 'old-gone.com' }, { asset_value: 'old-changed.com', title: 'v1' }, { asset_value: 'old-same.com' }], T0);
    store.assets.upsertMany('ws', [{ asset_value: 'new.com' }, { asset_value: 'old-changed.com', title: 'v2' }, { asset_value: 'old-same.com' }], T2);
    store.assets.upsertMany('other', [{ asset_value: 'new.com' }], T2);
    const names = (rows: { asset_value: string }[]) => rows.map((r) => r.asset_value).sort();
    expect(names(store.assets.addedBetween('ws', T1, T2))).toEqual(['new.com']);
    expect(names(store.assets.changedSince('ws', T1, T2))).toEqual(['old-changed.com']);
    expect(names(store.assets.changedBetween('ws', T1, T2))).toEqual(['old-changed.com']);
    expect(names(store.assets.removedBefore('ws', T1))).toEqual(['old-gone.com']);
    expect(names(store.assets.addedBetween('ws', T0, T2))).toEqual(['new.com', 'old-changed.com', 'old-gone.com', 'old-same.com']);
  });
});
