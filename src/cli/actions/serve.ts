import { loadSettings } from '../../settings/index.js';
import { maskUrlPassword } from '../../settings/redact.js';
import type { Command } from 'commander';
import { optionsOf } from '../context.js';
import { errors } from '../../errors.js';
import { openApp } from '../app.js';
import { indexWorkflows } from '../../workflow/indexer.js';
import { RunQueue } from '../../engine/queue.js';
import { buildServer } from '../../server/app.js';
import { VERSION } from '../../version.js';
import { spawnerPool } from '../../engine/spawner/pool.js';
import { acquireDaemonLock, type DaemonLock } from '../../util/daemon-lock.js';
import { jsonLineLog } from '../../util/json-log.js';
import type { DistributedConfig } from '../../distributed/index.js';

interface ServeFlags {
  host?: string;
  port?: string;
  auth: boolean;
  hotReload: boolean;
  schedule: boolean;
  eventReceiver: boolean;
  queuePolling: boolean;
  master?: boolean;
  redisUrl?: string;
}

/** True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * Warnings printed when the daemon listens beyond loopback: reachable from the network is an
 * explicit choice; without authentication it hands a shell to anyone who can reach the port.
 */
export function exposureWarnings(host: string, noAuth: boolean): string[] {
  if (isLoopbackHost(host)) return [];
  const where = host === '0.0.0.0' || host === '::' || host === '' ? 'every network interface' : host;
  if (noAuth) {
    return [
      '!!! DANGER: authentication is DISABLED (--no-auth) and the daemon listens on ' + where + '.',
      '!!! Anyone who can reach this port can run commands on this machine (workflows, functions/eval).',
      '!!! Use --host 127.0.0.1, or drop --no-auth.',
    ];
  }
  return [`WARNING: listening on ${where} (${host}): the API is reachable from the network; keep the API key and passwords secret, or use --host 127.0.0.1.`];
}

/**
 * `osm serve`: index workflows, reconcile runs left by a previous daemon, start the queue, the
 * settings watcher and the HTTP server. SIGTERM/SIGINT stop accepting requests, cancel running
 * runs (children killed, recorded cancelled), close the database and exit 0 within 10 s.
 */
export async function serveAction(command: Command): Promise<void> {
  const o = optionsOf<ServeFlags>(command);
  const app = await openApp(o);
  const settings = app.settings();
  const host = o.host ?? String(settings.settings.server.host || '127.0.0.1');
  const port = o.port !== undefined ? Number(o.port) : Number(settings.settings.server.port ?? 8002);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw errors.validation(`--port must be 0-65535, got ${JSON.stringify(o.port)}`);
  const noAuth = o.auth === false;
  // Before anything touches runs or schedules: a second daemon on this base refuses to start.
  let lock: DaemonLock;
  try {
    lock = acquireDaemonLock(settings.paths.base, { force: o.force });
  } catch (err) {
    await app.close();
    throw err;
  }
  process.once('exit', () => lock.release());

  const indexed = await indexWorkflows(app.repos, settings.paths.workflows);
  const log = jsonLineLog();
  if (lock.note) log(lock.note, { lock_file: lock.file });
  const queue = new RunQueue(app, {
    limit: () => Number((app.settings().settings.server as { max_concurrent_runs?: number }).max_concurrent_runs ?? 2),
    log,
    ...(o.queuePolling === false ? { pollMs: 0 } : {}),
  });
  const server = await buildServer(app, { noAuth, logger: { level: o.debug ? 'debug' : 'info' }, queue });
  // Distributed master (--master): tasks go to Redis through BullMQ; workers report back.
  let master: { stop(): Promise<void>; master: { prefix: string; redisDisplay: string; config: DistributedConfig } } | undefined;
  if (o.master) {
    const { startMaster } = await import('../../distributed/index.js');
    try {
      master = await startMaster(app, { redisUrl: o.redisUrl, log });
    } catch (err) {
      await server.close();
      await app.close();
      throw err;
    }
  }
  let scheduler: { stop(): Promise<void> | void } | undefined;
  if (o.schedule !== false) {
    const { startScheduler } = await import('../../scheduler/index.js');
    const schedulerOptions = { log, queue, eventReceiver: o.eventReceiver !== false };
    // Masters sharing a Redis prefix, or daemons sharing a PostgreSQL database: only the holder
    // of the scheduler lock (Redis, or the database's lease) runs the schedules.
    if (master) scheduler = await (await import('../../distributed/index.js')).startLeaderScheduler(app, master.master.config, schedulerOptions);
    else if (app.repos.engine === 'postgresql') {
      const { startLeaderScheduler, storeLeaderLock } = await import('../../distributed/scheduler-leader.js');
      scheduler = await startLeaderScheduler(app, storeLeaderLock(app.repos), schedulerOptions);
    } else scheduler = await startScheduler(app, schedulerOptions);
  }
  // Spawner processes boot now rather than under the first runs' steps, and so do the database
  // connections the first runs will write on (PostgreSQL's pool).
  spawnerPool().warm();
  await app.repos.warm?.(queue.limit());
  const reconciled = await queue.start();
  if (o.hotReload !== false) await app.manager.watch();

  const address = await server.listen({ host, port });
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const url = `http://${shownHost}:${(server.server.address() as { port: number }).port}`;
  const srv = app.settings().settings.server;
  const users = Object.keys((srv.simple_user_map_key ?? {}) as Record<string, unknown>);
  const tty = Boolean(process.stdout.isTTY);
  const lines = [
    `osm ${VERSION} daemon listening on ${address} (${url})`,
    `  Settings file: ${settings.file}`,
    `  Base folder:   ${settings.paths.base}`,
    `  Database:      ${app.db.engine === 'postgresql' ? `PostgreSQL ${maskUrlPassword(app.db.url)}` : settings.paths.db}`,
    `  Workflows:     ${settings.paths.workflows} (${indexed.added} added, ${indexed.updated} updated, ${indexed.removed} removed, ${indexed.unchanged} unchanged${indexed.errors.length ? `, ${indexed.errors.length} errors` : ''})`,
    `  Run queue:     limit ${queue.limit()} concurrent runs; ${reconciled.requeued} queued; ${reconciled.failed.length} interrupted run(s) marked failed`,
    `  API docs:      ${url}/swagger (OpenAPI: ${url}/openapi.json)`,
  ];
  if (master) lines.push(`  Distributed:   master on ${master.master.redisDisplay} (queue ${master.master.prefix}:osm-tasks); workers join with \`osm worker join\``);
  if (noAuth) {
    lines.push('  Auth:          DISABLED (--no-auth): every endpoint is open');
  } else {
    lines.push(
      srv.enabled_auth_api
        ? `  Auth:          header x-osm-api-key: ${tty ? String(srv.auth_api_key) : '<server.auth_api_key from the settings file>'}`
        : '  Auth:          API key disabled (server.enabled_auth_api: false)',
      `                 or POST ${url}/osm/api/login with user ${users.length ? users.map((u) => `'${u}'`).join(', ') : '(none configured)'} (password: server.simple_user_map_key in the settings file), then Authorization: Bearer <token>`,
      `  Example:       curl -H "x-osm-api-key: $(osm config view server.auth_api_key --show-secrets)" ${url}/osm/api/runs`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const w of exposureWarnings(host, noAuth)) process.stderr.write(`${w}\n`);

  await new Promise<void>((resolve) => {
    let closing = false;
    const shutdown = async (sig: string) => {
      if (closing) return;
      closing = true;
      log('shutting down', { signal: sig });
      const force = setTimeout(() => {
        log('shutdown timed out; exiting');
        process.exit(1);
      }, 10_000);
      force.unref();
      try {
        const closed = server.close();
        await scheduler?.stop();
        await queue.stop(7000);
        await master?.stop();
        await closed;
      } finally {
        await app.close();
        clearTimeout(force);
        resolve();
      }
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  });
}
