import type { Command } from 'commander';

/** `osm snapshot`: export, import and list workspace snapshots (zip of the folder plus its database rows). */
export function registerSnapshot(program: Command): void {
  const snap = program.command('snapshot').description('export, import and list workspace snapshots');

  snap
    .command('export')
    .description('zip a workspace folder with its database rows (default: <base>/snapshot/<workspace>_<unix ts>.zip)')
    .argument('<workspace>', 'workspace name')
    .option('-o, --output <file>', 'write the zip here instead')
    .option('--no-artifacts', 'only the run state files and the database rows, not the tool outputs')
    .action(async (workspace: string, _opts, command: Command) => {
      const { snapshotExport } = await import('../actions/snapshot.js');
      await snapshotExport(command, workspace);
    });

  snap
    .command('import')
    .description('import a snapshot zip from a file or an http(s) URL (only import from trusted sources)')
    .argument('<source>', 'zip file path or http(s) URL')
    .option('--force', 'replace an existing workspace of the same name')
    .option('--skip-db', 'extract the files only; leave the database alone')
    .action(async (source: string, _opts, command: Command) => {
      const { snapshotImport } = await import('../actions/snapshot.js');
      await snapshotImport(command, source);
    });

  snap
    .command('list')
    .alias('ls')
    .description('list the stored snapshots')
    .action(async (_opts, command: Command) => {
      const { snapshotList } = await import('../actions/snapshot.js');
      await snapshotList(command);
    });
}
