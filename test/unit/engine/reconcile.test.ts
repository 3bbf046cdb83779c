import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createAppContext } from '../../../src/services/context.js';
import { RunQueue } from '../../../src/engine/queue.js';
import { isAlive, processStartTime, sameProcess } from '../../../src/engine/process-registry.js';
import { tempDir } from '../../helpers/tmp.js';
import { OWNER_HOST } from '../../../src/store/owner.js';

const { dir, cleanup } = tempDir('osm-reconcile-');
const app = createAppContext({ baseFolder: dir });
afterAll(() => {
  app.close();
  cleanup();
});

function sleeper(): number {
  const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid!;
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !isAlive(pid);
}

function runningRow(pid: number, start: string) {
  const run = app.store.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: 'example.com', status: 'running' });
  app.store.runs.update(run.id, { current_pid: pid, current_pid_start: start, owner_pid: 999_999 });
  return run;
}

describe('reconciliation at daemon start', () => {
  it('knows a process by its PID and start time', () => {
    const pid = sleeper();
    const start = processStartTime(pid);
    expect(start).toMatch(/^\d+$/);
    expect(sameProcess(pid, start!)).toBe(true);
    expect(sameProcess(pid, '1')).toBe(false);
    process.kill(-pid, 'SIGKILL');
  });

  it('kills the recorded process group of an interrupted run and marks the run failed', async () => {
    const pid = sleeper();
    const run = runningRow(pid, processStartTime(pid)!);
    const report = await new RunQueue(app, { limit: () => 1 }).reconcile();
    expect(report.failed).toContain(run.run_uuid);
    expect(report.killedPids).toContain(pid);
    expect(await gone(pid)).toBe(true);
    const row = app.store.runs.get(run.id)!;
    expect(row.status).toBe('failed');
    expect(row.error_message).toMatch(/daemon stopped/);
  });

  it('never kills an unrelated process that reuses a recorded PID', async () => {
    const pid = sleeper();
    // The row records the same number with another start time: the number was reused.
    const run = runningRow(pid, '12345');
    const report = await new RunQueue(app, { limit: () => 1 }).reconcile();
    expect(report.failed).toContain(run.run_uuid);
    expect(report.killedPids).not.toContain(pid);
    expect(isAlive(pid)).toBe(true);
    process.kill(-pid, 'SIGKILL');
  });

  it("leaves a run owned on another host alone (a database shared by daemons on several machines), and records this host as owner", async () => {
    const run = app.store.runs.create({ workflow_name: 'sample-recon', workflow_kind: 'module', target: 'remote.example.com', status: 'running', owner_pid: 999_998 });
    expect(app.store.runs.get(run.id)!.owner_host).toBe(OWNER_HOST);
    app.store.db.prepare("UPDATE runs SET owner_host = 'another-machine' WHERE id = ?").run(run.id);
    const report = await new RunQueue(app, { limit: () => 1 }).reconcile();
    expect(report.failed).not.toContain(run.run_uuid);
    expect(app.store.runs.get(run.id)!.status).toBe('running');
    // The same dead PID on this host: the run is failed.
    app.store.runs.update(run.id, { owner_pid: 999_998 });
    expect(app.store.runs.get(run.id)!.owner_host).toBe(OWNER_HOST);
    expect((await new RunQueue(app, { limit: () => 1 }).reconcile()).failed).toContain(run.run_uuid);
  });
});
