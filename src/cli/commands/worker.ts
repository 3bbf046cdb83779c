import { Option, type Command } from 'commander';
import { runFlags } from './run.js';

/** `osm worker`: join a distributed master's queue, or list its workers. */
export function registerWorker(program: Command): void {
  const worker = program.command('worker').description('distributed mode: execute tasks of an `osm serve --master` (shared Redis)');

  worker
    .command('join')
    .description('connect to the task queue and execute tasks with this base folder (its workflows, its database)')
    .option('--redis-url <url>', 'Redis URL, redis://[user:password@]host[:port][/db] (default: redis section of the settings)')
    .option('--redis-prefix <prefix>', 'Redis key prefix shared with the master (default redis.prefix, $OSM_REDIS_PREFIX or osm)')
    .option('-c, --concurrency <n>', 'tasks executed at once', '1')
    .option('--name <name>', 'unique worker id (default wosm-<random>)')
    .option('--label <label>', 'routing label, name or key=value (repeatable): tasks asking for it go only to workers that have it', (v: string, prev: string[] = []) => [...prev, v])
    .addOption(new Option('--lock-duration <ms>', 'BullMQ lock duration: how long a dead worker keeps its task (default 30000)').hideHelp())
    .addOption(new Option('--stalled-interval <ms>', 'BullMQ stalled-task check interval (default 30000)').hideHelp())
    .addOption(new Option('--max-stalled-count <n>', 're-runs after stalls before a task fails (default 1)').hideHelp())
    .action(async (_opts, command: Command) => {
      const { workerJoin } = await import('../actions/worker.js');
      await workerJoin(command);
    });

  worker
    .command('status')
    .aliases(['ls', 'list'])
    .description('list the workers registered in Redis (idle, busy or offline)')
    .option('--redis-url <url>', 'Redis URL (default: redis section of the settings)')
    .option('--redis-prefix <prefix>', 'Redis key prefix (default redis.prefix, $OSM_REDIS_PREFIX or osm)')
    .action(async (_opts, command: Command) => {
      const { workerStatus } = await import('../actions/worker.js');
      await workerStatus(command);
    });

  worker
    .command('drain <id>')
    .description('drain a worker: it finishes the tasks in hand and takes no new ones (restart it to undo)')
    .option('--redis-url <url>', 'Redis URL (default: redis section of the settings)')
    .option('--redis-prefix <prefix>', 'Redis key prefix (default redis.prefix, $OSM_REDIS_PREFIX or osm)')
    .action(async (id: string, _opts, command: Command) => {
      const { workerDrain } = await import('../actions/worker.js');
      await workerDrain(command, id);
    });

  // The reference's database queue (`worker queue …`): the same runs table `osm run --queue` fills.
  const queue = worker.command('queue').description("the database run queue: list, add (like 'osm run --queue') and execute queued runs");
  queue
    .command('list')
    .alias('ls')
    .description('queued runs, oldest first')
    .option('--limit <n>', 'at most this many rows (default 50, max 10000)')
    .action(async (_opts, command: Command) => (await import('../actions/worker-queue.js')).queueList(command));
  runFlags(queue.command('new').description('queue runs (same flags as osm run); a daemon or `osm worker queue run` executes them'))
    .hook('preAction', (_root, action) => {
      action.setOptionValue('queue', true);
    });
  queue
    .command('run')
    .description('execute the queued runs in this process, --concurrency at a time, then exit')
    .option('-c, --concurrency <n>', 'runs at once', '1')
    .action(async (_opts, command: Command) => {
      command.setOptionValue('queueRun', true);
      const { runAction } = await import('../actions/run.js');
      await runAction(command);
    });
}
