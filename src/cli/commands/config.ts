import type { Command } from 'commander';

/** `osm config`: view and edit osm-settings.yaml by dotted key (reference workflow-engine §5.3, server-api §9.4). */
export function registerConfig(program: Command): void {
  const config = program.command('config').description('view and edit the settings file (osm-settings.yaml) by dotted key');

  config
    .command('set')
    .description('set a value, e.g. `config set server.port 9000` or `config set server.port=9000`')
    .argument('[key]', 'dotted key (server.port, notification.webhooks.0.url, global_vars.NAME …), or key=value; <key>.clear empties it')
    .argument('[value...]', 'the value (typed by the settings schema)')
    .option('--from-file <file>', 'several `key value` lines (# comments; `-` or no key: read them from stdin)')
    .option('--show-secrets', 'echo secret values instead of [REDACTED]')
    .action(async (key: string | undefined, value: string[], _opts, command: Command) => {
      const { configSet } = await import('../actions/config.js');
      await configSet(command, key, value);
    });

  config
    .command('view')
    .description('print one value (a section prints as YAML); secrets are redacted')
    .argument('<key>', 'dotted key, e.g. server.port')
    .option('--show-secrets', 'print secret values instead of [REDACTED]')
    .option('--redact', 'redact secrets (the default; accepted for compatibility)')
    .action(async (key: string, _opts, command: Command) => {
      const { configView } = await import('../actions/config.js');
      await configView(command, key);
    });

  config
    .command('list')
    .alias('ls')
    .description('print every setting as `key = value`, sorted; secrets are redacted')
    .option('--show-secrets', 'print secret values instead of [REDACTED]')
    .action(async (_opts, command: Command) => {
      const { configList } = await import('../actions/config.js');
      await configList(command);
    });

  config
    .command('clean')
    .description('back up the settings file to <file>.backup and write a fresh one (new random secrets)')
    .option('--clean-ws', 'also empty the workspaces folder')
    .action(async (_opts, command: Command) => {
      const { configClean } = await import('../actions/config.js');
      await configClean(command);
    });
}
