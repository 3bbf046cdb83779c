/**
 * Implementation of `osm worker join|status`, imported lazily by commands/worker.ts. `join` runs
 * until SIGTERM/SIGINT: runs in hand are aborted and their tasks handed back to the queue, the
 * worker is marked offline and every connection is closed (the process then exits by itself).
 */
import { createAppContext } from '../../services/context.js';
import { dbEngineOf, pgTargetFromSettings, type DatabaseSettings } from '../../store/pg/config.js';
import { openPgStore } from '../../store/pg/store.js';
import { pgLatestVersion } from '../../store/pg/migrate.js';
import type { AsyncStore } from '../../store/async.js';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { Queue } from 'bullmq';
import { errors, messageOf } from '../../errors.js';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import { openApp } from '../app.js';
import { loadSettings } from '../../settings/index.js';
import { connectionOptions, pingRedis, resolveDistributedConfig } from '../../distributed/redis-config.js';
import { DistributedWorker, type SharedDatabase } from '../../distributed/worker.js';
import { DRAIN_FLAG_TTL_S, QUEUE_NAME, drainKey, schedulerLeaderKey } from '../../distributed/keys.js';
import { listWorkerViews, type WorkerView } from '../../distributed/worker-registry.js';
import { parseWorkerLabels } from '../../distributed/routing.js';
import { VERSION } from '../../version.js';
import { jsonLineLog } from '../../util/json-log.js';

interface JoinFlags extends GlobalOptions {
  redisUrl?: string;
  redisPrefix?: string;
  concurrency: string;
  name?: string;
  lockDuration?: string;
  stalledInterval?: string;
  maxStalledCount?: string;
  label?: string[];
}

interface StatusFlags extends GlobalOptions {
  redisUrl?: string;
  redisPrefix?: string;
}

function intFlag(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw errors.validation(`${flag} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return n;
}

/** `osm worker join`. */
export async function workerJoin(command: Command): Promise<void> {
  const o = optionsOf<JoinFlags>(command);
  const concurrency = intFlag(o.concurrency, '--concurrency', 1) ?? 1;
  const lockDurationMs = intFlag(o.lockDuration, '--lock-duration', 100);
  const stalledIntervalMs = intFlag(o.stalledInterval, '--stalled-interval', 100);
  const maxStalledCount = intFlag(o.maxStalledCount, '--max-stalled-count', 0);
  const labels = parseWorkerLabels(o.label ?? []);
  // A worker keeps its own SQLite database for scratch copies of runs it ships to the master.
  // When its settings open a PostgreSQL database, and that is the master's (same store_id, sent
  // with each task), it writes those runs straight into it instead, each write fenced by the
  // attempt number (docs/distributed.md). Never a scratch copy there: it would replace the
  // master's own row.
  const app = createAppContext({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  const lines = jsonLineLog();
  const log = (msg: string, fields: Record<string, unknown> = {}) => {
    if (!o.silent) lines(msg, fields);
  };
  let worker: DistributedWorker;
  let shared: SharedDatabase | undefined;
  try {
    const { shared: opened, note } = await openSharedDatabase(app.settings().settings.database);
    shared = opened;
    const config = resolveDistributedConfig(app.settings(), { redisUrl: o.redisUrl, prefix: o.redisPrefix });
    const leaseSeconds = app.settings().settings.distributed.lease_seconds;
    worker = new DistributedWorker(app, { config, name: o.name, concurrency, leaseSeconds, lockDurationMs, stalledIntervalMs, maxStalledCount, labels, log, shared });
    await worker.start();
    const settings = app.settings();
    process.stdout.write(
      [
        `osm ${VERSION} worker ${worker.id} joined ${config.redis.display} (queue ${config.prefix}:${QUEUE_NAME}, concurrency ${concurrency})`,
        `  Base folder:   ${settings.paths.base}`,
        `  Workflows:     ${settings.paths.workflows}`,
        `  Labels:        ${labels.join(', ') || '-'}`,
        `  Database:      ${settings.paths.db} (this worker's own record of the runs it ships to the master)`,
        ...(note ? [`  Shared:        ${note}`] : []),
        '  Stop with Ctrl-C: runs in hand are aborted and their tasks go back to the queue.',
      ].join('\n') + '\n',
    );
  } catch (err) {
    await shared?.repos.close();
    await app.close();
    throw err;
  }

  await new Promise<void>((resolve) => {
    let closing = false;
    const shutdown = async (sig: string) => {
      if (closing) return;
      closing = true;
      log('worker leaving', { signal: sig, tasks: worker.activeTasks() });
      try {
        await worker.stop();
      } finally {
        await shared?.repos.close().catch(() => undefined);
        await app.close();
        resolve();
      }
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  });
}

/**
 * The PostgreSQL database the worker's settings name, opened for direct writes when it is
 * reachable and at this version's schema; otherwise results are shipped, and `note` says why.
 */
async function openSharedDatabase(db: DatabaseSettings): Promise<{ shared?: SharedDatabase; note?: string }> {
  if (dbEngineOf(db) !== 'postgresql') return {};
  const target = pgTargetFromSettings(db);
  let repos: AsyncStore;
  try {
    repos = await openPgStore(target, { migrate: false, max: 2 });
  } catch (err) {
    return { note: `${target.display} could not be opened (${messageOf(err)}); results are shipped through the master` };
  }
  try {
    const version = await repos.maintenance.schemaVersion();
    if (version < pgLatestVersion()) {
      await repos.close();
      return { note: `${target.display} is at schema version ${version}, direct writes need ${pgLatestVersion()} (start the master of this version first); results are shipped through the master` };
    }
    return { shared: { repos, url: target.url, storeId: await repos.maintenance.storeId() }, note: `${target.display}: runs of a master on this database are written straight into it` };
  } catch (err) {
    await repos.close().catch(() => undefined);
    return { note: `${target.display} could not be read (${messageOf(err)}); results are shipped through the master` };
  }
}

/** Opens the distributed queue named by the settings and flags, runs `fn` with it, and closes it. */
async function withQueue<T>(o: StatusFlags, fn: (queue: Queue, client: Awaited<Queue['client']>, prefix: string, redisDisplay: string) => Promise<T>): Promise<T> {
  const settings = loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder });
  const config = resolveDistributedConfig(settings, { redisUrl: o.redisUrl, prefix: o.redisPrefix });
  await pingRedis(config.redis);
  const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(config.redis), prefix: config.prefix });
  queue.on('error', () => undefined);
  try {
    return await fn(queue, await queue.client, config.prefix, config.redis.display);
  } finally {
    await queue.close();
  }
}

/** `osm worker drain <id>`: sets the worker's drain flag (it stops taking tasks within a second). */
export async function workerDrain(command: Command, id: string): Promise<void> {
  const o = optionsOf<StatusFlags>(command);
  const ui = createUi(o);
  await withQueue(o, async (queue, client, prefix) => {
    const w = (await listWorkerViews(client, queue, prefix)).find((v) => v.id === id);
    if (!w) throw errors.workerNotFound();
    await client.set(drainKey(prefix, id), '1', { EX: DRAIN_FLAG_TTL_S });
    if (o.json) ui.json({ message: 'Worker draining', worker: w });
    else ui.info(`Worker ${id} draining: it finishes ${w.current_tasks.length} task(s) in hand and takes no new ones.`);
  });
}

/** `osm worker status [--json]`. */
export async function workerStatus(command: Command): Promise<void> {
  const o = optionsOf<StatusFlags>(command);
  const ui = createUi(o);
  await withQueue(o, async (queue, client, prefix, redisDisplay) => {
    const totals = await attemptTotals(o);
    const workers = (await listWorkerViews(client, queue, prefix)).map((w) => ({ ...w, totals: totals[w.id] ?? {} }));
    const leader = await client.get(schedulerLeaderKey(prefix));
    if (o.json) {
      ui.json({ data: workers, count: workers.length, scheduler_leader: leader });
      return;
    }
    ui.info(leader ? `Scheduler: run by the master ${leader} (lock ${schedulerLeaderKey(prefix)})` : `Scheduler: no master holds the scheduler lock of prefix ${prefix}`);
    if (workers.length === 0) {
      ui.info(`No workers registered on ${redisDisplay} (prefix ${prefix}). Start one with \`osm worker join --redis-url <url>\`.`);
      return;
    }
    const color = colorEnabled(o.disableColor);
    const rows = workers.map((w) => [w.id, w.hostname, w.draining ? `${w.status} (draining)` : w.status, w.current_tasks.join(', ') || '-', w.tasks_complete, w.tasks_failed, totalsText(w.totals), labelsText(w), w.joined_at, w.last_heartbeat]);
    ui.out(await renderTable(['ID', 'Host', 'Status', 'Current task', 'Done', 'Failed', 'Totals', 'Labels', 'Joined', 'Last heartbeat'], rows, { color }));
  });
}

/**
 * Attempts by worker and outcome from this machine's database: the master's `run_attempts` when
 * run where the master runs (the same base folder); empty elsewhere.
 */
async function attemptTotals(o: StatusFlags): Promise<Record<string, Record<string, number>>> {
  let app: Awaited<ReturnType<typeof openApp>> | undefined;
  try {
    // Never create a database just to read it (a worker-only machine has none of the master's).
    if (!existsSync(loadSettings({ baseFolder: o.baseFolder, settingsFile: o.settingsFile, workflowFolder: o.workflowFolder }).paths.db)) return {};
    app = await openApp(o);
    return await app.repos.attempts.totalsByWorker();
  } catch {
    return {};
  } finally {
    await app?.close();
  }
}

/** `12 completed, 1 error` (largest first), or `-`. */
export function totalsText(totals: Record<string, number>): string {
  const parts = Object.entries(totals).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return parts.map(([k, n]) => `${n} ${k}`).join(', ') || '-';
}

/** Custom labels, then how many workflows and tools the worker advertises. */
function labelsText(w: WorkerView): string {
  const parts = [...w.labels, `${w.workflows.length} workflow(s)`];
  if (w.tools.length) parts.push(`tools: ${w.tools.join(' ')}`);
  return parts.join(', ');
}
