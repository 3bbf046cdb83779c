/**
 * Benchmark 4 — API reads at scale: 1,000,000 vulnerabilities and 1,000,000 assets (half in one
 * big workspace), then autocannon against the daemon's GET /vulnerabilities and GET /assets
 * filtered by workspace and severity/status (first page and page 1,000), /stats and
 * /vulnerabilities/summary — and the same against a bare fastify server doing the same indexed
 * query on the same database file (bench/lib/bare-server.mjs).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, round, runTimed, scaled, tempDir } from './lib/common.mjs';
import { configSet, startDaemon } from './lib/daemon.mjs';
import { peakRssMb } from './lib/probe.mjs';

export const meta = { id: 4, name: 'api-reads', title: 'API reads at scale (1M vulnerabilities, 1M assets)' };

const LIB = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib');
const CONNECTIONS = 4;
const SECONDS = 4;

/** The endpoints measured: osm path and the bare server's path for the same read. */
function endpoints(pageOffset) {
  return [
    { name: 'vulns ws+severity, page 1', osm: '/osm/api/vulnerabilities?workspace=big&severity=high', bare: '/vulnerabilities?workspace=big&severity=high' },
    {
      name: 'vulns ws+severity, page 1000',
      osm: `/osm/api/vulnerabilities?workspace=big&severity=high&offset=${pageOffset}`,
      bare: `/vulnerabilities?workspace=big&severity=high&offset=${pageOffset}`,
    },
    { name: 'assets ws+status, page 1', osm: '/osm/api/assets?workspace=big&status_code=200', bare: '/assets?workspace=big&status_code=200' },
    {
      name: 'assets ws+status, page 1000',
      osm: `/osm/api/assets?workspace=big&status_code=200&offset=${pageOffset}`,
      bare: `/assets?workspace=big&status_code=200&offset=${pageOffset}`,
    },
    { name: '/stats', osm: '/osm/api/stats', bare: '/stats' },
    { name: 'vulns summary (ws)', osm: '/osm/api/vulnerabilities/summary?workspace=big', bare: '/vulnerabilities/summary?workspace=big' },
  ];
}

function startBare(db) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(LIB, 'bare-server.mjs'), db], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c;
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
}

/** autocannon for SECONDS after a 1 s warm-up; fails on any error or non-2xx answer. */
async function cannon(url, headers) {
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  if (r.errors || r.non2xx || r.timeouts) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`);
  return { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, rps: round(r.requests.average, 0), requests: r.requests.total };
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const n = scaled(1_000_000, 10_000);
  const { dir, cleanup } = tempDir();
  let daemon;
  let bare;
  try {
    const base = path.join(dir, 'base');
    await configSet(base, { 'server.max_concurrent_runs': 2 });
    const db = path.join(base, 'database-osm.sqlite');
    const seeded = await runTimed(process.execPath, [path.join(LIB, 'seed-db.mjs'), db, String(n)]);
    const seed = JSON.parse(seeded.stdout.trim());
    log(`  seeded ${n} assets + ${n} vulnerabilities in ${Math.round(seed.ms)} ms`);

    daemon = await startDaemon(base, path.join(dir, 'no-workflows'), ['--no-schedule']);
    const stats = await daemon.api('GET', '/osm/api/stats');
    const v = stats.vulnerabilities ?? {};
    // /stats' vulnerability total leaves info out (as the spec defines it): add it back to check.
    if (stats.assets?.total !== n || v.critical + v.high + v.medium + v.low + v.info !== n) throw new Error(`daemon sees ${JSON.stringify(stats).slice(0, 300)}`);
    bare = await startBare(db);
    // Page 1,000 of 20 rows, or the deepest full page a scaled-down run has.
    const highInBig = (await daemon.api('GET', '/osm/api/vulnerabilities/summary?workspace=big')).data.by_severity.high;
    const pageOffset = Math.min(999 * 20, Math.max(0, Math.floor(highInBig / 20) - 1) * 20);

    const rows = [];
    const details = { rows_each: n, seed_ms: round(seed.ms, 0), connections: CONNECTIONS, seconds: SECONDS, page_offset: pageOffset, endpoints: {} };
    for (const e of endpoints(pageOffset)) {
      const o = await cannon(`${daemon.url}${e.osm}`, { 'x-osm-api-key': daemon.key });
      const b = await cannon(`${bare.url}${e.bare}`);
      log(`  ${e.name}: osm p50 ${o.p50} p99 ${o.p99} ms ${o.rps} req/s | bare p50 ${b.p50} p99 ${b.p99} ms ${b.rps} req/s`);
      details.endpoints[e.name] = { osm: { path: e.osm, ...o }, bare: { path: e.bare, ...b } };
      rows.push({
        metric: `${e.name}: p99 (p50 ${o.p50}), ${o.rps} req/s`,
        figure: o.p99,
        unit: 'ms',
        baseline: b.p99,
        baselineLabel: `ms p99, bare ${b.rps} req/s`,
        ratio: round(o.rps / b.rps, 2),
        target: 'p99 < 20 ms',
        met: o.p99 < 20,
      });
    }
    details.daemon_peak_rss_mb = peakRssMb(daemon.pid);
    details.ratio_is = 'osm req/s ÷ bare req/s';
    return { rows, details };
  } finally {
    bare?.child.kill('SIGTERM');
    await daemon?.stop();
    cleanup();
  }
}
