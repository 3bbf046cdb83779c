import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../src/store/index.js';
import { eventFromRecord } from '../../../src/scheduler/event-match.js';
import { envelopeParam, isLegacyInput, MAX_ENVELOPE_BYTES, resolveInput } from '../../../src/scheduler/input-map.js';

function env(data: unknown) {
  const rec: EventRecord = {
    id: 1, topic: 'assets.new', event_id: 'ev-1', name: 'n', source: 'scanner', source_type: 'api', data_type: 'url',
    data: JSON.stringify(data), workspace: 'ws', run_id: '', workflow_name: '', processed: false, processed_at: null, error: '',
    created_at: '2030-01-01T00:00:00.000Z',
  };
  return eventFromRecord(rec);
}

describe('resolveInput (map syntax)', () => {
  it('resolves data paths, event fields, functions and literals', async () => {
    const e = env({ url: 'api.example.com', description: '  hello world  ', host: { name: 'h.example.com' } });
    const out = await resolveInput({ target: 'event_data.url', desc: 'trim(event_data.description)', src: 'event.source', host: 'event_data.host.name', fixed: 'constant', n: 5 }, e);
    expect(out).toEqual({ target: 'api.example.com', params: { desc: 'hello world', src: 'scanner', host: 'h.example.com', fixed: 'constant', n: '5' } });
  });

  it('uses Target when target is absent, and skips missing values', async () => {
    expect((await resolveInput({ Target: 'event_data.url' }, env({ url: 'a.example.com' }))).target).toBe('a.example.com');
    expect(await resolveInput({ target: 'event_data.nope', x: 'event_data.nope' }, env({}))).toEqual({ params: {} });
  });

  it('without an event (cron/watch) only literals and functions give values', async () => {
    expect(await resolveInput({ target: 'example.com', t: 'event_data.url', up: "to_upper_case('abc')" }, undefined)).toEqual({ target: 'example.com', params: { up: 'ABC' } });
  });
});

describe('resolveInput (legacy syntax)', () => {
  it('event_data field, function, param, file', async () => {
    const e = env({ url: 'b.example.com', count: 3 });
    expect(isLegacyInput({ type: 'event_data', field: 'url' })).toBe(true);
    expect(isLegacyInput({ type: 'event_data', whatever: 1 })).toBe(false);
    expect(await resolveInput({ type: 'event_data', field: 'url' }, e)).toEqual({ target: 'b.example.com', params: {} });
    expect(await resolveInput({ type: 'event_data', field: 'count', name: 'n' }, e)).toEqual({ params: { n: '3' } });
    expect(await resolveInput({ type: 'function', function: 'to_upper_case("{{event.data.url}}")', name: 'up' }, e)).toEqual({ params: { up: 'B.EXAMPLE.COM' } });
    expect(await resolveInput({ type: 'file', path: '/data/targets.txt', name: 'list' }, undefined)).toEqual({ params: { list: '/data/targets.txt' } });
    expect(await resolveInput({ type: 'param', name: 'mode', value: 'fast' }, undefined)).toEqual({ params: { mode: 'fast' } });
  });
});

describe('resolveInput rejects hostile event values', () => {
  const hostileTargets = ['a.com;id', '$(id)', '`id`', 'a.com\nid', '-oProxyCommand=id', 'a.com|nc x 1', "a.com'", 'a.com && id', '[::1]'];
  for (const value of hostileTargets) {
    it(`target ${JSON.stringify(value)}`, async () => {
      await expect(resolveInput({ target: 'event_data.url' }, env({ url: value }))).rejects.toThrow(/target/);
      await expect(resolveInput({ type: 'event_data', field: 'url' }, env({ url: value }))).rejects.toThrow(/target/);
    });
  }

  it('params with shell metacharacters', async () => {
    await expect(resolveInput({ note: 'event_data.v' }, env({ v: 'x; rm -rf /' }))).rejects.toThrow(/params\["note"\]/);
    await expect(resolveInput({ note: 'event_data.v' }, env({ v: '$(id)' }))).rejects.toThrow(/forbidden character/);
    // spaces and a leading dash are fine in params
    expect((await resolveInput({ note: 'event_data.v' }, env({ v: '-t 10 --rate 50' }))).params.note).toBe('-t 10 --rate 50');
  });

  it('an object value becomes JSON text, which is refused as a param', async () => {
    await expect(resolveInput({ obj: 'event_data.o' }, env({ o: { a: 1 } }))).rejects.toThrow(/forbidden character/);
  });
});

describe('envelopeParam', () => {
  it('is base64 of the envelope JSON (inert in any command)', () => {
    const e = env({ url: 'x.example.com', q: '"; rm -rf / #' });
    const value = envelopeParam(e);
    expect(value).toMatch(/^[A-Za-z0-9+/=]+$/);
    const decoded = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
    expect(decoded.topic).toBe('assets.new');
    expect(decoded.data.q).toBe('"; rm -rf / #');
  });

  it('drops the payload when it is too large', () => {
    const big = env({ blob: 'x'.repeat(MAX_ENVELOPE_BYTES) });
    const decoded = JSON.parse(Buffer.from(envelopeParam(big), 'base64').toString('utf8'));
    expect(decoded.truncated).toBe(true);
    expect(decoded.data).toBeNull();
    expect(decoded.topic).toBe('assets.new');
  });
});
