/**
 * Load test of the real daemon on loopback (`npm run test:load`; not part of `npm test`).
 *
 * 100 concurrent autocannon connections for LOAD_SECONDS (default 30) mixing reads (runs list,
 * vulnerabilities of a workspace, stats) with writes (vulnerability creation, run creation of a
 * fast echo module with `server.max_concurrent_runs: 2`, so runs queue and execute while the load
 * goes on), while a separate `osm run` CLI process keeps writing runs into the same database (the
 * only way two SQLite connections compete for the write lock). Asserts 0 non-2xx answers, 0 socket
 * errors or timeouts, every CLI run completed, and no `SQLITE_BUSY` / `database is locked` in the
 * daemon's log or anywhere in the database. Prints req/s and p50/p99 latency per endpoint.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Table from 'cli-table3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BIN, cleanEnv, configSet, dbPathOf, ensureBuilt, integrityCheck, killAllDaemons, startDaemon, stopDaemon, type Daemon } from '../helpers/daemon.js';

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}
interface CannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  duration: number;
}
interface CannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
type Cannon = (opts: Record<string, unknown>) => Promise<CannonResult>;
// autocannon ships no type declarations: the few fields used here are declared above.
const autocannon = createRequire(import.meta.url)('autocannon') as Cannon;

const SECONDS = Number(process.env.LOAD_SECONDS ?? 30);
const WS = 'load-ws.io';
const BUSY = /SQLITE_BUSY|database is locked/i;

let tmp: string;
let wf: string;
let daemon: Daemon;

beforeAll(async () => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wf = path.join(tmp, 'wf');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  fs.writeFileSync(path.join(wf, 'modules', 'load-echo.yaml'), 'kind: module\nname: load-echo\nsteps:\n  - name: hi\n    type: bash\n    command: echo "hi {{Target}}"\n');
  configSet(tmp, { 'server.max_concurrent_runs': 2 });
  daemon = await startDaemon(tmp, { workflows: wf });
  for (let i = 0; i < 50; i++) {
    const r = await api(daemon, 'POST', '/osm/api/vulnerabilities', { workspace: WS, vuln_info: `seed-${i}`, vuln_title: `Seed ${i}`, severity: ['critical', 'high', 'medium', 'low', 'info'][i % 5], asset_value: `s${i}.${WS}` });
    expect(r.status).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await killAllDaemons();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

/** `osm run` in its own process, again and again until `until`: a second writer on the same database. */
async function cliWriter(until: number): Promise<{ runs: number; failures: string[] }> {
  const failures: string[] = [];
  let runs = 0;
  while (Date.now() < until) {
    const n = runs++;
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, '-b', tmp, '-F', wf, 'run', '-m', 'load-echo', '-t', `cli${n}.load-cli.io`, '-q'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.stderr.on('data', (c: Buffer) => (text += c.toString()));
      child.on('close', (code) => resolve({ code, text }));
    });
    if (out.code !== 0) failures.push(`cli run ${n} exited ${out.code}: ${out.text.slice(-500)}`);
  }
  return { runs, failures };
}

describe('daemon under load', () => {
  it(`100 connections for ${SECONDS}s: no errors, no SQLITE_BUSY`, async () => {
    const headers = { 'x-osm-api-key': daemon.apiKey, 'content-type': 'application/json' };
    let vulnSeq = 0;
    let runSeq = 0;
    const endpoints: { name: string; connections: number; requests: CannonRequest[]; setup?: (req: CannonRequest) => CannonRequest }[] = [
      { name: 'GET /osm/api/runs', connections: 25, requests: [{ method: 'GET', path: '/osm/api/runs?limit=20' }] },
      { name: 'GET /osm/api/vulnerabilities?workspace=…', connections: 25, requests: [{ method: 'GET', path: `/osm/api/vulnerabilities?workspace=${WS}&limit=50` }] },
      { name: 'GET /osm/api/stats', connections: 20, requests: [{ method: 'GET', path: '/osm/api/stats' }] },
      {
        name: 'POST /osm/api/vulnerabilities',
        connections: 20,
        requests: [{ method: 'POST', path: '/osm/api/vulnerabilities' }],
        setup: (req) => {
          const i = vulnSeq++;
          return { ...req, body: JSON.stringify({ workspace: WS, vuln_info: `load-${i}`, vuln_title: `Load ${i}`, severity: ['high', 'medium', 'low'][i % 3], asset_value: `v${i}.${WS}`, tags: ['load'] }) };
        },
      },
      {
        name: 'POST /osm/api/runs',
        connections: 10,
        requests: [{ method: 'POST', path: '/osm/api/runs' }],
        setup: (req) => ({ ...req, body: JSON.stringify({ module: 'load-echo', target: `r${runSeq++}.load-test.io` }) }),
      },
    ];
    expect(endpoints.reduce((n, e) => n + e.connections, 0)).toBe(100);

    const cli = cliWriter(Date.now() + SECONDS * 1000);
    const results = await Promise.all(
      endpoints.map((e) =>
        autocannon({
          url: daemon.url,
          connections: e.connections,
          duration: SECONDS,
          timeout: 30,
          headers,
          requests: e.requests.map((r) => (e.setup ? { ...r, setupRequest: e.setup } : r)),
        }),
      ),
    );
    const writer = await cli;

    const table = new Table({ style: { head: [], border: [] }, head: ['endpoint', 'conns', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'timeouts'] });
    endpoints.forEach((e, i) => {
      const r = results[i]!;
      table.push([e.name, e.connections, r.requests.total, r.requests.average.toFixed(0), r.latency.p50, r.latency.p99, r.latency.max, r.non2xx, r.errors, r.timeouts]);
    });
    const total = results.reduce((n, r) => n + r.requests.total, 0);
    process.stdout.write(`\n${table.toString()}\n${total} requests in ${SECONDS}s (${(total / SECONDS).toFixed(0)} req/s overall); CLI writer: ${writer.runs} runs\n`);

    for (const [i, r] of results.entries()) {
      const name = endpoints[i]!.name;
      expect(r.requests.total, name).toBeGreaterThan(0);
      expect(r.errors, name).toBe(0);
      expect(r.timeouts, name).toBe(0);
      expect(r.non2xx, `${name}: ${JSON.stringify(r.statusCodeStats)}`).toBe(0);
    }
    expect(writer.failures).toEqual([]);
    expect(writer.runs).toBeGreaterThan(0);

    // The queued runs keep executing; a graceful stop, then the evidence.
    const stats = await api(daemon, 'GET', `/osm/api/vulnerabilities?workspace=${WS}&limit=1`);
    // Every answered creation is stored; requests still in flight when autocannon stopped counting
    // (at most one per connection) may be stored too.
    expect(stats.json.pagination.total).toBeGreaterThanOrEqual(50 + results[3]!.requests.total);
    expect(stats.json.pagination.total).toBeLessThanOrEqual(50 + vulnSeq);
    await stopDaemon(daemon);
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.output().split('\n').filter((l) => BUSY.test(l))).toEqual([]);

    const dbPath = dbPathOf(tmp);
    expect(await integrityCheck(dbPath)).toBe('ok');
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const like = (table: string, column: string) => (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} LIKE '%SQLITE_BUSY%' OR ${column} LIKE '%database is locked%'`).get() as { n: number }).n;
      expect(like('runs', 'error_message')).toBe(0);
      expect(like('step_results', 'error_message')).toBe(0);
      expect(like('step_results', 'output')).toBe(0);
      expect(like('event_logs', 'data')).toBe(0);
      const cliRuns = db.prepare("SELECT status, count(*) AS n FROM runs WHERE trigger_type = 'cli' GROUP BY status").all() as { status: string; n: number }[];
      expect(cliRuns).toEqual([{ status: 'completed', n: writer.runs }]);
      const failed = (db.prepare("SELECT count(*) AS n FROM runs WHERE status = 'failed'").get() as { n: number }).n;
      expect(failed).toBe(0);
    } finally {
      db.close();
    }
  }, (SECONDS + 120) * 1000);
});
