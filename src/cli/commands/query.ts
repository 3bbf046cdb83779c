import type { Command } from 'commander';

/** `osm query runs|steps|vulns`: read the database from a terminal or a script (`--json`). */
export function registerQuery(program: Command): void {
  const query = program.command('query').description('query runs, step results and vulnerabilities in the database');
  query
    .command('runs')
    .description('runs, newest first')
    .option('--status <status>', 'pending, queued, running, completed, failed or cancelled')
    .option('--workflow <name>', 'only runs of this workflow')
    .option('-t, --target <target>', 'only runs against this target')
    .option('-w, --workspace <name>', 'only runs of this workspace')
    .option('--limit <n>', 'at most this many rows (default 20, max 10000)')
    .option('--offset <n>', 'skip the first n rows (default 0)')
    .action(async (_o, command: Command) => (await import('../actions/query.js')).queryRuns(command));
  query
    .command('steps')
    .description('the step results of one run (id or run_uuid)')
    .argument('<run>', 'run id or run_uuid')
    .action(async (run: string, _o, command: Command) => (await import('../actions/query.js')).querySteps(command, run));
  query
    .command('vulns')
    .alias('vulnerabilities')
    .description('vulnerabilities, newest first (same as `osm vulns`)')
    .option('-w, --workspace <name>', 'only this workspace')
    .option('--severity <list>', 'only these severities, e.g. critical,high')
    .option('--limit <n>', 'at most this many rows (default 50, max 10000)')
    .action(async (_o, command: Command) => (await import('../actions/vulns.js')).vulnsList(command));
}
