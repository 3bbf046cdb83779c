/**
 * Bulk imports on both engines with values the PostgreSQL path must carry through its COPY text
 * format unchanged (tabs, backslashes, `\N`, newlines, carriage returns, unicode, very long
 * strings), batches larger than one COPY chunk, a re-import that adds nothing, and (PostgreSQL)
 * a failed COPY that leaves nothing behind. Also events.insertMany, which imports write their
 * events with.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importAssetsJsonl } from '../../../../src/ingest/jsonl.js';
import type { AssetInput } from '../../../../src/store/assets.js';
import type { VulnInput } from '../../../../src/store/vulns.js';
import pg from 'pg';
import { ENGINES, useStore } from './engines.js';

const REFUSED = 'refuse-me';

const T1 = '2024-01-01T00:00:00.000Z';
const T2 = '2024-01-02T00:00:00.000Z';
const all = { offset: 0, limit: 10_000 };

/** Strings COPY's text format escapes or that stress it. */
const AWKWARD = [
  'tab\there',
  'back\\slash and \\N and \\t and trailing \\',
  '\\N',
  'line\nbreak\r\nand\rcarriage',
  'bell\u0007 backspace\b formfeed\f vtab\v',
  'unicode: é ü ß 中文 日本語 한국어 🦊🔒 e\u0301 \u200b \uFEFF',
  'json-ish {"a":"b\\"c","d":[1,2]}',
  ' leading and trailing spaces ',
  '.',
  '\\.',
];
const LONG = `${'x'.repeat(300_000)}\t${'é'.repeat(100_000)}\n${'\\'.repeat(1000)}`;

function awkwardAssets(): AssetInput[] {
  return [
    ...AWKWARD.map((text, i) => ({
      asset_value: `h${i}.example.com`,
      url: `https://h${i}.example.com/${text}`,
      title: text,
      input: text,
      remarks: text,
      tech: [text, `plain${i}`],
      a: ['10.0.0.1'],
      is_cdn: i % 2 === 0,
      is_waf: true,
      status_code: 200 + i,
      content_length: 1_000_000_000 + i,
      raw_json_data: JSON.stringify({ text, i }),
      time: `${i}ms`,
    })),
    { asset_value: 'long.example.com', url: 'https://long.example.com', title: LONG, raw_json_data: LONG },
  ];
}

function awkwardVulns(): VulnInput[] {
  return [
    ...AWKWARD.map((text, i) => ({
      vuln_info: `t-${i}\t${text}`,
      vuln_title: text,
      vuln_desc: text,
      vuln_poc: text,
      severity: 'high',
      asset_value: `h${i}.example.com`,
      tags: [text, 'x'],
      detail_http_request: text,
      detail_http_response: text,
      raw_vuln_json: JSON.stringify({ text }),
    })),
    { vuln_info: 'long', vuln_title: 'long', asset_value: 'long.example.com', detail_http_response: LONG },
  ];
}

describe.each(ENGINES)('bulk imports on $name', (engine) => {
  const s = useStore(engine);

  it('stores awkward text exactly as given, and a re-import adds nothing', async () => {
    const input = awkwardAssets();
    const r1 = await s().assets.upsertMany('ws', input, T1);
    expect(r1).toMatchObject({ new: input.length, updated: 0, unchanged: 0 });
    expect([...r1.ids].sort((a, b) => a - b)).toEqual(r1.ids);
    for (const [i, id] of r1.ids.entries()) {
      const a = (await s().assets.get(id))!;
      const want = input[i]!;
      expect(a).toMatchObject({ workspace: 'ws', asset_value: want.asset_value, url: want.url!.trim(), title: want.title, raw_json_data: want.raw_json_data, created_at: T1 });
      if (i < AWKWARD.length) {
        expect(a).toMatchObject({ input: AWKWARD[i], remarks: AWKWARD[i], tech: [AWKWARD[i], `plain${i}`], a: ['10.0.0.1'], is_cdn: i % 2 === 0, is_waf: true, is_cloud: false, status_code: 200 + i, content_length: 1_000_000_000 + i });
      }
    }
    expect((await s().assets.list({ workspace: 'ws' }, all)).total).toBe(input.length);

    const r2 = await s().assets.upsertMany('ws', awkwardAssets(), T2);
    expect(r2).toMatchObject({ new: 0, updated: 0, unchanged: input.length });
    expect(r2.ids).toEqual(r1.ids);
    expect((await s().assets.list({ workspace: 'ws' }, all)).total).toBe(input.length);
    expect(await s().assets.history('ws', T1, T2)).toEqual([]);
    expect(await s().assets.get(r1.ids[0]!)).toMatchObject({ updated_at: T1, last_seen_at: T2 });
  });

  it('stores awkward findings exactly as given, and a re-import adds nothing', async () => {
    const input = awkwardVulns();
    const r1 = await s().vulns.upsertMany('ws', input, T1);
    expect(r1).toMatchObject({ new: input.length, updated: 0, unchanged: 0 });
    for (const [i, id] of r1.ids.entries()) {
      const v = (await s().vulns.get(id))!;
      const want = input[i]!;
      expect(v).toMatchObject({ vuln_info: want.vuln_info, vuln_title: want.vuln_title, asset_value: want.asset_value, detail_http_response: want.detail_http_response ?? '' });
      if (i < AWKWARD.length) expect(v).toMatchObject({ vuln_desc: AWKWARD[i], vuln_poc: AWKWARD[i], tags: [AWKWARD[i], 'x'], severity: 'high' });
    }
    const r2 = await s().vulns.upsertMany('ws', awkwardVulns(), T2);
    expect(r2).toMatchObject({ new: 0, unchanged: input.length });
    expect(r2.ids).toEqual(r1.ids);
    expect((await s().vulns.list({ workspace: 'ws' }, all)).total).toBe(input.length);
  });

  it('imports a batch larger than one COPY chunk: ids in input order, repeats merged, counters right', async () => {
    const rows: AssetInput[] = Array.from({ length: 3000 }, (_, i) => ({
      asset_value: `n${i}.example.com`,
      url: `https://n${i}.example.com`,
      title: `title ${i} ${'t'.repeat(100)}`,
      status_code: i % 3 === 0 ? 404 : 200,
      tech: ['nginx'],
    }));
    // A repeat within the batch merges into its first copy (a new row stored once, with the merged values).
    rows.push({ asset_value: 'n7.example.com', url: 'https://n7.example.com', remarks: 'merged' });
    const r = await s().assets.upsertMany('ws', rows, T1);
    expect(r).toMatchObject({ new: 3000, unchanged: 1 });
    expect(r.ids.slice(0, 3000)).toEqual([...r.ids.slice(0, 3000)].sort((a, b) => a - b));
    expect(r.ids[3000]).toBe(r.ids[7]);
    expect(await s().assets.get(r.ids[7]!)).toMatchObject({ remarks: 'merged', title: rows[7]!.title });
    expect((await s().assets.list({ workspace: 'ws' }, all)).total).toBe(3000);
    expect((await s().assets.list({ workspace: 'ws', status_code: 404 }, all)).total).toBe(1000);
    const again = await s().assets.upsertMany('ws', rows.slice(0, 3000), T2);
    expect(again).toMatchObject({ new: 0, unchanged: 3000 });
    expect((await s().assets.list({}, all)).total).toBe(3000);
  });

  it('writes many events in order with fresh event ids', async () => {
    const events = Array.from({ length: 1500 }, (_, i) => ({ topic: 'asset.discovered', name: `h${i}\tx\\y`, workspace: 'ws', data: { i, text: 'a\nb' }, source: 'test' }));
    expect(await s().events.insertMany(events)).toBe(1500);
    expect(await s().events.insertMany([])).toBe(0);
    const stored = (await s().events.list({ workspace: 'ws' }, all)).data.reverse();
    expect(stored.map((e) => e.name)).toEqual(events.map((e) => e.name));
    expect(stored[3]).toMatchObject({ topic: 'asset.discovered', source: 'test', processed: false, data: JSON.stringify({ i: 3, text: 'a\nb' }) });
    expect(new Set(stored.map((e) => e.event_id)).size).toBe(1500);
  });

  /**
   * Makes PostgreSQL refuse a row whose title is REFUSED (a trigger raising an error). NUL
   * characters, which it refused before, are now dropped on the way in.
   */
  const refuseTitle = async () => {
    const c = new pg.Client({ connectionString: s.opened().url });
    await c.connect();
    try {
      await c.query(`CREATE FUNCTION osm_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.title = '${REFUSED}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await c.query('CREATE TRIGGER osm_test_refuse BEFORE INSERT OR UPDATE ON assets FOR EACH ROW EXECUTE FUNCTION osm_test_refuse()');
    } finally {
      await c.end();
    }
  };

  it.runIf(engine.name === 'postgresql')('a COPY PostgreSQL refuses (one row a trigger refuses) stores nothing of the batch, and the next import works', async () => {
    await refuseTitle();
    await s().assets.upsertMany('ws', [{ asset_value: 'before.example.com' }], T1);
    await expect(s().assets.upsertMany('ws', [{ asset_value: 'ok.example.com' }, { asset_value: 'refused.example.com', title: REFUSED }], T2)).rejects.toThrow();
    expect((await s().assets.list({ workspace: 'ws' }, all)).data.map((a) => a.asset_value)).toEqual(['before.example.com']);
    expect((await s().assets.list({ workspace: 'ws' }, all)).total).toBe(1);
    const r = await s().assets.upsertMany('ws', [{ asset_value: 'ok.example.com' }], T2);
    expect(r.new).toBe(1);
    expect((await s().assets.list({ workspace: 'ws' }, all)).total).toBe(2);
  });

  it.runIf(engine.name === 'postgresql')('a file import stops at a batch PostgreSQL refuses: earlier batches stay, later ones are not stored', async () => {
    await refuseTitle();
    const dir = mkdtempSync(path.join(tmpdir(), 'osm-bulk-'));
    try {
      const file = path.join(dir, 'httpx.jsonl');
      const line = (i: number, title = `t${i}`) => JSON.stringify({ url: `https://h${i}.example.com`, host: `h${i}.example.com`, title, status_code: 200 });
      writeFileSync(file, [1, 2, 3, 4].map((i) => line(i)).concat(line(5, REFUSED), ...[6, 7, 8].map((i) => line(i))).join('\n'));
      const batches: number[] = [];
      await expect(importAssetsJsonl(s(), 'ws', file, { batchSize: 2, onBatch: (st) => batches.push(st.new) })).rejects.toThrow();
      expect(batches).toEqual([2, 4]);
      expect((await s().assets.list({ workspace: 'ws' }, all)).data.map((a) => a.asset_value).sort()).toEqual(['h1.example.com', 'h2.example.com', 'h3.example.com', 'h4.example.com']);
      expect((await s().events.list({ workspace: 'ws', topic: 'asset.import' }, all)).total).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
