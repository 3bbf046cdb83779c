import { afterAll, describe, expect, it } from 'vitest';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../../src/store/index.js';
import { evaluate } from '../../../src/engine/js-runtime.js';
import { tempDir } from '../../helpers/tmp.js';

const { dir, cleanup } = tempDir('osm-rollback-');
afterAll(() => cleanup());

async function httpxFile(lines: number): Promise<string> {
  const file = join(dir, `httpx-${lines}.jsonl`);
  const out = createWriteStream(file);
  for (let i = 0; i < lines; i++) {
    out.write(`${JSON.stringify({ url: `https://h${i}.example.com`, host: `h${i}.example.com`, status_code: 200, title: `t${i}`, tech: ['nginx'] })}\n`);
  }
  await new Promise<void>((r) => out.end(r));
  return file;
}

describe('a script stopped by its time limit inside a database function', () => {
  it('leaves no transaction open and the store usable', async () => {
    const store = openStore(join(dir, 'db.sqlite'));
    const file = await httpxFile(60_000);
    let threw = false;
    try {
      evaluate(`db_import_asset_from_file("ws", ${JSON.stringify(file)})`, {}, { ctx: { store, workspace: 'ws' }, timeoutMs: 300 });
    } catch {
      threw = true;
    }
    // Whether the limit hit mid-batch or not, nothing may stay open.
    expect(store.db.inTransaction).toBe(false);
    const before = store.assets.list({ workspace: 'ws' }, { offset: 0, limit: 1 }).total;
    // Whatever was committed is whole batches; the store still accepts writes.
    store.assets.upsertMany('ws', [{ asset_value: 'after.example.com' }]);
    expect(store.assets.list({ workspace: 'ws' }, { offset: 0, limit: 1 }).total).toBe(before + 1);
    expect(threw || before === 60_000).toBe(true);
    store.close();
  }, 120_000);
});
