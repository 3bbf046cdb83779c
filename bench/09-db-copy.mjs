/**
 * Benchmark 9 — `osm db copy --to <postgres url>` of a base holding 1,000,000 assets (and as many
 * findings, seeded by lib/seed-db.mjs) into a fresh PostgreSQL database (created and dropped
 * here, on BENCH_PG_ADMIN_URL, default postgresql://postgres@127.0.0.1:5432/postgres):
 * - the assets table through osm (COPY, checksum on both sides, read-back verification) against
 *   a raw `pg` COPY of the same rows into the same table (lib/raw-pg-copy.mjs), as a throughput
 *   ratio (goal ≥ 0.5, the ingest goal for PostgreSQL);
 * - peak RSS of the whole `osm db copy` process (goal < 300 MB).
 */
import path from 'node:path';
import pg from 'pg';
import { osm, round, runTimed, scaled, tempDir } from './lib/common.mjs';

export const meta = { id: 9, name: 'db-copy', title: 'osm db copy of 1M assets to PostgreSQL vs a raw pg COPY' };

const LIB = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib');
const ADMIN = process.env.BENCH_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

async function admin(sql) {
  const c = new pg.Client({ connectionString: ADMIN, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function run({ log }) {
  const n = scaled(1_000_000, 1000);
  const { dir, cleanup } = tempDir('osm-bench-copy-');
  const name = `osm_bench_copy_${process.pid}`;
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const url = u.toString();
  await admin(`CREATE DATABASE "${name}"`);
  try {
    const db = path.join(dir, 'database-osm.sqlite');
    log(`seeding ${n} assets and ${n} findings…`);
    await runTimed(process.execPath, [path.join(LIB, 'seed-db.mjs'), db, String(n)]);
    log('osm db copy --to …');
    const copy = await osm(['-b', dir, 'db', 'copy', '--to', url, '--json'], { env: { NO_COLOR: '1' } });
    const result = JSON.parse(copy.stdout);
    if (!result.ok) throw new Error(`copy did not verify: ${copy.stdout.slice(0, 2000)}`);
    const assets = result.tables.find((t) => t.table === 'assets');
    log('raw pg COPY of the same assets…');
    const raw = JSON.parse((await runTimed(process.execPath, [path.join(LIB, 'raw-pg-copy.mjs'), db, url])).stdout);
    if (raw.rows !== assets.target_rows) throw new Error(`raw copy moved ${raw.rows} rows, osm ${assets.target_rows}`);
    const ratio = raw.ms / assets.ms;
    const rssMb = copy.maxRssKb ? copy.maxRssKb / 1024 : null;
    return {
      rows: [
        { metric: `assets copied (${n} rows, verified)`, figure: round(assets.ms), unit: 'ms', baseline: round(raw.ms), baselineLabel: 'raw pg COPY', ratio: round(ratio), target: '≥ 0.5× raw', met: ratio >= 0.5 },
        { metric: 'whole base copy (wall)', figure: round(copy.ms), unit: 'ms' },
        { metric: 'peak RSS of osm db copy', figure: rssMb === null ? null : round(rssMb, 1), unit: 'MB', target: '< 300 MB', met: rssMb === null ? null : rssMb < 300 },
      ],
      details: { n, tables: result.tables.map((t) => ({ table: t.table, rows: t.target_rows, ms: t.ms })), raw },
    };
  } finally {
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    cleanup();
  }
}
