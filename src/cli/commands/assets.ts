import type { Command } from 'commander';

/** `osm assets`: list discovered assets as a table (or JSON with --json). */
export function registerAssets(program: Command): void {
  program
    .command('assets')
    .description('list discovered assets, newest first')
    .option('-w, --workspace <name>', 'only this workspace')
    .option('--type <type>', 'only this asset_type (http, url, domain, ip, …)')
    .option('--status <code>', 'only this HTTP status code')
    .option('--search <text>', 'substring of the value, URL, title or IP')
    .option('--limit <n>', 'at most this many rows (default 50, max 10000)')
    .option('--stats', 'counts by asset type and by HTTP status (from the counters the store keeps)')
    .action(async (_opts, command: Command) => {
      const { assetsList } = await import('../actions/assets.js');
      await assetsList(command);
    });
}
