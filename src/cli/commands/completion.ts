import { Argument, type Command } from 'commander';

/** `osm completion bash|zsh|fish` and the hidden `osm __complete <source>` the scripts call. */
export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print the shell completion script (bash, zsh or fish); see the README to install it')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish') => {
      const { completionScript } = await import('../completion/generate.js');
      process.stdout.write(completionScript(shell));
    });
  program
    .command('__complete', { hidden: true })
    .description('values for shell completion: workflows, flows, modules, runs or workspaces')
    .argument('<source>')
    .action(async (source: string, _opts, command: Command) => {
      const { completionValues, isDynamicSource } = await import('../completion/dynamic.js');
      if (!isDynamicSource(source)) return;
      const lines = await completionValues(source, command.optsWithGlobals());
      if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    });
}
