/**
 * Benchmark 2 — fan-out: a foreach over 10,000 lines with `parallel: 16`, each `true <line>`,
 * submitted to the daemon with POST /osm/api/runs, against `xargs -P 16 -n 1 true` on the same
 * file. While the run executes, /health is probed (one request every 10 ms) to show the event
 * loop stays responsive; the same probe on the idle daemon is the latency baseline.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { round, runTimed, scaled, sleep, tempDir, now, writeHostLines } from './lib/common.mjs';
import { configSet, startDaemon, waitJob } from './lib/daemon.mjs';
import { peakRssMb, startProbe } from './lib/probe.mjs';

export const meta = { id: 2, name: 'fanout', title: 'Fan-out (foreach over 10,000 lines, parallel 16) and /health latency' };

const MODULE = `kind: module
name: bench-fanout
description: benchmark — foreach over a file, 16 in parallel, each true
params:
  - name: input_file
steps:
  - name: fan
    type: foreach
    input: "{{input_file}}"
    variable: line
    parallel: 16
    step:
      name: item
      type: bash
      command: true [[line]]
`;

const writeLines = (file, n) => writeHostLines(file, n, 'fanout.example.com');

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const lines = scaled(10_000, 200);
  const { dir, cleanup } = tempDir();
  let daemon;
  try {
    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    writeFileSync(path.join(wf, 'modules', 'bench-fanout.yaml'), MODULE);
    // The input lives in the data folder's parent tree; a param is a plain path the engine reads.
    const input = path.join(dir, 'lines.txt');
    await writeLines(input, lines);

    const xargs = async () => (await runTimed('/bin/sh', ['-c', `xargs -P 16 -n 1 true < '${input}'`])).ms;
    const x1 = await xargs();
    log(`  xargs -P 16: ${Math.round(x1)} ms`);

    await configSet(base, { 'server.max_concurrent_runs': 2 });
    daemon = await startDaemon(base, wf);
    const healthUrl = `${daemon.url}/health`;
    // Warm the daemon (first request compiles route code) and measure the idle latency.
    const idle = startProbe(healthUrl);
    await sleep(2000);
    const idleStats = await idle.stop();

    const probe = startProbe(healthUrl);
    const t0 = now();
    const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-fanout', target: 'fanout.example.com', params: { input_file: input } });
    const job = await waitJob(daemon, sub.job_id, 50);
    const wall = now() - t0;
    const busyStats = await probe.stop();
    if (job.completed !== 1) throw new Error(`fan-out run did not complete: ${JSON.stringify(job).slice(0, 500)}`);
    const runRec = (await daemon.api('GET', `/osm/api/runs/${job.runs[0].run_uuid}`)).data;
    const runMs = Date.parse(runRec.completed_at) - Date.parse(runRec.started_at);
    const rss = peakRssMb(daemon.pid);
    log(`  osm foreach: ${Math.round(wall)} ms submit→done (run row ${runMs} ms); /health p99 ${busyStats.p99_ms} ms (idle ${idleStats.p99_ms} ms)`);
    await daemon.stop();
    daemon = undefined;

    const x2 = await xargs();
    log(`  xargs -P 16: ${Math.round(x2)} ms`);
    const xMs = (x1 + x2) / 2;
    const osmRate = lines / (wall / 1000);
    const xRate = lines / (xMs / 1000);
    const ratio = osmRate / xRate;
    return {
      rows: [
        {
          metric: 'foreach throughput (submit → job done)',
          figure: round(osmRate, 0),
          unit: 'items/s',
          baseline: round(xRate, 0),
          baselineLabel: 'items/s, xargs -P 16',
          ratio: round(ratio, 2),
          target: 'ratio ≥ 0.7',
          met: ratio >= 0.7,
        },
        {
          metric: '/health p99 during fan-out',
          figure: busyStats.p99_ms,
          unit: 'ms',
          baseline: idleStats.p99_ms,
          baselineLabel: 'ms, idle daemon',
          ratio: round(busyStats.p99_ms / idleStats.p99_ms, 1),
          target: 'responsive (p99 < 50 ms)',
          met: busyStats.p99_ms < 50 && busyStats.failures === 0,
        },
      ],
      details: {
        lines,
        parallel: 16,
        osm_submit_to_done_ms: round(wall, 1),
        osm_run_row_duration_ms: runMs,
        osm_run_row_rate: round(lines / (runMs / 1000), 0),
        xargs_ms: [round(x1, 1), round(x2, 1)],
        health_idle: idleStats,
        health_during_fanout: busyStats,
        daemon_peak_rss_mb: rss,
        probe: 'sequential GET /health, one request in flight, 10 ms pause between requests',
      },
    };
  } finally {
    await daemon?.stop();
    cleanup();
  }
}
