import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../../src/store/index.js';
import { Deduper, eventFromRecord, filtersPass, prepareEventCode, renderEventText, type EventEnvelope } from '../../../src/scheduler/event-match.js';

function record(data: unknown, extra: Partial<EventRecord> = {}): EventRecord {
  return {
    id: 1, topic: 'assets.new', event_id: 'ev-1', name: 'subdomain.found', source: 'scanner', source_type: 'api', data_type: 'url',
    data: typeof data === 'string' ? data : JSON.stringify(data), workspace: 'ws', run_id: '', workflow_name: '', processed: false,
    processed_at: null, error: '', created_at: '2030-01-01T00:00:00.000Z', ...extra,
  };
}

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});

describe('eventFromRecord', () => {
  it('parses JSON data and keeps the raw text', () => {
    const env = eventFromRecord(record({ url: 'https://a.example.com', status: 200 }));
    expect(env.data).toEqual({ url: 'https://a.example.com', status: 200 });
    expect(env.data_raw).toBe('{"url":"https://a.example.com","status":200}');
    expect(env.id).toBe('ev-1');
    expect(env.timestamp).toBe('2030-01-01T00:00:00.000Z');
  });

  it('keeps non-JSON data as text', () => {
    expect(eventFromRecord(record('plain text')).data).toBe('plain text');
  });
});

describe('filtersPass', () => {
  const env = eventFromRecord(record({ url: 'https://a.example.com/api/v1', status: 200 }));

  it('requires every filter and filter function to be truthy', async () => {
    expect(await filtersPass({ filters: ['event.data.status == 200'] }, env)).toBe(true);
    expect(await filtersPass({ filters: ['event.data.status == 200', 'event.source === "other"'] }, env)).toBe(false);
    expect(await filtersPass({ filter_functions: ["contains(event.data.url, '/api/')"] }, env)).toBe(true);
    expect(await filtersPass({ filter_functions: ["contains(event.data.url, '/admin/')"] }, env)).toBe(false);
    expect(await filtersPass(undefined, env)).toBe(true);
  });

  it('substitutes {{event.…}} placeholders, quoted or not', async () => {
    expect(await filtersPass({ filters: ['{{event.data.status}} == 200'] }, env)).toBe(true);
    expect(await filtersPass({ filters: ['"{{event.topic}}" == "assets.new"'] }, env)).toBe(true);
    expect(await filtersPass({ filters: ["'host-{{event.data.status}}' === 'host-200'"] }, env)).toBe(true);
    expect(await filtersPass({ filters: ['`{{event.name}}`.startsWith("subdomain")'] }, env)).toBe(true);
  });

  it('counts a JavaScript error as no match and reports it', async () => {
    const seen: string[] = [];
    expect(await filtersPass({ filters: ['event.data.missing.deeper == 1'] }, env, { onError: (e) => seen.push(e) })).toBe(false);
    expect(await filtersPass({ filters: ['syntax error here ('] }, env)).toBe(false);
    expect(seen).toEqual(['event.data.missing.deeper == 1']);
  });

  it('never turns event data into code, whatever the quoting', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
    dirs.push(dir);
    const marker = path.join(dir, 'pwned');
    const payloads = [
      `"+write_file('${marker}', 'x')+"`,
      `'+write_file('${marker}', 'x')+'`,
      `\${write_file('${marker}', 'x')}`,
      `+write_file('${marker}', 'x')+`,
      `1); write_file('${marker}', 'x'); (1`,
    ];
    for (const a of payloads) {
      const hostile = eventFromRecord(record({ a }));
      for (const filter of ['"{{event.data.a}}" == "x"', "'x-{{event.data.a}}' == 'x'", '`{{event.data.a}}` == "x"', '{{event.data.a}} == "x"', 'x = "prefix-{{event.data.a}}-suffix"']) {
        await filtersPass({ filters: [filter] }, hostile);
      }
      // The value itself is still usable as data.
      expect(await filtersPass({ filters: ['"{{event.data.a}}" === event.data.a'] }, hostile)).toBe(true);
    }
    expect(fs.existsSync(marker)).toBe(false);
    // Control: the same call written by the operator does run, so the check above can fail.
    await filtersPass({ filters: [`write_file('${marker}', 'x')`] }, eventFromRecord(record({})));
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('prepareEventCode keeps values out of the code text', () => {
    const hostile = eventFromRecord(record({ a: '"); evil(); ("' }));
    const p = prepareEventCode('check("{{event.data.a}}", {{event.data.a}}, `{{event.data.a}}`)', hostile);
    expect(p.code).not.toContain('evil');
    expect(p.vars.__osm_evs).toEqual(['"); evil(); ("', '"); evil(); ("', '"); evil(); ("']);
  });
});

describe('renderEventText', () => {
  it('renders dedupe keys from event fields and data paths', () => {
    const env: EventEnvelope = eventFromRecord(record({ url: 'https://x', nested: { n: 3 } }));
    expect(renderEventText('{{event.source}}-{{event.data.url}}', env)).toBe('scanner-https://x');
    expect(renderEventText('{{ event.data.nested.n }}|{{event.data.none}}|{{event.topic}}', env)).toBe('3||assets.new');
  });
});

describe('Deduper', () => {
  it('skips a key seen within its window and accepts it again after', () => {
    const d = new Deduper();
    const t0 = 1_000_000;
    expect(d.isDuplicate('k', 5 * 60_000, t0)).toBe(false);
    expect(d.isDuplicate('k', 5 * 60_000, t0 + 60_000)).toBe(true);
    expect(d.isDuplicate('other', 5 * 60_000, t0 + 60_000)).toBe(false);
    expect(d.isDuplicate('k', 5 * 60_000, t0 + 5 * 60_000 + 1)).toBe(false);
  });

  it('does nothing without a window and sweeps expired keys', () => {
    const d = new Deduper();
    expect(d.isDuplicate('k', undefined, 0)).toBe(false);
    expect(d.isDuplicate('k', 0, 0)).toBe(false);
    expect(d.size).toBe(0);
    d.isDuplicate('a', 1000, 100_000);
    d.isDuplicate('b', 1000, 100_000);
    d.sweep(200_000, true);
    expect(d.size).toBe(0);
    d.isDuplicate('t1:x', 1000, 300_000);
    d.isDuplicate('t2:x', 1000, 300_000);
    d.forgetPrefix('t1:');
    expect(d.size).toBe(1);
  });
});
