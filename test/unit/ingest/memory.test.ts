/**
 * A 200 000-line httpx file must import with flat memory: retained heap (measured after a forced
 * GC at every committed batch) stays far below the size of the file, which would not be the case
 * if the file or all its records were held at once. A memory bound, not a timing one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/index.js';
import { importAssetsJsonl } from '../../../src/ingest/index.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const LINES = 200_000;

async function writeBigFile(file: string): Promise<number> {
  const out = fs.createWriteStream(file);
  const pad = 'x'.repeat(200);
  for (let i = 0; i < LINES; i++) {
    const line = JSON.stringify({
      url: `https://h${i}.example.com`, input: `h${i}.example.com`, host: `h${i}.example.com`, status_code: 200 + (i % 3),
      title: `Host ${i} ${pad}`, tech: ['Nginx'], content_length: i, words: 10, lines: 2, a: ['10.0.0.1'], time: '1ms',
    });
    if (!out.write(`${line}\n`)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())));
  return fs.statSync(file).size;
}

describe('streaming import of a large file', () => {
  it('keeps retained heap small while importing 200k lines, and every row lands', async () => {
    const file = path.join(dir, 'big.jsonl');
    const size = await writeBigFile(file);
    const store = openStore(path.join(dir, 'db.sqlite'));
    try {
      gc();
      const base = process.memoryUsage().heapUsed;
      let peak = 0;
      const stats = await importAssetsJsonl(store, 'big', file, {
        onBatch: () => {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed - base);
        },
      });
      expect(stats).toMatchObject({ new: LINES, errors: 0, total: LINES });
      expect(store.workspaces.get('big')!.total_assets).toBe(LINES);
      expect(size).toBeGreaterThan(60 * 1024 * 1024);
      // One batch of 10 000 mapped records is ~10 MB; the file is > 60 MB.
      expect(peak).toBeLessThan(40 * 1024 * 1024);
      // Individual events are capped per batch: 20 batches × 100, plus the summary.
      expect(store.events.list({ topic: 'asset.discovered' }, { offset: 0, limit: 1 }).total).toBe(2000);
    } finally {
      store.close();
    }
  }, 300_000);
});
