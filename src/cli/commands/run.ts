import { Command, Option } from 'commander';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the flags of `osm run` (reference workflow-engine §5.2) to a command. */
export function runFlags(cmd: Command): Command {
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
    .option('--scope-file <file>', 'target scope: one entry a line, ! excludes (or YAML include:/exclude:); out-of-scope targets are refused (exit 2), loop items and imported rows dropped (docs/scope.md)')
    .option('--skip-validation', 'skip target-type dependency checks')
    .option('--empty-target', 'run without a target (a placeholder is generated; no workspace files)')
    .option('--disable-workflow-state', 'do not write run-workflow.yaml')
    .option('--resume <run>', 'continue a failed or cancelled run (id or uuid) from its first unfinished step')
    .option('--repeat', 'run again and again (with --repeat-wait-time between rounds) until interrupted')
    .option('--repeat-wait-time <duration>', 'pause between --repeat rounds', '1m')
    .option('--chunk-size <n>', 'split targets into chunks of n (with --chunk-part: run one chunk; without: print the chunks)')
    .option('--chunk-count <n>', 'split targets into n chunks')
    .option('--chunk-part <m>', 'run only chunk m (0-based)')
    .option('--chunk-threads <n>', 'with --chunk-part: targets of the chunk run in parallel (overrides -c)')
    .option('--convert-to-file', 'write all targets to one file and run once with its path as the target')
    .option('--convert-file-to-line', 'targets that are files are replaced by their lines')
    .option('-G, --progress-bar', 'quiet step output; a spinner shows progress on a terminal')
    .option('--sudo-aware', 'ask for the sudo password once before the run (when not root)')
    .option('--std-module', 'read the module YAML from stdin')
    .option('--module-url <url>', 'fetch the module YAML from a URL')
    .option('--queue', 'only queue the runs (a running daemon executes them); prints their ids')
    .option('--queue-run', 'execute the queued runs (from --queue or the API) in this process, -c at a time, then exit')
    .option('--as-cron <expr>', 'create a cron schedule for this workflow and target instead of running now')
    .option('--as-webhook', 'register a webhook run template per target instead of running (the daemon runs it on POST /osm/api/webhook-runs/<uuid>/trigger)')
    .option('--webhook-auth-key <key>', 'with --as-webhook: the key the trigger must give as ?key=')
    .option('-D, --distributed-run', "submit to the distributed master's queue (osm serve --master): its workers run the targets; the master is --server, else this base folder's daemon")
    .option('--redis-url <url>', 'with -D: accepted for compatibility (the master submits to its own Redis queue)')
    .option('--server <url>', 'submit to a running daemon instead (env OSM_SERVER)')
    .option('--server-url <url>', 'alias of --server')
    .option('--api-key <key>', 'API key for --server (env OSM_API_KEY)')
    .addOption(new Option('--run-priority <priority>', 'priority for --server').choices(['low', 'normal', 'high', 'critical']).default('normal'))
    .addHelpText('after', RUN_EXIT_CODES)
    .exitOverride((err) => {
      // Usage errors (unknown option, missing option value, bad choice) exit 2; help/version 0.
      if (err.exitCode !== 0) (err as { exitCode: number }).exitCode = 2;
      throw err;
    })
    .action(async (_opts, command: Command) => {
      const { runAction } = await import('../actions/run.js');
      try {
        await runAction(command);
      } catch (err) {
        // Validation errors (invalid workflow, workflow not found, missing/invalid target or
        // params, conflicting flags) exit 2 — nothing ran. A failed dependency check (a required
        // tool missing, a target of the wrong type) is a failed run instead: 1.
        const e = err as { status?: unknown; code?: unknown; name?: unknown };
        if (e.name === 'OsmError' && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.code !== 'OSM_ERR_DEPENDENCY') process.exitCode = 2;
        throw err;
      }
    });
}

/** The exit codes of `osm run` (also in README.md): scripts and CI rely on them. */
export const RUN_EXIT_CODES = `
Exit codes:
  0    every run completed (for a flow: every module completed or was skipped)
  1    a run, module or step failed (a flow whose module failed keeps the status 'completed'
       in its run record, as in the reference, but still exits 1; a step failure accepted
       by 'on_error: continue' does not count)
  2    usage or validation error, nothing ran: unknown option, invalid workflow, workflow
       not found, missing target, an unrendered [[var]] in a command (--dry-run); a failed
       dependency check (required tool missing, wrong target type) is 1
  130  interrupted (Ctrl-C / SIGINT, or SIGTERM)`;

/** `osm run` and its aliases `scan`/`execute`. */
export function registerRun(program: Command): void {
  runFlags(program.command('run').description('run a flow or module against targets'));
  runFlags(program.command('scan').description('alias of run'));
  runFlags(program.command('execute', { hidden: true }).description('alias of run'));
}
