import type { Command } from 'commander';

/** `osm webhook list|delete`: the templates `osm run … --as-webhook` registered. */
export function registerWebhook(program: Command): void {
  const webhook = program.command('webhook').alias('webhooks').description('webhook run templates (create them with `osm run … --as-webhook`)');

  webhook
    .command('list')
    .alias('ls')
    .description('list webhook run templates, newest first (auth keys redacted)')
    .option('--show-secrets', 'accepted for compatibility: keys are stored as hashes and cannot be shown again')
    .action(async (_opts, command: Command) => {
      const { webhookList } = await import('../actions/webhook.js');
      await webhookList(command);
    });

  webhook
    .command('delete')
    .alias('rm')
    .description('delete a webhook run template (runs it started are kept)')
    .argument('<uuid>', 'webhook_uuid')
    .action(async (uuid: string, _opts, command: Command) => {
      const { webhookDelete } = await import('../actions/webhook.js');
      await webhookDelete(command, uuid);
    });
}
