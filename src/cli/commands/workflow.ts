import type { Command } from 'commander';

/** `osm workflow` (alias `wf`): list, show and validate workflows (reference workflow-engine §5.3). */
export function registerWorkflow(program: Command): void {
  const wf = program
    .command('workflow')
    .alias('wf')
    .description('list, show and validate workflows (no subcommand = list)')
    .argument('[search]', 'filter by name or description')
    .option('--tags <tags>', 'only workflows with any of these comma-separated tags')
    .option('-a, --all', 'include hidden workflows')
    .option('--search <text>', 'filter by name or description (same as the argument)')
    .option('--show-tags', 'also list every tag with its number of workflows')
    .option('--usage', 'also print how to run each workflow')
    .action(async (search: string | undefined, _opts, command: Command) => {
      const { workflowList } = await import('../actions/workflow.js');
      await workflowList(command, search);
    });

  wf.command('list')
    .alias('ls')
    .description('list workflows as a table ending in a total line')
    .argument('[search]', 'filter by name or description')
    .option('--tags <tags>', 'only workflows with any of these comma-separated tags')
    .option('-a, --all', 'include hidden workflows')
    .option('--search <text>', 'filter by name or description (same as the argument)')
    .option('--show-tags', 'also list every tag with its number of workflows')
    .option('--usage', 'also print how to run each workflow')
    .action(async (search: string | undefined, _opts, command: Command) => {
      const { workflowList } = await import('../actions/workflow.js');
      await workflowList(command, search);
    });

  wf.command('show')
    .alias('view')
    .description('show a workflow: metadata, params, steps or modules, triggers')
    .argument('<name>', 'workflow name or path to a YAML file')
    .option('--yaml', 'print the raw YAML file exactly as written')
    .option('-t, --target <target>', 'also print the plan for this target: resolved variables and rendered commands')
    .option('-p, --params <key=value>', 'workflow parameter for the plan (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .action(async (name: string, _opts, command: Command) => {
      const { workflowShow } = await import('../actions/workflow.js');
      await workflowShow(command, name);
    });

  wf.command('validate')
    .aliases(['val', 'lint'])
    .description('validate and lint a workflow name, a file, or every workflow in a folder')
    .argument('<target>', 'workflow name, YAML file or folder')
    .option('--disable <rules>', 'comma-separated lint rules to skip')
    .option('--severity <level>', 'lowest severity to print: info, warning or error', 'info')
    .option('--format <format>', 'pretty, json (same as --json) or github (workflow annotations)', 'pretty')
    .option('--fail-fast', 'stop at the first workflow that fails (folders)')
    .action(async (target: string, _opts, command: Command) => {
      const { workflowValidate } = await import('../actions/workflow.js');
      await workflowValidate(command, target);
    });
}
