/**
 * Latency probes: a paced loop of GET requests (one in flight at a time, `intervalMs` apart) that
 * records every latency, and the peak RSS of a running process from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { now, quantile, round, sleep } from './common.mjs';

/**
 * Probes `url` until `stop()` is called. Paced rather than back-to-back: on a 2-core machine a
 * tight loop would steal a core from the workload under test. A request that errors or answers
 * non-200 is counted as a failure (and its latency still recorded).
 */
export function startProbe(url, { intervalMs = 10, headers = {} } = {}) {
  const agent = new Agent({ connections: 1, pipelining: 1 });
  const latencies = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = now();
      try {
        const res = await request(url, { dispatcher: agent, headers });
        await res.body.text();
        if (res.statusCode !== 200) failures++;
      } catch {
        failures++;
      }
      latencies.push(now() - t);
      await sleep(intervalMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await agent.close();
      return summarize(latencies, failures);
    },
  };
}

/** p50/p99/max of latencies in ms. */
export function summarize(latencies, failures = 0) {
  return {
    requests: latencies.length,
    failures,
    p50_ms: round(quantile(latencies, 0.5), 2),
    p99_ms: round(quantile(latencies, 0.99), 2),
    max_ms: round(latencies.length ? Math.max(...latencies) : NaN, 2),
  };
}

/** Peak resident set size (VmHWM) of a live process in MB, or undefined. */
export function peakRssMb(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 1) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) of one process from /proc, or 0 when it is gone. */
function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line (12 and 13 after the name), in ticks.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Every live process: pid, parent pid and command name. */
function processTable() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(name), ppid, comm });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/**
 * CPU seconds used so far by the processes `pids` themselves, by their live descendants (spawner
 * helpers; short-lived step processes are not counted), by every PostgreSQL server process and by
 * the Redis server on this machine. Take one reading before and one after the work; `cpuSpent`
 * subtracts them.
 */
export function cpuReading(pids) {
  const roots = new Set(Array.isArray(pids) ? pids : [pids]);
  const table = processTable();
  const kids = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) if (!kids.has(p.pid) && kids.has(p.ppid)) (kids.add(p.pid), (grew = true));
  }
  let self = 0;
  let descendants = 0;
  for (const k of kids) {
    if (roots.has(k)) self += cpuSecondsOf(k);
    else descendants += cpuSecondsOf(k);
  }
  // Per process: server processes come and go (a pool closes idle connections).
  const postgres = new Map();
  const redis = new Map();
  for (const p of table) {
    if (p.comm === 'postgres') postgres.set(p.pid, cpuSecondsOf(p.pid));
    else if (p.comm === 'redis-server') redis.set(p.pid, cpuSecondsOf(p.pid));
  }
  return { self, descendants, postgres, redis };
}

/** CPU seconds of the processes of `after` since `before` (a process that exited in between loses its share). */
function spentByPid(before, after) {
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}

/** CPU seconds between two readings. */
export function cpuSpent(before, after) {
  const d = (v) => round(Math.max(0, v), 2);
  return { self: d(after.self - before.self), descendants: d(after.descendants - before.descendants), postgres: d(spentByPid(before.postgres, after.postgres)), redis: d(spentByPid(before.redis, after.redis)) };
}

/** One log line of cpuSpent for `runs` runs. */
export function describeCpu(cpu, runs, who = 'daemon') {
  const per = (s) => round((s * 1000) / runs, 1);
  return `CPU: ${who} ${cpu.self} s (${per(cpu.self)} ms/run), its helpers ${cpu.descendants} s (${per(cpu.descendants)} ms/run), PostgreSQL server ${cpu.postgres} s (${per(cpu.postgres)} ms/run), Redis ${cpu.redis} s (${per(cpu.redis)} ms/run)`;
}
