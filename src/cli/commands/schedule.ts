import type { Command } from 'commander';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `osm schedule`: list, add, remove, enable, disable and trigger schedules (the daemon runs them). */
export function registerSchedule(program: Command): void {
  const schedule = program.command('schedule').alias('schedules').description('manage cron, event and watch schedules (run by `osm serve`)');

  schedule
    .command('list')
    .alias('ls')
    .description('list schedules, newest first')
    .option('--offset <n>', 'skip the first n schedules', '0')
    .option('--limit <n>', 'show at most n schedules', '100')
    .action(async (_opts, command: Command) => {
      const { scheduleList } = await import('../actions/schedule.js');
      await scheduleList(command);
    });

  schedule
    .command('add')
    .description('create a schedule, e.g. `schedule add -n nightly -w sample-recon -t example.com --cron "0 2 * * *"`')
    .requiredOption('-n, --name <name>', 'schedule name')
    .requiredOption('-w, --workflow <name>', 'workflow (flow or module) to run')
    .option('-t, --target <target>', 'target of the launched runs')
    .option('-p, --params <key=value>', 'workflow parameter (repeatable)', collect, [])
    .option('--cron <expr>', '5-field cron expression (minute hour day-of-month month day-of-week) or @daily …')
    .option('--event <topic>', 'event topic (exact or glob such as assets.*) that launches the workflow')
    .option('--watch <path>', 'file (inside the base or data folder) whose changes launch the workflow')
    .option('--manual', 'only run when triggered by hand')
    .option('--workspace <name>', 'workspace name of the launched runs')
    .option('--disabled', 'create it disabled')
    .action(async (_opts, command: Command) => {
      const { scheduleAdd } = await import('../actions/schedule.js');
      await scheduleAdd(command);
    });

  schedule
    .command('rm')
    .alias('remove')
    .description('delete a schedule')
    .argument('<id>', 'schedule id (sch_…)')
    .action(async (id: string, _opts, command: Command) => {
      const { scheduleRemove } = await import('../actions/schedule.js');
      await scheduleRemove(command, id);
    });

  for (const [name, enabled] of [['enable', true], ['disable', false]] as const) {
    schedule
      .command(name)
      .description(`${enabled ? 'enable' : 'disable'} a schedule`)
      .argument('<id>', 'schedule id (sch_…)')
      .action(async (id: string, _opts, command: Command) => {
        const { scheduleSetEnabled } = await import('../actions/schedule.js');
        await scheduleSetEnabled(command, id, enabled);
      });
  }

  schedule
    .command('trigger')
    .description('queue a run of the schedule now (a running `osm serve` executes it)')
    .argument('<id>', 'schedule id (sch_…)')
    .action(async (id: string, _opts, command: Command) => {
      const { scheduleTrigger } = await import('../actions/schedule.js');
      await scheduleTrigger(command, id);
    });
}
