#!/usr/bin/env node
/**
 * `npm run bench` — runs the benchmarks (all, or those named: `node bench/run.mjs 3 5`), each
 * against a baseline measured in the same run, prints one table and writes
 * `bench/results/<name>.json` with the machine description and the load average at start.
 * Builds `dist/` first when any source file is newer than it (the benchmarks run the built CLI).
 * BENCH_SCALE=0.1 shrinks every size for a quick check; reported figures come from scale 1.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Table from 'cli-table3';
import { DIST, ROOT, fmt, isBusy, machineInfo, now, round, runTimed, scale, waitForQuiet } from './lib/common.mjs';

const BENCHES = [
  () => import('./01-step-overhead.mjs'),
  () => import('./02-fanout.mjs'),
  () => import('./03-ingest.mjs'),
  () => import('./04-api-reads.mjs'),
  () => import('./05-many-runs.mjs'),
  () => import('./06-startup.mjs'),
  () => import('./07-live-logs.mjs'),
  () => import('./08-dashboard.mjs'),
  () => import('./09-db-copy.mjs'),
  () => import('./10-fleet.mjs'),
  () => import('./11-postgresql.mjs'),
];

/** Newest modification time (ms) of the files under `dir` whose names end with `ext`. */
function newest(dir, ext) {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) max = Math.max(max, newest(p, ext));
    else if (entry.name.endsWith(ext)) max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}

/** Rebuilds dist/ when a source is newer than every built file (or dist/ is missing). */
async function buildIfStale(log) {
  let built = 0;
  try {
    built = newest(DIST, '.js');
  } catch {
    built = 0;
  }
  const source = Math.max(newest(path.join(ROOT, 'src'), '.ts'), statSync(path.join(ROOT, 'tsconfig.json')).mtimeMs);
  if (built >= source) return;
  log('dist/ is stale: building (tsc -p tsconfig.build.json)…');
  // tsc emits even when other folders have type errors; a missing dist/cli/main.js is the real failure.
  await runTimed(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { allowFailure: true });
  statSync(path.join(DIST, 'cli', 'main.js'));
}

function parseSelection(argv) {
  const ids = argv.filter((a) => /^\d+$/.test(a)).map(Number);
  for (const id of ids) if (id < 1 || id > BENCHES.length) throw new Error(`no benchmark ${id} (1-${BENCHES.length})`);
  return ids.length ? ids : BENCHES.map((_, i) => i + 1);
}

function metCell(met) {
  if (met === null || met === undefined) return '–';
  return met ? 'yes' : 'NO';
}

async function main() {
  const log = (msg) => process.stderr.write(`${msg}\n`);
  const selected = parseSelection(process.argv.slice(2));
  await buildIfStale(log);
  const resultsDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const table = new Table({ head: ['#', 'benchmark', 'metric', 'figure', 'baseline', 'ratio', 'target', 'met?'], style: { head: [], border: [] } });
  const started = now();
  let failures = 0;
  if (scale() !== 1) log(`BENCH_SCALE=${scale()}: sizes are scaled; these figures are not the reported ones`);

  for (const id of selected) {
    const mod = await BENCHES[id - 1]();
    // Other engineers' test suites may be running: give the machine a moment to calm down.
    if (isBusy()) await waitForQuiet(undefined, Number(process.env.BENCH_QUIET_WAIT_S ?? 30) * 1000);
    const machine = machineInfo();
    log(`\n[${id}] ${mod.meta.title} — load average ${machine.loadavg.join(' ')}${machine.busy ? ' (machine BUSY: figures may be pessimistic)' : ''}`);
    const t0 = now();
    let result;
    try {
      result = await mod.run({ log });
    } catch (err) {
      failures++;
      log(`[${id}] FAILED: ${err && err.stack ? err.stack : err}`);
      table.push([id, mod.meta.name, 'ERROR', String(err && err.message ? err.message : err).split('\n')[0].slice(0, 60), '', '', '', 'NO']);
      continue;
    }
    const seconds = round((now() - t0) / 1000, 1);
    const loadEnd = machineInfo().loadavg;
    for (const r of result.rows) {
      table.push([
        id,
        mod.meta.name,
        r.metric,
        `${fmt(r.figure, 2)} ${r.unit ?? ''}`.trim(),
        r.baseline === undefined || r.baseline === null ? '–' : `${fmt(r.baseline, 2)}${r.baselineLabel ? ` (${r.baselineLabel})` : ''}`,
        r.ratio === undefined || r.ratio === null ? '–' : fmt(r.ratio, 2),
        r.target ?? '',
        metCell(r.met),
      ]);
    }
    const record = {
      benchmark: mod.meta.name,
      title: mod.meta.title,
      date: new Date().toISOString(),
      scale: scale(),
      seconds,
      machine,
      loadavg_end: loadEnd,
      machine_busy: machine.busy || isBusy(),
      rows: result.rows,
      details: result.details,
    };
    // Scaled-down runs go to *.tmp (git-ignored) so they never pass for the reported figures.
    const file = path.join(resultsDir, `${mod.meta.name}.json${scale() === 1 ? '' : '.tmp'}`);
    writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    log(`[${id}] done in ${seconds} s → ${path.relative(ROOT, file)}`);
  }
  process.stdout.write(`\n${table.toString()}\n`);
  process.stdout.write(`total ${round((now() - started) / 1000, 1)} s${scale() !== 1 ? ` (BENCH_SCALE=${scale()})` : ''}\n`);
  if (failures) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
