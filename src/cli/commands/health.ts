import type { Command } from 'commander';

/** `osm health`: checks the folders, the database, the tools the workflows need, and Redis when set. */
export function registerHealth(program: Command): void {
  program
    .command('health')
    .description('check folders, database, required tools and services; exit 1 when something is wrong')
    .action(async (_opts, command: Command) => {
      const { healthAction } = await import('../actions/health.js');
      await healthAction(command);
    });
}
