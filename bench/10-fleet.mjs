/**
 * Benchmark 10 — fleet: a master (`osm serve --master`) and workers (`osm worker join`) on the
 * local Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379/0; keys under a fresh prefix,
 * deleted at the end).
 *  (a) scaling: 40 runs × 2 steps of `sleep 2` on 1, 2 and 4 workers of concurrency 4; makespan
 *      (submit → every run completed on the master) against the ideal, waves × 4 s, where waves =
 *      ⌈runs ÷ (workers × 4)⌉;
 *  (b) overhead: 500 one-step runs (`true`) through the master on 2 workers × 2 against the same
 *      runs through one daemon (`osm serve`, `server.max_concurrent_runs` 4): same parallelism;
 *  (c) results shipping: a run on a worker imports 100,000 httpx-like lines into its own database;
 *      the rows then travel to the master (fenced `rows` records of 500). Shipping rate (worker's
 *      run end → the master has applied everything) against the worker's local ingest rate of the
 *      same rows (its import step).
 * Every time is measured by polling the master's API every 100 ms, the same way for the baseline.
 * BENCH_FLEET_PARTS=b (or a,c …) runs only the named parts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { OSM, ROOT, now, round, scaled, sleep, tempDir } from './lib/common.mjs';
import { configSet, startDaemon, stopChild } from './lib/daemon.mjs';
import { httpxLine, writeJsonl } from './lib/gen-jsonl.mjs';
import { cpuReading, cpuSpent, describeCpu } from './lib/probe.mjs';

export const meta = { id: 10, name: 'fleet', title: 'Fleet (master + workers on Redis): scaling 1→2→4 workers, overhead vs one daemon, results shipping' };

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const SLEEP_S = 2;
const SLEEP_STEPS = 2;
const PER_WORKER = 4;
const PARTS = new Set((process.env.BENCH_FLEET_PARTS ?? 'a,b,c').split(',').map((p) => p.trim()));

function writeModules(wf, importFile) {
  const dir = path.join(wf, 'modules');
  mkdirSync(dir, { recursive: true });
  const mod = (name, steps) => writeFileSync(path.join(dir, `${name}.yaml`), `kind: module\nname: ${name}\ndescription: benchmark ${name}\nsteps:\n${steps}`);
  let sleeps = '';
  for (let i = 0; i < SLEEP_STEPS; i++) sleeps += `  - name: nap${i}\n    type: bash\n    command: sleep ${SLEEP_S}\n`;
  for (const n of [1, 2, 4]) mod(`fleet-sleep-${n}w`, sleeps);
  for (const name of ['fleet-tiny-dist', 'fleet-tiny-local']) mod(name, '  - name: ok\n    type: bash\n    command: "true"\n');
  mod('fleet-import', `  - name: ingest\n    type: function\n    function: db_import_asset_from_file("{{Workspace}}", "${importFile}")\n`);
}

/** `osm worker join` in its own process; resolved once it has joined. */
function startWorker(base, wf, prefix, name, concurrency) {
  return new Promise((resolve, reject) => {
    // BENCH_DAEMON_NODE_ARGS (see lib/daemon.mjs) profiles the workers too.
    const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const args = [...nodeArgs, OSM, '-b', base, '-F', wf, 'worker', 'join', '--redis-url', REDIS_URL, '--redis-prefix', prefix, '--name', name, '--concurrency', String(concurrency)];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let joined = false;
    const onData = (d) => {
      tail = (tail + d.toString('utf8')).slice(-20_000);
      if (!joined && tail.includes(`worker ${name} joined`)) {
        joined = true;
        resolve({
          name,
          pid: child.pid,
          tail: () => tail,
          stop: () => stopChild(child, 20_000),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!joined) reject(new Error(`worker ${name} exited (${code ?? signal}) before joining:\n${tail}`));
    });
  });
}

async function startWorkers(dir, wf, prefix, count, concurrency, tag) {
  const workers = [];
  for (let i = 1; i <= count; i++) workers.push(await startWorker(path.join(dir, `${tag}-${i}`), wf, prefix, `${tag}-${i}`, concurrency));
  return workers;
}

async function stopAll(workers) {
  await Promise.all(workers.map((w) => w.stop()));
}

/** Deletes every key of the prefix. */
async function dropPrefix(prefix) {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** Submits `targets` to `workflow` and polls until all its runs completed; ms from submit to that. */
async function submitAndWait(daemon, workflow, targets, body = {}) {
  const t0 = now();
  await daemon.api('POST', '/osm/api/runs', { module: workflow, targets, ...body });
  for (;;) {
    const q = `/osm/api/runs?workflow_name=${workflow}&limit=1`;
    const [done, failed] = await Promise.all([daemon.api('GET', `${q}&status=completed`), daemon.api('GET', `${q}&status=failed`)]);
    if (failed.pagination.total > 0) throw new Error(`${failed.pagination.total} run(s) of ${workflow} failed: ${failed.data[0]?.error_message}`);
    if (done.pagination.total >= targets.length) return { ms: now() - t0, at: Date.now() };
    await sleep(100);
  }
}

const targetsOf = (tag, n) => Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(5, '0')}.fleet.example.com`);

/** Runs the benchmark; returns table rows and details for the JSON result. */
export async function run({ log }) {
  const prefix = `osm-bench-${randomBytes(4).toString('hex')}`;
  const { dir, cleanup } = tempDir();
  let master;
  let daemon;
  const workers = [];
  try {
    const rows = scaled(100_000, 2000);
    const importFile = path.join(dir, 'httpx.jsonl');
    await writeJsonl(importFile, rows, httpxLine);
    const wf = path.join(dir, 'workflows');
    writeModules(wf, importFile);
    master = await startDaemon(path.join(dir, 'master'), wf, ['--master', '--redis-url', REDIS_URL, '--no-schedule'], { OSM_REDIS_PREFIX: prefix });
    const details = { redis: REDIS_URL.replace(/\/\/[^@]*@/, '//'), prefix };

    const out = [];
    const more = {};

    // (a) scaling
    if (PARTS.has('a')) {
      const sleepRuns = scaled(40, 8);
      const perRun = SLEEP_STEPS * SLEEP_S * 1000;
      const scaling = {};
      for (const n of [1, 2, 4]) {
        workers.push(...(await startWorkers(dir, wf, prefix, n, PER_WORKER, `a${n}`)));
        const { ms } = await submitAndWait(master, `fleet-sleep-${n}w`, targetsOf(`a${n}-`, sleepRuns), { run_mode: 'distributed' });
        await stopAll(workers.splice(0));
        const ideal = Math.ceil(sleepRuns / (n * PER_WORKER)) * perRun;
        scaling[n] = { makespan_ms: Math.round(ms), ideal_ms: ideal, ratio: round(ms / ideal, 3) };
        log(`  (a) ${sleepRuns} runs on ${n} worker(s) × ${PER_WORKER}: ${Math.round(ms)} ms (ideal ${ideal} ms, ×${round(ms / ideal, 2)})`);
      }
      const speedup = (n) => round(scaling[1].makespan_ms / scaling[n].makespan_ms, 2);
      more.scaling = { runs: sleepRuns, per_worker: PER_WORKER, by_workers: scaling, speedup_2: speedup(2), speedup_4: speedup(4) };
      out.push(
        ...[1, 2, 4].map((n) => ({
          metric: `(a) ${sleepRuns} runs × ${SLEEP_STEPS} × sleep ${SLEEP_S}, ${n} worker(s) × ${PER_WORKER}`,
          figure: round(scaling[n].makespan_ms / 1000, 2),
          unit: 's',
          baseline: round(scaling[n].ideal_ms / 1000, 2),
          baselineLabel: 's ideal',
          ratio: scaling[n].ratio,
          target: 'ratio ≤ 1.10',
          met: scaling[n].ratio <= 1.1,
        })),
      );
    }

    // (b) overhead against one daemon, same parallelism (2 × 2 = 4)
    if (PARTS.has('b')) {
      const tinyRuns = scaled(500, 50);
      workers.push(...(await startWorkers(dir, wf, prefix, 2, 2, 'b')));
      const fleetPids = [master.pid, ...workers.map((w) => w.pid)];
      const fleetCpu0 = cpuReading(fleetPids);
      const masterCpu0 = cpuReading(master.pid);
      const dist = await submitAndWait(master, 'fleet-tiny-dist', targetsOf('b-', tinyRuns), { run_mode: 'distributed' });
      const fleetCpu = cpuSpent(fleetCpu0, cpuReading(fleetPids));
      const masterCpu = cpuSpent(masterCpu0, cpuReading(master.pid));
      await stopAll(workers.splice(0));
      const localBase = path.join(dir, 'local');
      await configSet(localBase, { 'server.max_concurrent_runs': 4 });
      daemon = await startDaemon(localBase, wf, ['--no-schedule']);
      const localCpu0 = cpuReading(daemon.pid);
      const local = await submitAndWait(daemon, 'fleet-tiny-local', targetsOf('l-', tinyRuns), { concurrency: 4 });
      const localCpu = cpuSpent(localCpu0, cpuReading(daemon.pid));
      await daemon.stop();
      daemon = undefined;
      log(`  (b) ${tinyRuns} tiny runs: master → 2 workers × 2 ${Math.round(dist.ms)} ms, one daemon (limit 4) ${Math.round(local.ms)} ms (×${round(dist.ms / local.ms, 2)})`);
      log(`  (b) fleet ${describeCpu(fleetCpu, tinyRuns, 'master + workers')}; the master alone ${masterCpu.self} s (${round((masterCpu.self * 1000) / tinyRuns, 1)} ms/run)`);
      log(`  (b) daemon ${describeCpu(localCpu, tinyRuns)}`);
      more.overhead = { runs: tinyRuns, distributed_ms: Math.round(dist.ms), daemon_ms: Math.round(local.ms), cpu_s: { fleet: fleetCpu, master: masterCpu.self, daemon: localCpu } };
      out.push({
        metric: `(b) ${tinyRuns} one-step runs, master → 2 workers × 2`,
        figure: round(dist.ms / 1000, 2),
        unit: 's',
        baseline: round(local.ms / 1000, 2),
        baselineLabel: 's one daemon, limit 4',
        ratio: round(dist.ms / local.ms, 3),
        target: 'ratio ≤ 1.10',
        met: dist.ms <= local.ms * 1.1,
      });
    }

    // (c) results shipping
    if (PARTS.has('c')) {
      workers.push(...(await startWorkers(dir, wf, prefix, 1, 1, 'c')));
      const shipped = await submitAndWait(master, 'fleet-import', ['ship.fleet.example.com'], { run_mode: 'distributed' });
      await stopAll(workers.splice(0));
      const runRow = (await master.api('GET', '/osm/api/runs?workflow_name=fleet-import&limit=1')).data[0];
      const step = (await master.api('GET', `/osm/api/runs/${runRow.run_uuid}/steps`)).data.find((s) => s.step_name === 'ingest');
      const onMaster = (await master.api('GET', `/osm/api/assets?workspace=${encodeURIComponent(runRow.workspace)}&limit=1`)).pagination.total;
      if (onMaster !== rows) throw new Error(`the master holds ${onMaster} assets of the ${rows} the worker imported`);
      const ingestMs = Date.parse(step.completed_at) - Date.parse(step.started_at);
      const shipMs = shipped.at - Date.parse(runRow.completed_at);
      const shipRate = rows / (shipMs / 1000);
      const ingestRate = rows / (ingestMs / 1000);
      log(`  (c) ${rows} assets: worker ingest ${ingestMs} ms (${Math.round(ingestRate)} rows/s), shipped and applied on the master in ${shipMs} ms (${Math.round(shipRate)} rows/s)`);
      more.shipping = { rows, worker_ingest_ms: ingestMs, ship_ms: shipMs };
      out.push({
        metric: `(c) shipping ${rows} assets worker → master`,
        figure: Math.round(shipRate),
        unit: 'rows/s',
        baseline: Math.round(ingestRate),
        baselineLabel: 'rows/s local ingest',
        ratio: round(shipRate / ingestRate, 3),
        target: '',
        met: null,
      });
    }

    return { rows: out, details: { ...details, ...more } };
  } finally {
    await stopAll(workers);
    await daemon?.stop();
    await master?.stop();
    await dropPrefix(prefix).catch(() => undefined);
    cleanup();
  }
}
