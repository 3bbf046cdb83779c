import { Command, Option } from 'commander';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the flags of `osm run` (reference workflow-engine §5.2) to a command. */
function runFlags(cmd: Command): Command {
  return cmd
    .option('-f, --flow <name>', 'flow to run')
    .option('-m, --module <name>', 'module to run (repeatable; run in sequence)', collect)
    .option('-t, --target <target>', 'target (repeatable)', collect)
    .option('-T, --target-file <file>', 'file of targets, one per line (# comments skipped)')
    .option('-p, --params <key=value>', 'workflow parameter (repeatable)', collect)
    .option('-P, --params-file <file>', 'JSON or YAML file of parameters')
    .option('-c, --concurrency <n>', 'targets run in parallel', '1')
    .option('-B, --tactic <tactic>', 'aggressive | default | gently', 'default')
    .option('--threads-hold <n>', 'force the threads variable')
    .option('-x, --exclude <module>', 'skip flow modules by exact name (repeatable)', collect)
    .option('-X, --fuzzy-exclude <text>', 'skip flow modules whose name contains text (repeatable)', collect)
    .option('-S, --space <name>', 'force the workspace name (TargetSpace)')
    .option('-W, --workspaces-folder <dir>', 'force the workspaces folder')
    .option('-w, --workspace <name>', 'alias of --space')
    .addOption(new Option('--heuristics-check <level>', 'target heuristics level').choices(['none', 'basic', 'advanced']).default('basic'))
    .option('--dry-run', 'print the plan; execute nothing')
    .option('--timeout <duration>', 'whole-run timeout (30m, 2h, 1d)')
    .option('--skip-validation', 'skip target-type dependency checks')
    .option('--empty-target', 'run without a target (a placeholder is generated; no workspace files)')
    .option('--disable-workflow-state', 'do not write run-workflow.yaml')
    .option('--resume <run>', 'continue a failed or cancelled run (id or uuid) from its first unfinished step')
    .option('--server <url>', 'submit to a running daemon instead (env OSM_SERVER)')
    .option('--api-key <key>', 'API key for --server (env OSM_API_KEY)')
    .addOption(new Option('--run-priority <priority>', 'priority for --server').choices(['low', 'normal', 'high', 'critical']).default('normal'))
    .action(async (_opts, command: Command) => {
      const { runAction } = await import('../actions/run.js');
      await runAction(command);
    });
}

/** `osm run` and its aliases `scan`/`execute`. */
export function registerRun(program: Command): void {
  runFlags(program.command('run').description('run a flow or module against targets'));
  runFlags(program.command('scan').description('alias of run'));
  runFlags(program.command('execute', { hidden: true }).description('alias of run'));
}
