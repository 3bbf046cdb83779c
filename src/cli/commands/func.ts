import type { Command } from 'commander';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds the evaluation flags shared by `func -e` and `func eval`. */
function evalOptions(cmd: Command): Command {
  return cmd
    .option('-e, --eval <script>', 'the script to evaluate')
    .option('-t, --target <target>', 'fills {{target}} and {{Target}}')
    .option('-p, --params <key=value>', 'template variable (repeatable)', collect, [])
    .option('--timeout <duration>', 'time limit of the evaluation (e.g. 30s, 5m)', '10s')
    .option('--stdin', 'read the script from stdin')
    .option('--function-file <file>', 'read the script from a file')
    .option('-f, --function <name>', 'call this function with the remaining arguments as string arguments')
    .option('-T, --target-file <file>', 'evaluate once per target of the file (one per line)');
}

/** `osm func` (alias `function`): evaluate utility-function scripts and list the catalogue. */
export function registerFunc(program: Command): void {
  const func = evalOptions(
    program
      .command('func')
      .alias('function')
      .description('evaluate utility-function scripts (`func eval`) and list the function catalogue (`func list`)'),
  ).action(async (_opts, command: Command) => {
    const { funcEval } = await import('../actions/func.js');
    await funcEval(command);
  });

  evalOptions(
    func
      .command('eval')
      .alias('e')
      .description("evaluate a script: {{…}} is rendered first, then the JS runs; prints the result (--json: { result, rendered_script })")
      .argument('[script...]', 'the script (or use -e); with -f, the function arguments'),
  ).action(async (script: string[], _opts, command: Command) => {
    const { funcEval } = await import('../actions/func.js');
    await funcEval(command, script);
  });

  func
    .command('list')
    .alias('ls')
    .description('list the utility functions grouped by category')
    .argument('[category]', 'only this category (e.g. file, string, http)')
    .option('-s, --search <text>', 'only functions whose name or description contains text')
    .option('--example', 'show a usage example per function')
    .action(async (category: string | undefined, _opts, command: Command) => {
      const { funcList } = await import('../actions/func.js');
      await funcList(command, category);
    });
}

/** `osm eval` (aliases `e`, `ev`): shorthand for `osm func eval`. */
export function registerEvalShorthand(program: Command): void {
  evalOptions(
    program
      .command('eval')
      .aliases(['e', 'ev'])
      .description('shorthand for `osm func eval`')
      .argument('[script...]', 'the script (or use -e); with -f, the function arguments'),
  ).action(async (script: string[], _opts, command: Command) => {
    const { funcEval } = await import('../actions/func.js');
    await funcEval(command, script);
  });
}
