/**
 * Benchmark 11 — PostgreSQL (issue 14, "Figures"), both engines in one run. Every PostgreSQL
 * figure uses fresh databases `osm_bench_<pid>_*` created on BENCH_PG_ADMIN_URL (default
 * postgresql://postgres@127.0.0.1:5432/postgres) and dropped WITH (FORCE) at the end.
 * 1. Ingest: 1,000,000 httpx lines and 1,000,000 nuclei findings through the built CLI
 *    (`osm import httpx|nuclei` with OSM_DATABASE_URL, each in its own process, peak RSS from
 *    /usr/bin/time) against a raw `pg` COPY of the same lines, mapped to the same columns, into
 *    the same migrated table of another fresh database (lib/raw-pg-ingest.mjs); each file is
 *    imported again and must add 0 rows. The SQLite figures come from benchmark 3 in the same run.
 * 2. Reads: the seeded base of benchmark 4 (1M assets + 1M findings) moved to PostgreSQL with
 *    `osm db copy`, then `osm serve` on it, autocannon per route against a bare fastify + `pg`
 *    server (lib/bare-pg-server.mjs); goal p99 < 20 ms. SQLite: benchmark 4 in the same run.
 * 3. Many runs: 200 runs × 5 × `sleep 0.2`, limit 20, daemon on PostgreSQL; makespan ÷ ideal
 *    (goal ≤ 1.10) and the limit checked from the database. SQLite: benchmark 5 in the same run.
 * BENCH_PG_PARTS=1,2,3 picks parts; BENCH_PG_SQLITE=0 leaves the SQLite side out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { describeBreakdown, runBreakdown } from './lib/run-breakdown.mjs';
import { ROOT, now, osm, round, runTimed, scaled, tempDir } from './lib/common.mjs';
import { configSet, startDaemon, waitJob } from './lib/daemon.mjs';
import { httpxLine, nucleiLine, writeJsonl } from './lib/gen-jsonl.mjs';
import { cpuReading, cpuSpent, describeCpu, peakRssMb } from './lib/probe.mjs';
import { maxOverlap } from './05-many-runs.mjs';

export const meta = { id: 11, name: 'postgresql', title: 'PostgreSQL: ingest vs raw COPY, reads at 1M + 1M, 200 runs (SQLite side by side)' };

const LIB = path.join(path.dirname(new URL(import.meta.url).pathname), 'lib');
const ADMIN = process.env.BENCH_PG_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const WORKSPACE = 'bench-ingest';
const load = () => os.loadavg().map((l) => round(l, 2));

async function admin(sql) {
  const c = new pg.Client({ connectionString: ADMIN, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A fresh database; returns its URL and a drop function. */
async function freshDb(suffix) {
  const name = `osm_bench_${process.pid}_${suffix}`;
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  return { name, url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined) };
}

async function pgQuery(url, sql, params = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

const parts = () => (process.env.BENCH_PG_PARTS ?? '1,2,3').split(',').map(Number);
const withSqlite = () => process.env.BENCH_PG_SQLITE !== '0';

/** SQLite's rows of benchmark `file` (same run), relabelled. */
async function sqliteSide(file, log) {
  if (!withSqlite()) return [];
  const loadStart = load();
  const mod = await import(file);
  log(`  SQLite side: ${mod.meta.title} (load ${loadStart.join(' ')})`);
  const r = await mod.run({ log });
  return r.rows.map((row) => ({ ...row, metric: `SQLite ${row.metric}`, engine: 'sqlite', load: loadStart }));
}

// ---------------------------------------------------------------- 1. ingest

async function pgIngest(log, dir, details) {
  const n = scaled(1_000_000, 1000);
  const httpx = path.join(dir, 'httpx.jsonl');
  const nuclei = path.join(dir, 'nuclei.jsonl');
  await writeJsonl(httpx, n, httpxLine);
  await writeJsonl(nuclei, n, nucleiLine);
  const osmDb = await freshDb('ingest_osm');
  const rawDb = await freshDb('ingest_raw');
  const base = path.join(dir, 'ingest-base');
  const rows = [];
  try {
    // Both databases migrated by osm itself: the raw COPY goes into the very same schema.
    for (const db of [osmDb, rawDb]) await osm(['-b', base, 'db', 'migrate'], { env: { OSM_DATABASE_URL: db.url } });
    const count = async (table) => Number((await pgQuery(osmDb.url, `SELECT COUNT(*) AS n FROM ${table} WHERE workspace = $1`, [WORKSPACE]))[0].n);
    for (const [kind, tool, table, file] of [
      ['assets', 'httpx', 'assets', httpx],
      ['vulns', 'nuclei', 'vulnerabilities', nuclei],
    ]) {
      const l0 = load();
      const r = await runTimed(process.execPath, [path.join(LIB, 'raw-pg-ingest.mjs'), `raw-${kind}`, rawDb.url, file, WORKSPACE]);
      const raw = { ...JSON.parse(r.stdout.trim().split('\n').pop()), peakRssMb: round(r.maxRssKb / 1024, 1) };
      log(`  PG raw COPY ${kind}: ${Math.round(raw.ms)} ms (${Math.round(n / (raw.ms / 1000))} rows/s), peak RSS ${raw.peakRssMb} MB (load ${l0.join(' ')})`);
      const importOnce = async () => {
        const res = await osm(['-b', base, 'import', tool, file, '-w', WORKSPACE, '--json'], { env: { OSM_DATABASE_URL: osmDb.url, NO_COLOR: '1' } });
        return { ms: res.ms, stats: JSON.parse(res.stdout), rows: await count(table), peakRssMb: round(res.maxRssKb / 1024, 1) };
      };
      const first = await importOnce();
      log(`  PG osm import ${kind}: ${Math.round(first.ms)} ms (${Math.round(n / (first.ms / 1000))} rows/s), peak RSS ${first.peakRssMb} MB, ${first.rows} rows`);
      const again = await importOnce();
      const added = again.rows - first.rows;
      log(`  PG osm re-import ${kind}: ${Math.round(again.ms)} ms, ${added} rows added, peak RSS ${again.peakRssMb} MB`);
      if (first.rows !== n || raw.rows !== n) throw new Error(`${kind}: expected ${n} rows, osm stored ${first.rows}, raw ${raw.rows}`);
      const osmRate = n / (first.ms / 1000);
      const rawRate = n / (raw.ms / 1000);
      const peak = Math.max(first.peakRssMb, again.peakRssMb);
      const l1 = load();
      rows.push(
        { engine: 'postgresql', load: l0, metric: `PG ${kind} import rate (osm import CLI)`, figure: round(osmRate, 0), unit: 'rows/s', baseline: round(rawRate, 0), baselineLabel: 'rows/s, raw pg COPY', ratio: round(osmRate / rawRate, 2), target: 'ratio ≥ 0.5', met: osmRate / rawRate >= 0.5 },
        { engine: 'postgresql', load: l0, metric: `PG ${kind} import peak RSS`, figure: peak, unit: 'MB', baseline: raw.peakRssMb, baselineLabel: 'MB, raw COPY', ratio: round(peak / raw.peakRssMb, 2), target: '< 300 MB', met: peak < 300 },
        { engine: 'postgresql', load: l0, metric: `PG ${kind} re-import`, figure: added, unit: 'rows added', baseline: round(n / (again.ms / 1000), 0), baselineLabel: 're-import rows/s', ratio: null, target: '0 rows added', met: added === 0 && again.stats.new === 0 },
      );
      details[`pg_${kind}`] = {
        lines: n,
        load_start: l0,
        load_end: l1,
        raw: { ms: round(raw.ms, 0), rows_per_s: round(rawRate, 0), peak_rss_mb: raw.peakRssMb },
        osm: { wall_ms: round(first.ms, 0), rows_per_s: round(osmRate, 0), peak_rss_mb: first.peakRssMb, new: first.stats.new },
        reimport: { wall_ms: round(again.ms, 0), peak_rss_mb: again.peakRssMb, rows_added: added, unchanged: again.stats.unchanged, updated: again.stats.updated },
      };
    }
  } finally {
    await osmDb.drop();
    await rawDb.drop();
  }
  return rows;
}

// ---------------------------------------------------------------- 2. reads

function startBarePg(url) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(LIB, 'bare-pg-server.mjs'), url], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c;
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`bare pg server exited with ${code}`)));
  });
}

async function cannon(url, headers) {
  await autocannon({ url, connections: 4, duration: 1, headers });
  const r = await autocannon({ url, connections: 4, duration: 4, headers });
  if (r.errors || r.non2xx || r.timeouts) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`);
  return { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, rps: round(r.requests.average, 0), requests: r.requests.total };
}

async function pgReads(log, dir, details) {
  const n = scaled(1_000_000, 10_000);
  const db = await freshDb('reads');
  const base = path.join(dir, 'reads-base');
  let daemon;
  let bare;
  try {
    await configSet(base, { 'server.max_concurrent_runs': 2 });
    const seedDb = path.join(dir, 'reads-seed', 'database-osm.sqlite');
    mkdirSync(path.dirname(seedDb), { recursive: true });
    let t = now();
    await runTimed(process.execPath, [path.join(LIB, 'seed-db.mjs'), seedDb, String(n)]);
    const copy = await osm(['-b', path.dirname(seedDb), 'db', 'copy', '--to', db.url, '--json'], { env: { NO_COLOR: '1' } });
    if (!JSON.parse(copy.stdout).ok) throw new Error(`db copy did not verify: ${copy.stdout.slice(0, 1000)}`);
    await pgQuery(db.url, 'VACUUM ANALYZE');
    log(`  PG reads: seeded ${n} + ${n} rows (SQLite seed + osm db copy + VACUUM ANALYZE) in ${Math.round(now() - t)} ms`);
    daemon = await startDaemon(base, path.join(dir, 'no-workflows'), ['--no-schedule'], { OSM_DATABASE_URL: db.url });
    const stats = await daemon.api('GET', '/osm/api/stats');
    const v = stats.vulnerabilities ?? {};
    if (stats.assets?.total !== n || v.critical + v.high + v.medium + v.low + v.info !== n) throw new Error(`daemon on PG sees ${JSON.stringify(stats).slice(0, 300)}`);
    bare = await startBarePg(db.url);
    const highInBig = (await daemon.api('GET', '/osm/api/vulnerabilities/summary?workspace=big')).data.by_severity.high;
    const off = Math.min(999 * 20, Math.max(0, Math.floor(highInBig / 20) - 1) * 20);
    const endpoints = [
      ['vulns ws+severity, page 1', 'vulnerabilities?workspace=big&severity=high'],
      ['vulns ws+severity, page 1000', `vulnerabilities?workspace=big&severity=high&offset=${off}`],
      ['assets ws+status, page 1', 'assets?workspace=big&status_code=200'],
      ['assets ws+status, page 1000', `assets?workspace=big&status_code=200&offset=${off}`],
      ['/stats', 'stats'],
      ['vulns summary (ws)', 'vulnerabilities/summary?workspace=big'],
    ];
    const rows = [];
    details.pg_reads = { rows_each: n, page_offset: off, load_start: load(), endpoints: {} };
    for (const [name, p] of endpoints) {
      const l0 = load();
      const o = await cannon(`${daemon.url}/osm/api/${p}`, { 'x-osm-api-key': daemon.key });
      const b = await cannon(`${bare.url}/${p}`);
      log(`  PG ${name}: osm p50 ${o.p50} p99 ${o.p99} ms ${o.rps} req/s | bare p50 ${b.p50} p99 ${b.p99} ms ${b.rps} req/s (load ${l0.join(' ')})`);
      details.pg_reads.endpoints[name] = { osm: o, bare: b, load: l0 };
      rows.push({ engine: 'postgresql', load: l0, metric: `PG ${name}: p99 (p50 ${o.p50}), ${o.rps} req/s`, figure: o.p99, unit: 'ms', baseline: b.p99, baselineLabel: `ms p99, bare pg ${b.rps} req/s`, ratio: round(o.rps / b.rps, 2), target: 'p99 < 20 ms', met: o.p99 < 20 });
    }
    details.pg_reads.daemon_peak_rss_mb = peakRssMb(daemon.pid);
    return rows;
  } finally {
    bare?.child.kill('SIGTERM');
    await daemon?.stop();
    await db.drop();
  }
}

// ---------------------------------------------------------------- 3. many runs

const STEPS = 5;
const SLEEP_S = 0.2;
const LIMIT = 20;

async function pgManyRuns(log, dir, details) {
  const runs = scaled(200, 40);
  const jobs = Math.max(1, Math.round(runs / 20));
  const db = await freshDb('runs');
  const base = path.join(dir, 'runs-base');
  const wf = path.join(dir, 'runs-workflows');
  let daemon;
  try {
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    let yaml = `kind: module\nname: bench-sleep\ndescription: benchmark — ${STEPS} steps of sleep ${SLEEP_S}\nsteps:\n`;
    for (let i = 0; i < STEPS; i++) yaml += `  - name: nap${i}\n    type: bash\n    command: sleep ${SLEEP_S}\n`;
    writeFileSync(path.join(wf, 'modules', 'bench-sleep.yaml'), yaml);
    await configSet(base, { 'server.max_concurrent_runs': LIMIT });
    daemon = await startDaemon(base, wf, ['--no-schedule'], { OSM_DATABASE_URL: db.url });
    const l0 = load();
    const cpu0 = cpuReading(daemon.pid);
    const jobIds = [];
    let made = 0;
    for (let j = 0; j < jobs; j++) {
      const c = Math.round(((j + 1) * runs) / jobs) - made;
      const targets = Array.from({ length: c }, (_, k) => `t${String(made + k).padStart(4, '0')}.runs.example.com`);
      made += c;
      jobIds.push((await daemon.api('POST', '/osm/api/runs', { module: 'bench-sleep', targets, concurrency: c })).job_id);
    }
    const results = [];
    for (const id of jobIds) results.push(await waitJob(daemon, id, 100));
    const completed = results.reduce((s, j) => s + j.completed, 0);
    if (completed !== runs) throw new Error(`PG: ${completed}/${runs} runs completed`);
    const cpu = cpuSpent(cpu0, cpuReading(daemon.pid));
    const rss = peakRssMb(daemon.pid);
    await daemon.stop();
    daemon = undefined;
    const runRows = await pgQuery(db.url, `SELECT run_uuid, created_at, started_at, completed_at FROM runs WHERE workflow_name = 'bench-sleep'`);
    const stepRows = await pgQuery(db.url, `SELECT run_uuid, step_index, started_at, completed_at FROM step_results`);
    const breakdown = runBreakdown(runRows, stepRows, SLEEP_S * 1000);
    const events = await pgQuery(db.url, `SELECT run_id, topic, created_at FROM event_logs WHERE topic IN ('run.started', 'run.completed')`);
    const t = (iso) => Date.parse(iso);
    const byRun = new Map();
    for (const e of events) {
      const r = byRun.get(e.run_id) ?? {};
      r[e.topic === 'run.started' ? 's' : 'e'] = t(e.created_at);
      byRun.set(e.run_id, r);
    }
    const eventIntervals = [...byRun.values()].filter((r) => r.s !== undefined && r.e !== undefined).map((r) => [r.s, r.e]);
    if (eventIntervals.length !== runs) throw new Error(`PG: expected ${runs} run.started/run.completed pairs, found ${eventIntervals.length}`);
    const rowIntervals = runRows.map((r) => [t(r.started_at), t(r.completed_at)]);
    const oe = maxOverlap(eventIntervals);
    const or = maxOverlap(rowIntervals);
    const makespan = Math.max(...runRows.map((r) => t(r.completed_at))) - Math.min(...runRows.map((r) => t(r.created_at)));
    const ideal = (runs * STEPS * SLEEP_S * 1000) / LIMIT;
    const durations = rowIntervals.map(([s, e]) => e - s).sort((a, b) => a - b);
    log(`  PG many runs: makespan ${makespan} ms (ideal ${ideal} ms, ×${round(makespan / ideal, 3)}), max concurrent ${oe} / ${or} (load ${l0.join(' ')})`);
    log(`  PG ${describeBreakdown(breakdown)}`);
    log(`  PG ${describeCpu(cpu, runs)}`);
    details.pg_many_runs = { runs, jobs, breakdown, makespan_ms: makespan, ideal_ms: ideal, max_overlap_events: oe, max_overlap_rows: or, load_start: l0, load_end: load(), run_duration_ms: { min: durations[0], median: durations[Math.floor(durations.length / 2)], max: durations.at(-1) }, daemon_peak_rss_mb: rss, cpu_s: cpu };
    return [
      { engine: 'postgresql', load: l0, metric: `PG makespan of ${runs} runs`, figure: round(makespan / 1000, 2), unit: 's', baseline: round(ideal / 1000, 2), baselineLabel: 's ideal = work ÷ limit', ratio: round(makespan / ideal, 3), target: 'ratio ≤ 1.10', met: makespan <= ideal * 1.1 },
      { engine: 'postgresql', load: l0, metric: 'PG max runs at once (events / rows)', figure: Math.max(oe, or), unit: 'runs', baseline: LIMIT, baselineLabel: 'limit', ratio: null, target: `≤ ${LIMIT}`, met: oe <= LIMIT && or <= LIMIT },
    ];
  } finally {
    await daemon?.stop();
    await db.drop();
  }
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const { dir, cleanup } = tempDir('osm-bench-pg-');
  const rows = [];
  const details = { parts: parts(), with_sqlite: withSqlite(), timings_s: {} };
  const part = async (id, name, fn) => {
    if (!parts().includes(id)) return;
    const t = now();
    rows.push(...(await fn()));
    details.timings_s[name] = round((now() - t) / 1000, 1);
    log(`  [11.${id}] ${name} done in ${details.timings_s[name]} s`);
  };
  try {
    await part(1, 'ingest', async () => [...(await pgIngest(log, dir, details)), ...(await sqliteSide('./03-ingest.mjs', log))]);
    await part(2, 'reads', async () => [...(await pgReads(log, dir, details)), ...(await sqliteSide('./04-api-reads.mjs', log))]);
    await part(3, 'many-runs', async () => [...(await pgManyRuns(log, dir, details)), ...(await sqliteSide('./05-many-runs.mjs', log))]);
    return { rows, details };
  } finally {
    cleanup();
  }
}
