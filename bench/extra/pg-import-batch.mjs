/**
 * Experiment (not a reported figure): the real findings/assets importer on PostgreSQL at several
 * transaction sizes, each into a fresh database (created and dropped on BENCH_PG_ADMIN_URL).
 *   node bench/extra/pg-import-batch.mjs httpx|nuclei <lines> <batch> [<batch> …]
 * Prints ms, rows/s and the peak RSS of this process (one process per batch size is cleaner:
 * run it once per size when RSS matters).
 */
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { DIST } from '../lib/common.mjs';
import { httpxLine, nucleiLine, writeJsonl } from '../lib/gen-jsonl.mjs';

const [tool, linesArg, ...batches] = process.argv.slice(2);
const n = Number(linesArg);
const ADMIN = process.env.BENCH_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const { openPgStore } = await import(pathToFileURL(path.join(DIST, 'store', 'pg', 'store.js')).href);
const ingest = await import(pathToFileURL(path.join(DIST, 'ingest', 'index.js')).href);
const admin = async (sql) => {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  await c.query(sql).finally(() => c.end());
};
const file = path.join(os.tmpdir(), `osm-pg-batch-${process.pid}.jsonl`);
await writeJsonl(file, n, tool === 'httpx' ? httpxLine : nucleiLine);
for (const b of batches.map(Number)) {
  const name = `osm_bench_${process.pid}_batch`;
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const store = await openPgStore(u.toString());
  const t0 = performance.now();
  const stats = await (tool === 'httpx' ? ingest.importAssetsJsonl : ingest.importVulnsJsonl)(store, 'w', file, { batchSize: b });
  const ms = performance.now() - t0;
  await store.close();
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  process.stdout.write(`${JSON.stringify({ tool, lines: n, batch: b, ms: Math.round(ms), rows_per_s: Math.round(n / (ms / 1000)), new: stats.new, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), load: os.loadavg()[0].toFixed(1) })}\n`);
}
(await import('node:fs')).rmSync(file, { force: true });
