/**
 * Graceful shutdown of the real daemon. SIGTERM (then, on the same base folder, SIGINT) while a
 * `sleep 30.<marker>` run executes: new requests are refused (connection refused/reset or 503),
 * never left hanging; the run is recorded `cancelled`; every process the daemon started is gone;
 * the database is closed cleanly (its WAL checkpointed and removed); the process exits with code 0
 * — the daemon's own 10 s watchdog exits with code 1, so code 0 also means "within 10 s". The next
 * start finds a clean database: integrity ok, nothing running, nothing to reconcile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, configSet, dbPathOf, descendants, ensureBuilt, integrityCheck, killAllDaemons, pgrep, processAlive, reapMarker, startDaemon, until, type Daemon } from '../helpers/daemon.js';

let tmp: string;
let wf: string;
const markers: string[] = [];

beforeAll(() => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wf = path.join(tmp, 'wf');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  configSet(tmp, { 'server.max_concurrent_runs': 2 });
}, 180_000);

afterAll(async () => {
  await killAllDaemons();
  for (const m of markers) reapMarker(m);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

type Probe = { kind: 'refused'; code: string } | { kind: 'status'; status: number };

/** One request during shutdown: how it was turned away. A hang ends in a timeout, which fails the test. */
async function probe(d: Daemon): Promise<Probe> {
  try {
    const res = await fetch(`${d.url}/osm/api/runs`, { headers: { 'x-osm-api-key': d.apiKey }, signal: AbortSignal.timeout(8000) });
    await res.arrayBuffer().catch(() => undefined);
    return { kind: 'status', status: res.status };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') throw new Error('a request during shutdown hung');
    return { kind: 'refused', code: e.cause?.code ?? e.message };
  }
}

function runRow(dbPath: string, uuid: string): { status: string; error_message: string; current_pid: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT status, error_message, current_pid FROM runs WHERE run_uuid = ?').get(uuid) as { status: string; error_message: string; current_pid: number };
  } finally {
    db.close();
  }
}

function countRunning(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM runs WHERE status IN ('running', 'pending')").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to the daemon', (signal) => {
  it('refuses new requests, cancels the running run, kills its children, closes the database and exits 0', async () => {
    const marker = `30.${signal === 'SIGTERM' ? 1 : 2}${Date.now() % 1_000_000}`.padEnd(10, '3');
    markers.push(marker);
    fs.writeFileSync(path.join(wf, 'modules', `nap-${signal}.yaml`), `kind: module\nname: nap-${signal}\nsteps:\n  - name: nap\n    type: bash\n    command: sleep ${marker}\n`);
    const d = await startDaemon(tmp, { workflows: wf });
    // Every start on this base folder finds nothing to reconcile: the previous stop was clean.
    expect(d.output()).toMatch(/0 interrupted run\(s\) marked failed/);
    const res = await api(d, 'POST', '/osm/api/runs', { module: `nap-${signal}`, target: `${signal.toLowerCase()}.shutdown-test.io` });
    expect(res.status).toBe(202);
    const uuid = res.json.run_uuid as string;
    await until(async () => {
      const r = (await api(d, 'GET', `/osm/api/runs/${uuid}`)).json.data;
      return r.status === 'running' && r.current_pid > 0 && pgrep(marker).length > 0;
    }, 'the sleep to run');
    const spawned = descendants(d.pid);
    expect(spawned.length).toBeGreaterThan(0);

    d.child.kill(signal);
    await until(() => /"msg":"shutting down"/.test(d.output()) || !d.alive(), 'the daemon to start shutting down', 10_000);
    const probes: Probe[] = [];
    // At least one probe, and more for as long as the daemon is still stopping.
    do {
      probes.push(await probe(d));
      await new Promise((r) => setTimeout(r, 50));
    } while (d.alive());
    const exit = await d.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    for (const p of probes) {
      if (p.kind === 'status') expect(p.status).toBe(503);
      else expect(p.code).toMatch(/ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|other side closed|fetch failed/);
    }

    await until(() => pgrep(marker).length === 0, 'the sleep to be gone', 5000);
    await until(() => spawned.every((pid) => !processAlive(pid)), 'every child of the daemon to be gone', 5000);
    const db = dbPathOf(tmp);
    const row = runRow(db, uuid);
    expect(row.status).toBe('cancelled');
    expect(row.current_pid).toBe(0);
    expect(countRunning(db)).toBe(0);
    // The last connection closed cleanly: SQLite checkpointed the WAL and removed it.
    expect(fs.existsSync(`${db}-wal`) ? fs.statSync(`${db}-wal`).size : 0).toBe(0);
    expect(await integrityCheck(db)).toBe('ok');
  });
});

describe('after both shutdowns', () => {
  // Also the regression test of a SIGTERM that lands right after start: the settings watcher was
  // still loading, got created after close() and kept the process alive for ever.
  it('a new start sees a clean database; a SIGTERM right after start still exits 0', async () => {
    const d = await startDaemon(tmp, { workflows: wf });
    expect(d.output()).toMatch(/0 interrupted run\(s\) marked failed/);
    const running = await api(d, 'GET', '/osm/api/runs?status=running');
    expect(running.json.pagination.total).toBe(0);
    const cancelled = await api(d, 'GET', '/osm/api/runs?status=cancelled');
    expect(cancelled.json.pagination.total).toBe(2);
    d.child.kill('SIGTERM');
    expect(await d.exited).toEqual({ code: 0, signal: null });
  });
});
