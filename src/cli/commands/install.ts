import type { Command } from 'commander';

const collect = (value: string, previous: string[]) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

/** `osm install`: binaries from the registry, a workflow tree from a source, and the registry listing. */
export function registerInstall(program: Command): void {
  const install = program.command('install').description('install tool binaries from the registry, or a workflow folder from a source');

  install
    .command('binary')
    .alias('bin')
    .description('install binaries into the binaries folder (bundled registry unless --registry-url)')
    .option('-n, --name <name>', 'binary to install (repeatable, or comma-separated)', collect, [])
    .option('--all', 'every registry entry except those tagged optional')
    .option('--install-optional', 'with --all: include optional entries too')
    .option('--check', 'only report whether the binaries are installed (nothing is installed)')
    .option('--registry-url <url>', 'another registry: http(s) URL or local JSON file')
    .option('--trust-registry', 'allow the install commands of the --registry-url registry to run (only for registries you trust)')
    .option('--nix-build', 'install with Nix (nix profile add nixpkgs#<name>) instead of downloading')
    .action(async (_opts, command: Command) => {
      const { installBinaryAction } = await import('../actions/install.js');
      await installBinaryAction(command);
    });

  install
    .command('workflow')
    .alias('wf')
    .description('replace the workflows folder with a source (old folder kept as <workflows>.backup-<timestamp>), then re-index')
    .argument('<source>', 'local folder, local .zip/.tar.gz, http(s) archive URL, or git URL (https:// or git@)')
    .action(async (source: string, _opts, command: Command) => {
      const { installWorkflowAction } = await import('../actions/install.js');
      await installWorkflowAction(command, source);
    });

  install
    .command('list')
    .alias('ls')
    .description('list the registry: name, version, installed, path')
    .option('--registry-url <url>', 'another registry: http(s) URL or local JSON file')
    .action(async (_opts, command: Command) => {
      const { installListAction } = await import('../actions/install.js');
      await installListAction(command);
    });
}
