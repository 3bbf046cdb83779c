/**
 * Benchmark 6 — start-up: `osm --version` and `osm --help` against `node -e 0`; `osm serve` to
 * the first 200 on /health with 1,000 workflow files to index, against a plain node:http server
 * to its first 200. The daemon is started twice on the same base folder: the second start must
 * re-index nothing (its banner must say all 1,000 are unchanged).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { OSM, median, now, round, runTimed, scaled, sleep, tempDir } from './lib/common.mjs';
import { configSet, startDaemon } from './lib/daemon.mjs';

export const meta = { id: 6, name: 'startup', title: 'Start-up (osm --version/--help, osm serve with 1,000 workflows)' };

const REPS = 7;
const HELLO = `require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port) })`;

/** Median wall time of `reps` runs of a command. */
async function medianRun(args, reps = REPS) {
  const times = [];
  for (let i = 0; i < reps; i++) times.push((await runTimed(process.execPath, args)).ms);
  return { median: median(times), all: times.map((t) => round(t, 1)) };
}

/** Polls `url` until it answers 200; resolves with the time since `t0`. */
async function firstOk(url, t0) {
  for (;;) {
    try {
      const res = await request(url);
      await res.body.text();
      if (res.statusCode === 200) return now() - t0;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
}

/** Spawns the plain node:http server and measures spawn → first 200. */
function helloServer() {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const child = spawn(process.execPath, ['-e', HELLO], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c;
      const m = /(http:\/\/\S+)/.exec(buf);
      if (m) {
        void firstOk(m[1], t0).then((ms) => {
          child.kill('SIGTERM');
          resolve(ms);
        });
      }
    });
    child.on('error', reject);
  });
}

/** A small module: three steps, a param, a report — what the indexer parses for each file. */
function moduleYaml(i) {
  return `kind: module
name: idx-${String(i).padStart(4, '0')}
description: start-up benchmark module ${i}
tags: bench, startup
params:
  - name: depth
    default: "${i % 5}"
steps:
  - name: one
    type: bash
    command: echo "{{Target}} {{depth}}"
  - name: two
    type: bash
    commands:
      - mkdir -p "{{Output}}/idx"
      - echo done > "{{Output}}/idx/${i}.txt"
  - name: three
    type: function
    function: log_info("module ${i}")
`;
}

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const files = scaled(1000, 20);
  const { dir, cleanup } = tempDir();
  const daemons = [];
  try {
    const node0 = await medianRun(['-e', '0']);
    const version = await medianRun([OSM, '--version']);
    const help = await medianRun([OSM, '--help']);
    log(`  node -e 0 ${round(node0.median, 1)} ms, osm --version ${round(version.median, 1)} ms, osm --help ${round(help.median, 1)} ms`);

    const base = path.join(dir, 'base');
    const wf = path.join(dir, 'workflows');
    mkdirSync(path.join(wf, 'modules'), { recursive: true });
    for (let i = 0; i < files; i++) writeFileSync(path.join(wf, 'modules', `idx-${String(i).padStart(4, '0')}.yaml`), moduleYaml(i));
    await configSet(base, { 'server.max_concurrent_runs': 2 });

    const hello = [];
    for (let i = 0; i < 3; i++) hello.push(await helloServer());
    const starts = [];
    for (const label of ['first', 'second']) {
      const t0 = now();
      const d = await startDaemon(base, wf, ['--no-schedule']);
      daemons.push(d);
      const ms = await firstOk(`${d.url}/health`, t0);
      const m = /\((\d+) added, (\d+) updated, (\d+) removed, (\d+) unchanged/.exec(d.banner);
      const counts = m ? { added: +m[1], updated: +m[2], removed: +m[3], unchanged: +m[4] } : undefined;
      log(`  osm serve (${label} start): first 200 after ${Math.round(ms)} ms; index ${JSON.stringify(counts)}`);
      starts.push({ label, ms, counts });
      await d.stop();
      daemons.pop();
    }
    const [first, second] = starts;
    const helloMs = median(hello);
    const reindexOk = Boolean(second.counts) && second.counts.unchanged === files && second.counts.added + second.counts.updated + second.counts.removed === 0;
    if (!first.counts || first.counts.added !== files) throw new Error(`first start indexed ${JSON.stringify(first.counts)}, expected ${files} added`);
    return {
      rows: [
        { metric: 'osm --version', figure: round(version.median, 0), unit: 'ms', baseline: round(node0.median, 0), baselineLabel: 'ms, node -e 0', ratio: round(version.median / node0.median, 2), target: '(info)', met: null },
        { metric: 'osm --help', figure: round(help.median, 0), unit: 'ms', baseline: round(node0.median, 0), baselineLabel: 'ms, node -e 0', ratio: round(help.median / node0.median, 2), target: '(info)', met: null },
        {
          metric: `osm serve → first 200, ${files} workflows (1st start)`,
          figure: round(first.ms, 0),
          unit: 'ms',
          baseline: round(helloMs, 0),
          baselineLabel: 'ms, node:http hello',
          ratio: round(first.ms / helloMs, 2),
          target: '(info)',
          met: null,
        },
        {
          metric: 'osm serve → first 200 (2nd start)',
          figure: round(second.ms, 0),
          unit: 'ms',
          baseline: round(helloMs, 0),
          baselineLabel: 'ms, node:http hello',
          ratio: round(second.ms / helloMs, 2),
          target: 're-indexes nothing',
          met: reindexOk,
        },
      ],
      details: {
        workflow_files: files,
        node_e_0_ms: node0,
        osm_version_ms: version,
        osm_help_ms: help,
        hello_server_first_200_ms: hello.map((h) => round(h, 1)),
        serve_first_start: { first_200_ms: round(first.ms, 1), index: first.counts },
        serve_second_start: { first_200_ms: round(second.ms, 1), index: second.counts },
      },
    };
  } finally {
    for (const d of daemons) await d.stop();
    cleanup();
  }
}
