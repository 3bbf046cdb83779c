/**
 * Implementation of `osm webhook list|delete`, imported lazily by commands/webhook.ts. The use
 * cases are the API's (services/webhook-runs.ts); keys are redacted unless --show-secrets.
 */
import type { Command } from 'commander';
import { optionsOf, type GlobalOptions } from '../context.js';
import { colorEnabled, createUi, renderTable } from '../output.js';
import type { AppContext } from '../../services/context.js';
import { openApp, withApp } from '../app.js';
import { deleteWebhookRun, webhookToApi, webhookTriggersEnabled } from '../../services/webhook-runs.js';
import { MAX_LIMIT } from '../../server/route.js';


/**
 * `osm webhook list [--show-secrets]`. Keys are stored as hashes, so even --show-secrets cannot
 * show them: it says so (the key was printed once, when the template was registered).
 */
export async function webhookList(command: Command): Promise<void> {
  const opts = optionsOf<{ showSecrets?: boolean }>(command);
  const ui = createUi(opts);
  const { rows, total, enabled } = await withApp(opts, async (app) => {
    const page = await app.repos.webhookRuns.list({ offset: 0, limit: MAX_LIMIT });
    return { rows: page.data.map(webhookToApi), total: page.total, enabled: webhookTriggersEnabled(app) };
  });
  if (opts.showSecrets && rows.some((r) => r.webhook_auth_key !== '')) {
    // stderr: `--json` output stays parseable.
    ui.err('⚠ webhook auth keys are stored as hashes and cannot be shown: each was printed once, by the `osm run … --as-webhook --webhook-auth-key` that registered it');
  }
  if (opts.json) {
    ui.json({ data: rows, total });
    return;
  }
  if (total === 0) {
    ui.info('No webhook run templates. Create one with `osm run -m <module> -t <target> --as-webhook [--webhook-auth-key K]`.');
    return;
  }
  const table = rows.map((r) => [
    r.webhook_uuid,
    `${r.workflow_name} (${r.workflow_kind})`,
    r.target,
    r.webhook_auth_key === '' ? '(none)' : r.webhook_auth_key,
    r.trigger_count,
    r.last_triggered_at ?? '',
    r.webhook_url,
  ]);
  ui.out(await renderTable(['UUID', 'Workflow', 'Target', 'Key', 'Triggers', 'Last trigger', 'Trigger (POST)'], table, { color: colorEnabled(opts.disableColor) }));
  if (!enabled) ui.warn('server.enable_trigger_via_webhook is false: the daemon answers 404 to triggers until it is set to true');
}

/** `osm webhook delete <uuid>`. */
export async function webhookDelete(command: Command, uuid: string): Promise<void> {
  const opts = optionsOf<GlobalOptions>(command);
  const ui = createUi(opts);
  const res = await withApp(opts, (app) => deleteWebhookRun(app, uuid));
  if (opts.json) ui.json(res);
  else ui.success(`Webhook ${uuid} deleted`);
}
