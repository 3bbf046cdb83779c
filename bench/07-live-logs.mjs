/**
 * Benchmark 7 — live logs.
 *
 * (a) Log latency: a step prints its own clock (`date +%s%3N`) every 20 ms; an SSE client on
 *     GET /osm/api/runs/{id}/logs records, for each line, receive time − the time in the line.
 *     Baseline: the same shell loop spawned directly by this process, read from its pipe — the
 *     latency of a plain pipe, which osm's path (spawner → engine → log file and journal → SSE)
 *     adds to.
 * (b) Followers: a foreach over 10,000 items (parallel 16, each printing a line) with 20 SSE
 *     clients following the run's log, while /health is probed; baseline: the same foreach with
 *     no follower. Both on a fresh daemon.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { request } from 'undici';
import { quantile, round, scaled, sleep, tempDir } from './lib/common.mjs';
import { configSet, startDaemon, waitJob } from './lib/daemon.mjs';
import { startProbe } from './lib/probe.mjs';

export const meta = { id: 7, name: 'live-logs', title: 'Live logs: line latency to an SSE client; 20 followers during a 10,000-item foreach' };

const TICKS = 200;
const TICK_LOOP = `for i in $(seq 1 ${TICKS}); do date +%s%3N; sleep 0.02; done`;

const TICKER = `kind: module
name: bench-ticker
steps:
  - name: tick
    type: bash
    command: '${TICK_LOOP}'
`;

const FANOUT = `kind: module
name: bench-fan-echo
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
      command: echo [[line]]
`;

async function writeLines(file, n) {
  const out = createWriteStream(file);
  for (let i = 0; i < n; i++) {
    if (!out.write(`host-${String(i).padStart(6, '0')}.follow.example.com\n`)) await new Promise((r) => out.once('drain', r));
  }
  out.end();
  await finished(out);
}

/** Reads an SSE response until its `end` event; calls onLine(data, receivedAtMs) for each line event. */
async function follow(url, headers, onLine, signal) {
  const res = await request(url, { headers: { ...headers, accept: 'text/event-stream' }, signal });
  if (res.statusCode !== 200) throw new Error(`log stream answered ${res.statusCode}`);
  let buf = '';
  let lines = 0;
  for await (const chunk of res.body) {
    buf += chunk.toString('utf8');
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      if (block.includes('event: end')) return lines;
      if (!block.includes('event: line')) continue;
      lines++;
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      if (data && onLine) onLine(JSON.parse(data.slice(6)), Date.now());
    }
  }
  return lines;
}

function stats(values) {
  return { n: values.length, p50_ms: round(quantile(values, 0.5), 1), p95_ms: round(quantile(values, 0.95), 1), max_ms: round(Math.max(...values), 1) };
}

/** The same loop read from a pipe by this process. */
function pipeLatencies() {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', TICK_LOOP], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out = [];
    let buf = '';
    child.stdout.on('data', (c) => {
      const at = Date.now();
      buf += c.toString('utf8');
      const parts = buf.split('\n');
      buf = parts.pop();
      for (const p of parts) if (/^\d+$/.test(p)) out.push(at - Number(p));
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** One foreach run on the daemon, with `followers` SSE clients; /health probed meanwhile. */
async function fanRun(daemon, input, followers) {
  const probe = startProbe(`${daemon.url}/health`);
  const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-fan-echo', target: 'follow.example.com', params: { input_file: input } });
  const uuid = sub.run_uuid;
  const streams = Array.from({ length: followers }, () => follow(`${daemon.url}/osm/api/runs/${uuid}/logs`, { 'x-osm-api-key': daemon.key }));
  const job = await waitJob(daemon, sub.job_id, 50);
  const got = await Promise.all(streams);
  const health = await probe.stop();
  if (job.completed !== 1) throw new Error(`foreach run did not complete: ${JSON.stringify(job).slice(0, 300)}`);
  return { health, linesPerFollower: got };
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const items = scaled(10_000, 200);
  const { dir, cleanup } = tempDir();
  let daemon;
  try {
    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    writeFileSync(path.join(wf, 'modules', 'bench-ticker.yaml'), TICKER);
    writeFileSync(path.join(wf, 'modules', 'bench-fan-echo.yaml'), FANOUT);
    const input = path.join(dir, 'lines.txt');
    await writeLines(input, items);
    await configSet(base, { 'server.max_concurrent_runs': 2 });

    // (a) latency
    const pipe = stats(await pipeLatencies());
    log(`  pipe latency: p50 ${pipe.p50_ms} ms, p95 ${pipe.p95_ms} ms`);
    daemon = await startDaemon(base, wf);
    const sub = await daemon.api('POST', '/osm/api/runs', { module: 'bench-ticker', target: 'tick.example.com' });
    const latencies = [];
    await follow(`${daemon.url}/osm/api/runs/${sub.run_uuid}/logs`, { 'x-osm-api-key': daemon.key }, (d, at) => {
      if (/^\d+$/.test(d.line)) latencies.push(at - Number(d.line));
    });
    const sse = stats(latencies);
    log(`  SSE latency:  p50 ${sse.p50_ms} ms, p95 ${sse.p95_ms} ms (${sse.n} lines)`);

    // (b) followers during a fan-out, against the same fan-out alone
    const alone = await fanRun(daemon, input, 0);
    await sleep(500);
    const followed = await fanRun(daemon, input, 20);
    const complete = followed.linesPerFollower.every((n) => n === items);
    log(`  /health p99: ${followed.health.p99_ms} ms with 20 followers, ${alone.health.p99_ms} ms without; every follower got ${complete ? 'every' : 'NOT every'} line`);
    return {
      rows: [
        {
          metric: 'log line latency to an SSE client (p95)',
          figure: sse.p95_ms,
          unit: 'ms',
          baseline: pipe.p95_ms,
          baselineLabel: 'ms, the same loop read from a pipe',
          ratio: pipe.p95_ms > 0 ? round(sse.p95_ms / pipe.p95_ms, 1) : null,
          target: 'p95 < 300 ms',
          met: sse.p95_ms < 300,
        },
        {
          metric: '/health p99, 20 SSE followers of a 10k-item foreach',
          figure: followed.health.p99_ms,
          unit: 'ms',
          baseline: alone.health.p99_ms,
          baselineLabel: 'ms, same foreach, no follower',
          ratio: round(followed.health.p99_ms / alone.health.p99_ms, 1),
          target: 'p99 < 50 ms, every line delivered',
          met: followed.health.p99_ms < 50 && followed.health.failures === 0 && complete,
        },
      ],
      details: {
        ticks: TICKS,
        sse_latency: sse,
        pipe_latency: pipe,
        foreach_items: items,
        followers: 20,
        lines_per_follower: followed.linesPerFollower,
        health_with_followers: followed.health,
        health_without_followers: alone.health,
      },
    };
  } finally {
    await daemon?.stop();
    cleanup();
  }
}
