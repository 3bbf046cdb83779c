/**
 * What a worker process finds of an earlier one at `osm worker join`: its own unfinished runs
 * (marked failed) and step process groups still running after it died with its spawners (killed,
 * only when they are the very process recorded).
 */
import type { AppContext } from '../services/context.js';
import type { AsyncStore } from '../store/async.js';
import { ownedOnOtherHost } from '../store/owner.js';
import { isAlive, killGroup, sameProcess } from '../engine/process-registry.js';

/**
 * At `osm worker join`, as `osm serve` does for its runs: this worker's own records of tasks that
 * were executing when a previous worker process on this base folder died are marked failed, and
 * a step process group still alive is killed — only when it is the very process recorded (PID and
 * start time from /proc, PIDs are reused), so a worker killed with SIGKILL together with its
 * spawner leaves no step running past the next start. Runs of a worker process still alive are
 * left alone. (The master's record of the run is settled by the queue: the task stalls and runs
 * again.)
 */
export async function reconcileWorkerRuns(app: AppContext): Promise<{ failed: string[]; killedPids: number[] }> {
  const repos = app.repos;
  const report = { failed: [] as string[], killedPids: [] as number[] };
  for (const run of await repos.runs.listUnfinishedByMode('distributed')) {
    if (ownedOnOtherHost(run)) continue;
    if (run.owner_pid && run.owner_pid !== process.pid && isAlive(run.owner_pid)) continue;
    if (run.current_pid > 1 && run.current_pid !== process.pid && sameProcess(run.current_pid, run.current_pid_start)) {
      killGroup(run.current_pid, 0);
      report.killedPids.push(run.current_pid);
    }
    const message = `the worker process (pid ${run.owner_pid}) stopped while the run was ${run.status}; marked failed at worker start`;
    await repos.tx(async () => {
      await repos.steps.failUnfinished(run.id, 'the process executing this step stopped');
      await repos.runs.transition(run.id, 'failed', { error_message: message });
      await repos.runs.update(run.id, { current_pid: 0 });
    });
    report.failed.push(run.run_uuid);
  }
  return report;
}

/**
 * At `osm worker join` with a shared database: step process groups of runs this host's worker
 * was executing straight in the shared database when it died (killed with its spawner) are
 * killed, when they are the very process recorded. The runs themselves are left to the queue:
 * their task stalls, and the next attempt's claim resets them.
 */
export async function reconcileSharedRuns(repos: AsyncStore): Promise<number[]> {
  const killed: number[] = [];
  for (const run of await repos.runs.listUnfinishedByMode('distributed')) {
    if (ownedOnOtherHost(run) || !run.owner_pid || run.owner_pid === process.pid || isAlive(run.owner_pid)) continue;
    if (run.current_pid > 1 && sameProcess(run.current_pid, run.current_pid_start)) {
      killGroup(run.current_pid, 0);
      killed.push(run.current_pid);
    }
  }
  return killed;
}
