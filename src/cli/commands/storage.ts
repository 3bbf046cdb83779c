import type { Command } from 'commander';

/** `osm storage`: the object storage of the `storage` settings (list, push, pull, whole workspaces). */
export function registerStorage(program: Command): void {
  const st = program.command('storage').description('object storage (S3, MinIO, R2, GCS, Spaces, OCI) of the storage settings');

  st.command('ls')
    .description('list a prefix of the bucket (folders and files; --recursive: every file below)')
    .argument('[prefix]', 'key prefix (default: the whole bucket)')
    .option('-r, --recursive', 'every object below the prefix')
    .action(async (prefix: string | undefined, _opts, command: Command) => {
      const { storageLs } = await import('../actions/storage.js');
      await storageLs(command, prefix);
    });

  st.command('push')
    .description('upload a file to a key (default: its name), or a folder with --recursive (only new or changed files)')
    .argument('<local>', 'file or folder')
    .argument('[key]', 'object key, or the prefix of a folder (ending in / keeps the file name)')
    .option('-r, --recursive', 'upload a folder')
    .action(async (local: string, key: string | undefined, _opts, command: Command) => {
      const { storagePush } = await import('../actions/storage.js');
      await storagePush(command, local, key);
    });

  st.command('pull')
    .description('download a key to a file (default: its name here), or a prefix into a folder with --recursive')
    .argument('<key>', 'object key or prefix')
    .argument('[local]', 'destination file or folder')
    .option('-r, --recursive', 'download every object below the prefix (keys that would leave the folder are refused)')
    .action(async (key: string, local: string | undefined, _opts, command: Command) => {
      const { storagePull } = await import('../actions/storage.js');
      await storagePull(command, key, local);
    });

  st.command('pull-workspace')
    .description('download <prefix>workspaces/<name>/ into the workspaces folder; the workspace becomes data_source cloud')
    .argument('<name>', 'workspace name')
    .action(async (name: string, _opts, command: Command) => {
      const { storagePullWorkspace } = await import('../actions/storage.js');
      await storagePullWorkspace(command, name);
    });

  st.command('push-workspace')
    .description('upload a workspace folder below <prefix>workspaces/<name>/ (only new or changed files)')
    .argument('<name>', 'workspace name')
    .action(async (name: string, _opts, command: Command) => {
      const { storagePushWorkspace } = await import('../actions/storage.js');
      await storagePushWorkspace(command, name);
    });
}
