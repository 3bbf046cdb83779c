/**
 * Benchmark 3 — ingest: 1,000,000 httpx-like lines into assets, then 1,000,000 nuclei-like
 * findings, with the real importers (`importAssetsJsonl` / `importVulnsJsonl` from dist/ingest),
 * against a raw better-sqlite3 loop of prepared inserts in 10k-row transactions into the same
 * migrated schema. Every import runs in its own process (peak RSS is that process's own); the
 * files are streamed to disk first. Each file is then imported again: it must add 0 rows.
 */
import path from 'node:path';
import { round, runTimed, scaled, tempDir, now } from './lib/common.mjs';
import { httpxLine, nucleiLine, writeJsonl } from './lib/gen-jsonl.mjs';

export const meta = { id: 3, name: 'ingest', title: 'Ingest (1,000,000 httpx lines → assets, 1,000,000 nuclei findings → vulnerabilities)' };

const CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib', 'ingest-child.mjs');
const WORKSPACE = 'bench-ingest';

async function importOnce(mode, db, file) {
  const r = await runTimed(process.execPath, [CHILD, mode, db, file, WORKSPACE]);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  // /usr/bin/time sees the whole process; the child's own figure is the fallback.
  return { ...out, wallMs: r.ms, peakRssMb: round((r.maxRssKb ?? out.maxRssKb) / 1024, 1) };
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const n = scaled(1_000_000, 1000);
  const { dir, cleanup } = tempDir();
  try {
    const httpx = path.join(dir, 'httpx.jsonl');
    const nuclei = path.join(dir, 'nuclei.jsonl');
    let t = now();
    const httpxBytes = await writeJsonl(httpx, n, httpxLine);
    const nucleiBytes = await writeJsonl(nuclei, n, nucleiLine);
    log(`  generated ${n} + ${n} lines (${round(httpxBytes / 1e6, 0)} MB + ${round(nucleiBytes / 1e6, 0)} MB) in ${Math.round(now() - t)} ms`);

    const osmDb = path.join(dir, 'osm.sqlite');
    const rawDb = path.join(dir, 'raw.sqlite');
    const runs = {};
    for (const [kind, file] of [
      ['assets', httpx],
      ['vulns', nuclei],
    ]) {
      const raw = await importOnce(`raw-${kind}`, rawDb, file);
      log(`  raw ${kind}: ${Math.round(raw.ms)} ms (${Math.round(n / (raw.ms / 1000))} rows/s), peak RSS ${raw.peakRssMb} MB`);
      const first = await importOnce(`osm-${kind}`, osmDb, file);
      log(`  osm ${kind}: ${Math.round(first.ms)} ms (${Math.round(n / (first.ms / 1000))} rows/s), peak RSS ${first.peakRssMb} MB, ${first.rows} rows`);
      const again = await importOnce(`osm-${kind}`, osmDb, file);
      log(`  osm ${kind} re-import: ${Math.round(again.ms)} ms, ${again.rows - first.rows} rows added, peak RSS ${again.peakRssMb} MB`);
      if (first.rows !== n || raw.rows !== n) throw new Error(`${kind}: expected ${n} rows, osm stored ${first.rows}, raw ${raw.rows}`);
      runs[kind] = { raw, first, again };
    }

    const rows = [];
    const details = { lines: n, httpx_mb: round(httpxBytes / 1e6, 1), nuclei_mb: round(nucleiBytes / 1e6, 1) };
    for (const kind of ['assets', 'vulns']) {
      const { raw, first, again } = runs[kind];
      const osmRate = n / (first.ms / 1000);
      const rawRate = n / (raw.ms / 1000);
      const ratio = osmRate / rawRate;
      const added = again.rows - first.rows;
      const peak = Math.max(first.peakRssMb, again.peakRssMb);
      rows.push(
        {
          metric: `${kind} import rate`,
          figure: round(osmRate, 0),
          unit: 'rows/s',
          baseline: round(rawRate, 0),
          baselineLabel: 'rows/s, raw prepared inserts',
          ratio: round(ratio, 2),
          target: 'ratio ≥ 0.5',
          met: ratio >= 0.5,
        },
        {
          metric: `${kind} import peak RSS`,
          figure: peak,
          unit: 'MB',
          baseline: raw.peakRssMb,
          baselineLabel: 'MB, raw loop',
          ratio: round(peak / raw.peakRssMb, 2),
          target: '< 300 MB',
          met: peak < 300,
        },
        {
          metric: `${kind} re-import`,
          figure: added,
          unit: 'rows added',
          baseline: round(n / (again.ms / 1000), 0),
          baselineLabel: 're-import rows/s',
          ratio: null,
          target: '0 rows added',
          met: added === 0 && again.stats.new === 0,
        },
      );
      details[kind] = {
        raw: { ms: round(raw.ms, 0), rows_per_s: round(rawRate, 0), peak_rss_mb: raw.peakRssMb },
        osm: { ms: round(first.ms, 0), rows_per_s: round(osmRate, 0), peak_rss_mb: first.peakRssMb, stats: first.stats },
        reimport: { ms: round(again.ms, 0), rows_per_s: round(n / (again.ms / 1000), 0), peak_rss_mb: again.peakRssMb, stats: again.stats, rows_added: added },
      };
    }
    return { rows, details };
  } finally {
    cleanup();
  }
}
