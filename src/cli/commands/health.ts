import type { Command } from 'commander';

/** `osm health`: checks the folders, the database, the tools the workflows need, and Redis when set. */
export function registerHealth(program: Command): void {
  program
    .command('health')
    .description('check folders, database, the tools workflows need and services; exit 1 when something is wrong (a missing tool only with --strict)')
    .option('--strict', 'a tool some workflow needs that is not installed fails the check too')
    .action(async (_opts, command: Command) => {
      const { healthAction } = await import('../actions/health.js');
      await healthAction(command);
    });
}
