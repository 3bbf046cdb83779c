import type { Command } from 'commander';

/** `osm report -w <workspace> --format html|md|json [-o file]`: a workspace report. */
export function registerReport(program: Command): void {
  program
    .command('report')
    .description('write a report of a workspace: summary, assets by type, findings by severity with evidence, changes since the previous run')
    .requiredOption('-w, --workspace <name>', 'the workspace to report on')
    .option('--format <format>', 'html (self-contained, no network), md or json', 'html')
    .option('-o, --output <file>', 'write the report to this file (default: standard output)')
    .option('--since <time>', 'start of the "changes" window (RFC3339, Unix time or YYYY-MM-DD); default: start of the newest run')
    .action(async (_opts, command: Command) => {
      const { reportAction } = await import('../actions/report.js');
      await reportAction(command);
    });
}
