import type { Command } from 'commander';

/** `osm scope check <value>`: is a value in the target scope, and which rule decided (docs/scope.md). */
export function registerScope(program: Command): void {
  const scope = program.command('scope').description('target scope: check values against the include/exclude rules (docs/scope.md)');
  scope
    .command('check')
    .description('explain whether a domain, host, URL, IP, CIDR or host:port is in scope, and which rule of which layer decided')
    .argument('<value>', 'the value to check')
    .option('--scope-file <file>', 'a scope file (as osm run --scope-file) checked as the run layer')
    .option('-w, --workspace <name>', "also apply this workspace's scope (and its org's) from the settings")
    .option('-m, --workflow <name>', "also apply this workflow's scope: key")
    .addHelpText('after', '\nExit code: 0 in scope, 1 out of scope, 2 invalid scope or usage error.')
    .exitOverride((err) => {
      // A usage error (missing value, unknown option) must not read as "out of scope" (1).
      if (err.exitCode !== 0) (err as { exitCode: number }).exitCode = 2;
      throw err;
    })
    .action(async (value: string, _opts, command: Command) => {
      const { scopeCheckAction } = await import('../actions/scope.js');
      await scopeCheckAction(value, command);
    });
}
