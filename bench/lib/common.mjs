/**
 * Shared helpers of the benchmarks: temp folders, timed child processes (wall time and peak RSS),
 * percentiles, machine description and the scale factor. Plain ESM JavaScript: the benchmarks
 * run the built CLI (`bin/osm.js` → `dist/`), never the TypeScript sources.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OSM = path.join(ROOT, 'bin', 'osm.js');
export const DIST = path.join(ROOT, 'dist');
export const TIME_BIN = existsSync('/usr/bin/time') ? '/usr/bin/time' : '';

/** The size multiplier (BENCH_SCALE=0.1 for quick runs); reported figures come from 1. */
export function scale() {
  const s = Number(process.env.BENCH_SCALE ?? '1');
  return Number.isFinite(s) && s > 0 ? s : 1;
}

/** `n` scaled, at least `min`. */
export function scaled(n, min = 1) {
  return Math.max(min, Math.round(n * scale()));
}

/** A fresh temp folder and its cleanup (kept when BENCH_KEEP=1, for debugging). */
export function tempDir(prefix = 'osm-bench-') {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    dir,
    cleanup: () => {
      if (process.env.BENCH_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const now = () => performance.now();

/** The q-quantile (0..1) of numbers, nearest-rank. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** Median of numbers. */
export const median = (values) => quantile(values, 0.5);

/** Rounds to `d` decimals (numbers stay numbers in the JSON). */
export function round(n, d = 2) {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** d;
  return Math.round(n * f) / f;
}

/** Reads `/usr/bin/time -f` output written to `file`: peak RSS in KB and wall seconds. */
function readTimeFile(file) {
  try {
    const text = readFileSync(file, 'utf8').trim().split('\n').pop() ?? '';
    const m = /^BENCHTIME (\d+) ([\d.]+)$/.exec(text);
    return m ? { maxRssKb: Number(m[1]), wallS: Number(m[2]) } : {};
  } catch {
    return {};
  }
}

/**
 * Runs a program to completion and measures its wall time (ms) in this process and, when
 * /usr/bin/time exists, its peak RSS. Rejects when it exits non-zero (with its stderr), so a
 * broken build never produces a figure.
 */
export function runTimed(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const timeFile = TIME_BIN ? path.join(os.tmpdir(), `osm-bench-time-${process.pid}-${Math.random().toString(36).slice(2)}`) : '';
    const argv = TIME_BIN ? ['-o', timeFile, '-f', 'BENCHTIME %M %e', cmd, ...args] : args;
    const started = now();
    const child = spawn(TIME_BIN || cmd, argv, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...(opts.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    let outSize = 0;
    child.stdout.on('data', (c) => {
      // Keep at most the last ~8 MB of stdout: enough for JSON results, bounded for chatty runs.
      out.push(c);
      outSize += c.length;
      while (outSize > 8 * 1024 * 1024 && out.length > 1) outSize -= out.shift().length;
    });
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = now() - started;
      const t = timeFile ? readTimeFile(timeFile) : {};
      if (timeFile) rmSync(timeFile, { force: true });
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code !== 0 && !opts.allowFailure) {
        reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}:\n${stderr.slice(-2000)}${stdout.slice(-1000)}`));
        return;
      }
      resolve({ ms, code, stdout, stderr, maxRssKb: t.maxRssKb });
    });
  });
}

/** Runs the built CLI (`node bin/osm.js …`), timed. */
export function osm(args, opts = {}) {
  return runTimed(process.execPath, [OSM, ...args], opts);
}

/** The machine as the results record it: CPUs, memory, node, load average at the time of the call. */
export function machineInfo() {
  const cpus = os.cpus();
  const load = os.loadavg();
  return {
    hostname: os.hostname(),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpu_count: cpus.length,
    cpu_mhz: cpus[0]?.speed ?? 0,
    cpus: cpus.map((c) => ({ model: c.model, speed: c.speed })),
    memory_total_mb: Math.round(os.totalmem() / 1024 / 1024),
    memory_free_mb: Math.round(os.freemem() / 1024 / 1024),
    node: process.version,
    loadavg: load.map((l) => round(l, 2)),
    busy: isBusy(load),
  };
}

/** A machine is "busy" when the 1-minute load is above half its core count (others are running tests). */
export function isBusy(load = os.loadavg()) {
  return load[0] > os.cpus().length * 0.5;
}

/** Waits `ms` milliseconds. */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the 1-minute load average drops below `max` (or `timeoutMs` passes), so a
 * benchmark does not start while other engineers' test suites saturate the machine.
 * Returns the load seen at the end.
 */
export async function waitForQuiet(max = os.cpus().length * 0.75, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (os.loadavg()[0] > max && Date.now() < end) await sleep(2000);
  return os.loadavg()[0];
}

/** Formats a number for the table: thousands separators, `d` decimals. */
export function fmt(n, d = 1) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(n);
  return n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: 0 });
}

/** Writes `n` host names `host-000000.<domain>` to `file`, one per line, streamed. */
export async function writeHostLines(file, n, domain) {
  const { createWriteStream } = await import('node:fs');
  const { finished } = await import('node:stream/promises');
  const out = createWriteStream(file);
  for (let i = 0; i < n; i++) {
    if (!out.write(`host-${String(i).padStart(6, '0')}.${domain}\n`)) await new Promise((r) => out.once('drain', r));
  }
  out.end();
  await finished(out);
}
