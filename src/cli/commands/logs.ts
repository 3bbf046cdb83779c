import type { Command } from 'commander';

/** `osm logs <run>`: a run's step output from this base folder, or from a daemon with --server. */
export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description("print a run's step output (-f follows it live until the run ends)")
    .argument('<run>', 'run id or run_uuid')
    .option('--step <name>', "only this step's output")
    .option('-f, --follow', 'keep printing new lines until the run ends')
    .option('--tail <n>', 'only the last n lines (then, with -f, everything new)')
    .option('--server <url>', "read from a running daemon's log stream (env OSM_SERVER)")
    .option('--api-key <key>', 'API key or personal token for --server (env OSM_API_KEY)')
    .action(async (run: string, _o, command: Command) => (await import('../actions/logs.js')).logsAction(command, run));
}
