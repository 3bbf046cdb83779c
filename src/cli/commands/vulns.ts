import type { Command } from 'commander';

/** `osm vulns`: list vulnerabilities as a table with a severity summary line (or JSON with --json). */
export function registerVulns(program: Command): void {
  program
    .command('vulns')
    .alias('vulnerabilities')
    .description('list vulnerabilities, newest first, with a summary by severity')
    .option('-w, --workspace <name>', 'only this workspace')
    .option('--severity <list>', 'only these severities, e.g. critical,high')
    .option('--limit <n>', 'at most this many rows (default 50, max 10000)')
    .action(async (_opts, command: Command) => {
      const { vulnsList } = await import('../actions/vulns.js');
      await vulnsList(command);
    });
}
