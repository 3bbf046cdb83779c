/**
 * Starts the real daemon (`node bin/osm.js -b <base> -F <workflows> serve --port 0`) on a temp
 * base folder, reads its API key from the settings file, and talks to it with undici.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import YAML from 'yaml';
import { OSM, ROOT, now, osm } from './common.mjs';

/** Sets settings with `osm config set` (creates the settings file on first use). */
export async function configSet(base, pairs) {
  for (const [key, value] of Object.entries(pairs)) await osm(['-b', base, 'config', 'set', key, String(value)]);
}

/** The API key the daemon expects, read from `<base>/osm-settings.yaml`. */
export function apiKeyOf(base) {
  const doc = YAML.parse(readFileSync(path.join(base, 'osm-settings.yaml'), 'utf8'));
  const key = doc?.server?.auth_api_key;
  if (!key) throw new Error(`no server.auth_api_key in ${base}/osm-settings.yaml`);
  return String(key);
}

/**
 * Spawns the daemon and resolves once it prints its URL. Its stdout (one log line per request)
 * is drained continuously so logging never blocks it; the last lines are kept for errors.
 * `startMs` is the time from spawn to the "listening" line. `env` adds environment variables.
 */
export function startDaemon(base, workflows, extraArgs = [], env = {}) {
  return new Promise((resolve, reject) => {
    const started = now();
    // BENCH_DAEMON_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the daemon.
    const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const args = [...nodeArgs, OSM, '-b', base, ...(workflows ? ['-F', workflows] : []), 'serve', '--host', '127.0.0.1', '--port', '0', ...extraArgs];
    // BENCH_SERVE_ARGS="--no-hot-reload" runs an experiment (the reported figures use defaults).
    args.push(...(process.env.BENCH_SERVE_ARGS ?? '').split(' ').filter(Boolean));
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let url = '';
    let banner = '';
    const onData = (chunk) => {
      tail = (tail + chunk.toString('utf8')).slice(-20_000);
      if (!url) {
        const m = /listening on \S+ \((http:\/\/[^)]+)\)/.exec(tail);
        if (m) {
          url = m[1];
          // The banner is printed in one write; give the rest of it a moment to arrive.
          setTimeout(() => {
            banner = tail;
            resolve(daemonHandle(child, base, url, now() - started, () => tail, banner));
          }, 20);
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (!url) reject(new Error(`daemon exited (${code ?? signal}) before listening:\n${tail}`));
    });
  });
}

function daemonHandle(child, base, url, startMs, tail, banner) {
  const key = apiKeyOf(base);
  const headers = { 'x-osm-api-key': key, 'content-type': 'application/json' };
  const api = async (method, p, body) => {
    const res = await request(`${url}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    if (res.statusCode >= 400) throw new Error(`${method} ${p} → ${res.statusCode}: ${text.slice(0, 500)}`);
    return json;
  };
  return {
    child,
    url,
    key,
    headers,
    startMs,
    banner,
    tail,
    pid: child.pid,
    api,
    /** SIGTERM, then wait for the exit (SIGKILL after 15 s). */
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then wait for the exit (SIGKILL after `graceMs`). */
export function stopChild(child, graceMs = 15_000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Polls `/osm/api/jobs/<id>` until no run is pending or running; returns the last answer. */
export async function waitJob(daemon, jobId, pollMs = 100) {
  for (;;) {
    const j = await daemon.api('GET', `/osm/api/jobs/${jobId}`);
    if (j.pending === 0 && j.running === 0) return j;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
