/**
 * Benchmark 5 — many runs: 200 runs × 5 steps of `sleep 0.2` under a global limit of 20
 * (`server.max_concurrent_runs`), submitted to the daemon as 10 jobs of 20 targets. Makespan
 * (first run created → last run completed) against the ideal, total work ÷ limit = 10 s. The
 * limit is checked afterwards from the database: the run.started/run.completed events and the
 * runs' started_at/completed_at must never overlap more than 20 at once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { round, scaled, tempDir, now } from './lib/common.mjs';
import { configSet, startDaemon, waitJob } from './lib/daemon.mjs';
import { cpuReading, cpuSpent, describeCpu, peakRssMb } from './lib/probe.mjs';
import { describeBreakdown, runBreakdown } from './lib/run-breakdown.mjs';

export const meta = { id: 5, name: 'many-runs', title: 'Many runs (200 runs × 5 × sleep 0.2, global limit 20)' };

const STEPS = 5;
const SLEEP_S = 0.2;
const LIMIT = 20;

function sleepModule() {
  let yaml = `kind: module\nname: bench-sleep\ndescription: benchmark — ${STEPS} steps of sleep ${SLEEP_S}\nsteps:\n`;
  for (let i = 0; i < STEPS; i++) yaml += `  - name: nap${i}\n    type: bash\n    command: sleep ${SLEEP_S}\n`;
  return yaml;
}

/** Largest number of intervals open at once; at equal times an end is counted before a start. */
export function maxOverlap(intervals) {
  const points = [];
  for (const [s, e] of intervals) points.push([s, 1], [e, -1]);
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of points) {
    cur += d;
    max = Math.max(max, cur);
  }
  return max;
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const runs = scaled(200, 40);
  const jobs = Math.max(1, Math.round(runs / 20));
  const { dir, cleanup } = tempDir();
  let daemon;
  try {
    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    writeFileSync(path.join(wf, 'modules', 'bench-sleep.yaml'), sleepModule());
    await configSet(base, { 'server.max_concurrent_runs': LIMIT });
    daemon = await startDaemon(base, wf, ['--no-schedule']);

    const t0 = now();
    const cpu0 = cpuReading(daemon.pid);
    const jobIds = [];
    let made = 0;
    for (let j = 0; j < jobs; j++) {
      const count = Math.round(((j + 1) * runs) / jobs) - made;
      const targets = Array.from({ length: count }, (_, k) => `t${String(made + k).padStart(4, '0')}.runs.example.com`);
      made += count;
      const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-sleep', targets, concurrency: count });
      jobIds.push(sub.job_id);
    }
    const results = [];
    for (const id of jobIds) results.push(await waitJob(daemon, id, 100));
    const wall = now() - t0;
    const completed = results.reduce((n, j) => n + j.completed, 0);
    if (completed !== runs) throw new Error(`${completed}/${runs} runs completed: ${JSON.stringify(results.map((j) => j.runs.filter((r) => r.status !== 'completed').slice(0, 2)))}`);
    const cpu = cpuSpent(cpu0, cpuReading(daemon.pid));
    const rss = peakRssMb(daemon.pid);
    await daemon.stop();
    daemon = undefined;

    // The daemon is stopped: read what it recorded, read-only.
    const db = new Database(path.join(base, 'database-osm.sqlite'), { readonly: true });
    const runRows = db.prepare(`SELECT run_uuid, created_at, started_at, completed_at FROM runs WHERE workflow_name = 'bench-sleep'`).all();
    const stepRows = db.prepare(`SELECT run_uuid, step_index, started_at, completed_at FROM step_results`).all();
    const events = db.prepare(`SELECT run_id, topic, created_at FROM event_logs WHERE topic IN ('run.started', 'run.completed')`).all();
    db.close();
    const t = (iso) => Date.parse(iso);
    const byRun = new Map();
    for (const e of events) {
      const r = byRun.get(e.run_id) ?? {};
      r[e.topic === 'run.started' ? 's' : 'e'] = t(e.created_at);
      byRun.set(e.run_id, r);
    }
    const eventIntervals = [...byRun.values()].filter((r) => r.s !== undefined && r.e !== undefined).map((r) => [r.s, r.e]);
    if (eventIntervals.length !== runs) throw new Error(`expected ${runs} run.started/run.completed pairs, found ${eventIntervals.length}`);
    const rowIntervals = runRows.map((r) => [t(r.started_at), t(r.completed_at)]);
    const overlapEvents = maxOverlap(eventIntervals);
    const overlapRows = maxOverlap(rowIntervals);
    const makespan = Math.max(...runRows.map((r) => t(r.completed_at))) - Math.min(...runRows.map((r) => t(r.created_at)));
    const ideal = (runs * STEPS * SLEEP_S * 1000) / LIMIT;
    const over = makespan / ideal - 1;
    const runDurations = rowIntervals.map(([s, e]) => e - s).sort((a, b) => a - b);
    const breakdown = runBreakdown(runRows, stepRows, SLEEP_S * 1000);
    log(`  makespan ${makespan} ms (ideal ${ideal} ms, +${round(over * 100, 1)} %), wall ${Math.round(wall)} ms, max concurrent ${overlapEvents} (events) / ${overlapRows} (rows)`);
    log(`  ${describeBreakdown(breakdown)}`);
    log(`  ${describeCpu(cpu, runs)}`);
    return {
      rows: [
        {
          metric: `makespan of ${runs} runs`,
          figure: round(makespan / 1000, 2),
          unit: 's',
          baseline: round(ideal / 1000, 2),
          baselineLabel: 's ideal = work ÷ limit',
          ratio: round(makespan / ideal, 3),
          target: 'ratio ≤ 1.10',
          met: makespan <= ideal * 1.1,
        },
        {
          metric: 'max runs at once (events / rows)',
          figure: Math.max(overlapEvents, overlapRows),
          unit: 'runs',
          baseline: LIMIT,
          baselineLabel: 'limit',
          ratio: null,
          target: `≤ ${LIMIT}`,
          met: overlapEvents <= LIMIT && overlapRows <= LIMIT,
        },
      ],
      details: {
        breakdown,
        runs,
        jobs,
        steps_per_run: STEPS,
        sleep_s: SLEEP_S,
        limit: LIMIT,
        makespan_ms: makespan,
        ideal_ms: ideal,
        submit_to_all_done_wall_ms: round(wall, 0),
        max_overlap_events: overlapEvents,
        max_overlap_rows: overlapRows,
        run_duration_ms: { min: runDurations[0], median: runDurations[Math.floor(runDurations.length / 2)], max: runDurations.at(-1) },
        per_run_overhead_ms: round(runDurations[Math.floor(runDurations.length / 2)] - STEPS * SLEEP_S * 1000, 0),
        daemon_peak_rss_mb: rss,
        cpu_s: cpu,
      },
    };
  } finally {
    await daemon?.stop();
    cleanup();
  }
}
