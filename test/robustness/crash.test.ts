/**
 * Crash safety of the real daemon (`kill -9`, no chance to clean up), with
 * `server.max_concurrent_runs: 1`:
 *
 * 1. A run that ingested assets and then sleeps (a unique `sleep 30.<marker>`), three runs queued
 *    behind it. The daemon and its spawner processes are killed with SIGKILL together (frozen
 *    first, so the spawners cannot kill the step groups they started): the sleep is orphaned.
 *    After a restart: the interrupted run is `failed` saying the daemon stopped, its running step
 *    failed, the orphaned sleep is killed by the reconciliation, every process the old daemon
 *    started is gone, `PRAGMA integrity_check` is ok, every asset ingested before the kill is
 *    still there, the queued runs complete and no run is left `running`.
 * 2. `POST /runs/{id}/resume` on that interrupted run continues from its first unfinished step:
 *    the completed steps are reused (not executed again) with their exports.
 * 3. kill -9 of the daemon alone while a step sleeps: the step's process group does not outlive
 *    it (its spawner kills it), and the restart fails the run.
 * 4. kill -9 in the middle of a 200 000-line import in a function step. The importer commits one
 *    transaction per batch of 10 000 rows, so what must survive is exactly the committed batches:
 *    after the restart the asset count is a multiple of 10 000, at least what was visible (i.e.
 *    committed) before the kill, below 200 000 (the kill landed mid-import), equal to the
 *    workspace's asset counter, and the database is intact. No partial batch, nothing lost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api, configSet, dbPathOf, descendants, ensureBuilt, integrityCheck, killAllDaemons, killDaemon, killDaemonTree, pgidOf, pgrep, processAlive, reapMarker, startDaemon, until, type Daemon,
} from '../helpers/daemon.js';
import { DEFAULT_BATCH } from '../../src/ingest/importer.js';

const BATCH = 10_000;
const BIG_LINES = 200_000;
const MARKER = `30.${Date.now() % 10_000_000}`.padEnd(10, '7');
const MARKER2 = `30.9${Date.now() % 1_000_000}`.padEnd(10, '5');

let tmp: string;
let wf: string;
let flag: string;
let daemon: Daemon | undefined;
const markers: string[] = [MARKER, MARKER2];

/** httpx-style JSONL: one distinct host per line. */
function writeHttpx(file: string, count: number, domain: string): string[] {
  const hosts: string[] = [];
  const fd = fs.openSync(file, 'w');
  let chunk = '';
  for (let i = 0; i < count; i++) {
    const host = `h${i}.${domain}`;
    hosts.push(host);
    chunk += `${JSON.stringify({ url: `https://${host}`, input: host, host, status_code: 200, title: `title ${i}`, tech: ['nginx'], a: ['10.0.0.1'], webserver: 'nginx' })}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return hosts;
}

function module(name: string, body: string): void {
  fs.writeFileSync(path.join(wf, 'modules', `${name}.yaml`), `kind: module\nname: ${name}\nsteps:\n${body}`);
}

async function runOf(d: Daemon, uuid: string): Promise<Record<string, any>> {
  const r = await api(d, 'GET', `/osm/api/runs/${uuid}`);
  expect(r.status).toBe(200);
  return r.json.data;
}

async function finished(d: Daemon, uuid: string): Promise<Record<string, any>> {
  return until(async () => {
    const r = await runOf(d, uuid);
    return ['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  }, `run ${uuid} to finish`);
}

let smallHosts: string[];
let bigFile: string;

beforeAll(() => {
  ensureBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'osm-test-'));
  wf = path.join(tmp, 'wf');
  flag = path.join(tmp, 'resume-flag');
  fs.mkdirSync(path.join(wf, 'modules'), { recursive: true });
  const small = path.join(tmp, 'httpx-small.jsonl');
  smallHosts = writeHttpx(small, 25, 'crash-test.io');
  bigFile = path.join(tmp, 'httpx-big.jsonl');
  writeHttpx(bigFile, BIG_LINES, 'big-test.io');
  module(
    'crash-ingest',
    [
      '  - name: ingest',
      '    type: function',
      `    function: db_import_asset_from_file("{{Workspace}}", "${small}")`,
      '  - name: note',
      '    type: bash',
      '    command: echo ran >> "{{Output}}/note-count.txt"',
      '    exports:',
      '      token: "tok-{{Target}}"',
      '  - name: nap',
      '    type: bash',
      `    command: test -f "${flag}" && echo "resumed token={{token}}" || sleep ${MARKER}`,
      '',
    ].join('\n'),
  );
  module('crash-nap', `  - name: nap\n    type: bash\n    command: sleep ${MARKER2}\n`);
  module('crash-echo', '  - name: hi\n    type: bash\n    command: echo "hi {{Target}}"\n');
  module('big-ingest', `  - name: import\n    type: function\n    function: db_import_asset_from_file("{{Workspace}}", "${bigFile}")\n`);
  configSet(tmp, { 'server.max_concurrent_runs': 1 });
}, 180_000);

afterAll(async () => {
  await killAllDaemons();
  for (const m of markers) reapMarker(m);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('kill -9 of the daemon', () => {
  let interrupted: Record<string, any>;

  it('fails the interrupted run, kills its orphans, keeps ingested assets and runs the queued runs', async () => {
    const first = await startDaemon(tmp, { workflows: wf });
    const long = await api(first, 'POST', '/osm/api/runs', { module: 'crash-ingest', target: 'a.crash-test.io', priority: 'critical' });
    expect(long.status).toBe(202);
    const uuid = long.json.run_uuid as string;
    const run = await until(async () => {
      const r = await runOf(first, uuid);
      return r.status === 'running' && r.current_pid > 0 && pgrep(MARKER).length > 0 ? r : undefined;
    }, 'the sleep step to run');
    const assetsBefore = await api(first, 'GET', `/osm/api/assets?workspace=${run.workspace}&limit=1000`);
    expect(assetsBefore.json.data.map((a: { asset_value: string }) => a.asset_value).sort()).toEqual([...smallHosts].sort());

    const queued: string[] = [];
    for (const target of ['q1.crash-test.io', 'q2.crash-test.io', 'q3.crash-test.io']) {
      const res = await api(first, 'POST', '/osm/api/runs', { module: 'crash-echo', target });
      expect(res.status).toBe(202);
      queued.push(res.json.run_uuid);
    }
    for (const q of queued) expect((await runOf(first, q)).status).toBe('queued');

    const spawned = descendants(first.pid);
    const stepGroups = new Set(pgrep(MARKER).map(pgidOf));
    expect(stepGroups.size).toBe(1);
    // kill -9 of the daemon AND its spawner processes (which would otherwise kill the step groups
    // they started when the daemon disappears): nothing is left to clean up but the next start.
    const helpers = await killDaemonTree(first, stepGroups);
    expect(helpers.length).toBeGreaterThan(0);
    const orphaned = pgrep(MARKER);
    expect(orphaned.length).toBeGreaterThan(0);

    daemon = await startDaemon(tmp, { workflows: wf });
    expect(daemon.output()).toMatch(/1 interrupted run\(s\) marked failed/);
    interrupted = await runOf(daemon, uuid);
    expect(interrupted.status).toBe('failed');
    expect(interrupted.error_message).toMatch(/daemon stopped/);
    expect(interrupted.current_pid).toBe(0);
    const steps = (await api(daemon, 'GET', `/osm/api/runs/${uuid}/steps`)).json.data as { step_name: string; status: string; error_message: string }[];
    expect(steps.map((s) => [s.step_name, s.status])).toEqual([['ingest', 'completed'], ['note', 'completed'], ['nap', 'failed']]);
    expect(steps[2]!.error_message).toMatch(/stopped/);

    await until(() => pgrep(MARKER).length === 0 && orphaned.every((pid) => !processAlive(pid)), 'the orphaned sleep to be killed', 15_000);
    await until(() => spawned.every((pid) => !processAlive(pid)), 'every process of the killed daemon to be gone', 15_000);
    expect(await integrityCheck(dbPathOf(tmp))).toBe('ok');

    const assetsAfter = await api(daemon, 'GET', `/osm/api/assets?workspace=${run.workspace}&limit=1000`);
    expect(assetsAfter.json.data.map((a: { asset_value: string }) => a.asset_value).sort()).toEqual([...smallHosts].sort());

    for (const q of queued) expect((await finished(daemon, q)).status).toBe('completed');
    const stillRunning = await api(daemon, 'GET', '/osm/api/runs?status=running');
    expect(stillRunning.json.pagination.total).toBe(0);
  });

  it('POST /runs/{id}/resume continues the interrupted run, reusing its completed steps and exports', async () => {
    expect(interrupted?.status).toBe('failed');
    const d = daemon!;
    fs.writeFileSync(flag, 'go\n');
    const res = await api(d, 'POST', `/osm/api/runs/${interrupted.run_uuid}/resume`);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ message: 'Run resumed', original_run_uuid: interrupted.run_uuid, reused_steps: ['ingest', 'note'] });
    const resumed = await finished(d, res.json.run_uuid);
    expect(resumed.status).toBe('completed');
    const steps = (await api(d, 'GET', `/osm/api/runs/${resumed.run_uuid}/steps`)).json.data as { step_name: string; status: string; output: string }[];
    const nap = steps.find((s) => s.step_name === 'nap')!;
    expect(nap.status).toBe('completed');
    // The export of a reused step is restored for the steps that run again.
    expect(nap.output).toContain('resumed token=tok-a.crash-test.io');
    // The reused steps did not run again: one note line, one import of the fixture.
    const ws = (await api(d, 'GET', `/osm/api/workspaces/${interrupted.workspace}`)).json.data;
    expect(fs.readFileSync(path.join(tmp, 'workspaces', interrupted.workspace, 'note-count.txt'), 'utf8')).toBe('ran\n');
    expect(ws.total_assets).toBe(smallHosts.length);
    const imports = await api(d, 'GET', `/osm/api/event-logs?workspace=${interrupted.workspace}&topic=asset.import`);
    expect(imports.json.pagination.total).toBe(1);
    // The original keeps its terminal status.
    expect((await runOf(d, interrupted.run_uuid)).status).toBe('failed');
  });

  it('kill -9 of the daemon alone: its step processes do not outlive it', async () => {
    const d = daemon!;
    const res = await api(d, 'POST', '/osm/api/runs', { module: 'crash-nap', target: 'nap.crash-test.io' });
    expect(res.status).toBe(202);
    const uuid = res.json.run_uuid as string;
    await until(async () => (await runOf(d, uuid)).status === 'running' && pgrep(MARKER2).length > 0, 'the sleep to run');
    const spawned = descendants(d.pid);
    await killDaemon(d);
    await until(() => pgrep(MARKER2).length === 0 && spawned.every((pid) => !processAlive(pid)), 'every process of the killed daemon to be gone', 15_000);
    daemon = await startDaemon(tmp, { workflows: wf });
    const run = await runOf(daemon, uuid);
    expect(run.status).toBe('failed');
    expect(run.error_message).toMatch(/daemon stopped/);
    expect(await integrityCheck(dbPathOf(tmp))).toBe('ok');
  });

  it('keeps exactly the committed batches of an import interrupted by kill -9', async () => {
    const d = daemon!;
    const res = await api(d, 'POST', '/osm/api/runs', { module: 'big-ingest', target: 'x.big-test.io' });
    expect(res.status).toBe(202);
    const uuid = res.json.run_uuid as string;
    // The import runs inside the daemon's event loop: watch its commits from the database itself.
    const reader = new Database(dbPathOf(tmp), { readonly: true, fileMustExist: true });
    let committed = 0;
    try {
      const count = reader.prepare("SELECT count(*) AS n FROM assets WHERE workspace = 'big-test.io'");
      const status = reader.prepare('SELECT status FROM runs WHERE run_uuid = ?');
      await until(
        () => {
          committed = (count.get() as { n: number }).n;
          const s = (status.get(uuid) as { status: string } | undefined)?.status;
          if (s && s !== 'running' && s !== 'queued') throw new Error(`the import run ended (${s}) before it could be interrupted`);
          return committed >= BATCH;
        },
        'the first batch to be committed',
        60_000,
      );
      await killDaemon(d);
    } finally {
      reader.close();
    }
    expect(committed).toBeLessThan(BIG_LINES);

    daemon = await startDaemon(tmp, { workflows: wf });
    expect(await integrityCheck(dbPathOf(tmp))).toBe('ok');
    const run = await runOf(daemon, uuid);
    expect(run.status).toBe('failed');
    expect(run.error_message).toMatch(/daemon stopped/);
    const assets = await api(daemon, 'GET', '/osm/api/assets?workspace=big-test.io&limit=1');
    const total = assets.json.pagination.total as number;
    // Whole transactions only: a multiple of the importer's asset batch.
    expect(total % DEFAULT_BATCH.asset).toBe(0);
    expect(total).toBeGreaterThanOrEqual(committed);
    expect(total).toBeLessThan(BIG_LINES);
    const ws = (await api(daemon, 'GET', '/osm/api/workspaces/big-test.io')).json.data;
    expect(ws.total_assets).toBe(total);
    await killDaemon(daemon);
  });
});
