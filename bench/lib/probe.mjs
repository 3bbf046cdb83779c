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
 * CPU seconds used so far by `pid` itself, by its live descendants (spawner helpers; short-lived
 * step processes are not counted), and by every PostgreSQL server process on this machine.
 * Take one reading before and one after the work; `cpuSpent` subtracts them.
 */
export function cpuReading(pid) {
  const table = processTable();
  const kids = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) if (!kids.has(p.pid) && kids.has(p.ppid)) (kids.add(p.pid), (grew = true));
  }
  kids.delete(pid);
  let descendants = 0;
  for (const k of kids) descendants += cpuSecondsOf(k);
  let postgres = 0;
  for (const p of table) if (p.comm === 'postgres') postgres += cpuSecondsOf(p.pid);
  return { self: cpuSecondsOf(pid), descendants, postgres };
}

/** CPU seconds between two readings (a process that exited in between loses its share). */
export function cpuSpent(before, after) {
  return { self: round(after.self - before.self, 2), descendants: round(Math.max(0, after.descendants - before.descendants), 2), postgres: round(Math.max(0, after.postgres - before.postgres), 2) };
}

/** One log line of cpuSpent for `runs` runs. */
export function describeCpu(cpu, runs) {
  const per = (s) => round((s * 1000) / runs, 1);
  return `CPU: daemon ${cpu.self} s (${per(cpu.self)} ms/run), its helpers ${cpu.descendants} s, PostgreSQL server ${cpu.postgres} s (${per(cpu.postgres)} ms/run)`;
}
