import type { Command } from 'commander';

/** `osm serve` (alias `server`): the HTTP daemon. */
export function registerServe(program: Command): void {
  for (const name of ['serve', 'server']) {
    program
      .command(name, { hidden: name === 'server' })
      .description('start the HTTP daemon (API, run queue, scheduler)')
      .option('--host <host>', 'listen address (default server.host: 127.0.0.1; 0.0.0.0 listens on every interface and prints a warning)')
      .option('--port <port>', 'listen port (default server.port from settings, 8002)')
      .option('-A, --no-auth', 'disable authentication (every endpoint open)')
      .option('--no-hot-reload', 'do not watch the settings file')
      .option('--no-schedule', 'do not run cron/event/watch schedules')
      .option('--no-event-receiver', 'record emitted events but never fire event triggers')
      .option('--no-queue-polling', 'do not poll the database for runs queued by other processes (osm run --queue)')
      .option('--master', 'distributed mode: act as master (needs Redis)')
      .option('--redis-url <url>', 'Redis URL for distributed mode')
      .addHelpText('after', `
One daemon per base folder: the daemon holds <base>/osm-serve.lock while it runs. A lock left by a
daemon that died is taken over by itself. The global --force takes over a lock whose owner cannot
be checked from here (written on another host, e.g. a base folder on a network filesystem, or an
unreadable lock file); it never replaces a daemon that is running on this host.`)
      .action(async (_opts, command: Command) => {
        const { serveAction } = await import('../actions/serve.js');
        await serveAction(command);
      });
  }
}
