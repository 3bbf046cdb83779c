/**
 * Latency probes: a paced loop of GET requests (one in flight at a time, `intervalMs` apart) that
 * records every latency, and the peak RSS of a running process from /proc.
 */
import { readFileSync } from 'node:fs';
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
