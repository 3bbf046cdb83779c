/**
 * Webhook-triggered runs (reference server-api §1.4): `osm run … --as-webhook` registers one
 * template per workflow and target; `GET|POST /osm/api/webhook-runs/{uuid}/trigger` (public, the
 * template's own key, only with `server.enable_trigger_via_webhook`) creates an ordinary queued
 * run from it, which the daemon's run queue executes like any API run (priority high).
 *
 * Templates live in their own table, never in `runs`: run listings only show the spec's states.
 * Targets and params are untrusted everywhere: checked when the template is registered and again
 * (with any target the trigger request supplies) when a run is created from it.
 */
import { resolve } from 'node:path';
import { errors, isOsmError } from '../errors.js';
import type { Page, RunRecord, WebhookRunRecord } from '../store/index.js';
import { redactSettings } from '../settings/redact.js';
import { validateTarget } from '../workflow/target.js';
import { analyzeTarget } from '../workflow/heuristics.js';
import { unusableKey } from '../server/plugins/auth.js';
import { hashSecret, verifySecret } from '../util/key-hash.js';
import type { AppContext } from './context.js';
import { createRuns, normaliseTargets, validateRunInputs } from './runs.js';
import { checkRunOptions, requestOptionsOf, type RunOptions } from './run-options.js';
import { resolveWorkflowFile } from './workflows.js';
import { assertInstalledWorkflow } from './installed-workflow.js';

/** The trigger path of a template (`?key=` appended when a key is given). */
export function webhookTriggerPath(uuid: string, key?: string): string {
  const path = `/osm/api/webhook-runs/${uuid}/trigger`;
  return key ? `${path}?key=${encodeURIComponent(key)}` : path;
}

/** True when the daemon accepts triggers now (read live: a settings reload applies at once). */
export function webhookTriggersEnabled(app: AppContext): boolean {
  return Boolean(app.settings().settings.server.enable_trigger_via_webhook);
}

// ---- registration (the CLI) ----------------------------------------------------------------------

export interface RegisterWebhooksInput {
  /** Workflow names or paths as given on the command line (each must also be findable by name). */
  workflows: string[];
  targets: string[];
  params?: Record<string, string>;
  options?: RunOptions;
  /** `--webhook-auth-key`; absent or undefined = the UUID alone triggers the run. */
  authKey?: string;
}

/**
 * Registers one template per workflow and target, after the checks a normal run gets: the
 * workflow loads, targets and params pass the untrusted-input validation. The daemon finds the
 * workflow by name inside its workflows folder, so a workflow given as a path elsewhere (or
 * `--std-module`) is refused with an explanation rather than failing at trigger time.
 */
export async function registerWebhookRuns(app: AppContext, input: RegisterWebhooksInput): Promise<WebhookRunRecord[]> {
  const params = input.params ?? {};
  const targets = normaliseTargets(input.targets);
  if (targets.length === 0) throw errors.validation('At least one target is required (target, targets, target_file, or empty_target)');
  validateRunInputs(targets, params, { emptyTarget: input.options?.emptyTarget });
  if (input.authKey !== undefined && unusableKey(input.authKey)) {
    throw errors.validation('--webhook-auth-key must not be empty, whitespace, null, undefined or nil');
  }
  const workflows = input.workflows.map((given) => {
    const wf = app.loader.load(given);
    assertInstalledWorkflow(app, wf, '--as-webhook');
    return wf;
  });
  // Options of the triggered runs: the CLI's flags, with paths made absolute (the daemon has
  // another working directory) and the CLI-only target file dropped.
  const { targetFile: _tf, ...rest } = input.options ?? {};
  const options: RunOptions = checkRunOptions({ ...rest, ...(rest.workspacesOverride ? { workspacesOverride: resolve(rest.workspacesOverride) } : {}) });
  // Only a salted hash is stored: the key is shown once, by the command that registers it.
  // (One hash per registration: scrypt is slow on purpose, and these templates share the key.)
  const keyHash = input.authKey !== undefined ? hashSecret(input.authKey) : '';
  return app.repos.tx(async () => {
    const created: WebhookRunRecord[] = [];
    for (const wf of workflows) {
      for (const target of targets) {
        created.push(
          await app.repos.webhookRuns.create({
            workflow_name: wf.name,
            workflow_kind: wf.kind,
            target,
            params,
            options,
            workspace: analyzeTarget(target, { level: options.heuristics ?? 'basic', space: options.space }).targetSpace,
            priority: 'high',
            webhook_auth_key_hash: keyHash,
          }),
        );
      }
    }
    return created;
  });
}

// ---- listing and removal -------------------------------------------------------------------------

/** A template as the API shows it: `[REDACTED]` for a key (only its hash exists), secret-looking params redacted, plus its trigger path. */
export function webhookToApi(t: WebhookRunRecord) {
  const shown = {
    id: t.id,
    webhook_uuid: t.webhook_uuid,
    workflow_name: t.workflow_name,
    workflow_kind: t.workflow_kind,
    target: t.target,
    params: t.params,
    status: 'webhook' as const,
    trigger_type: 'webhook' as const,
    run_mode: 'webhook' as const,
    priority: t.priority,
    workspace: t.workspace,
    webhook_auth_key: t.webhook_auth_key_hash === '' ? '' : '[REDACTED]',
    trigger_count: t.trigger_count,
    last_triggered_at: t.last_triggered_at,
    last_run_uuid: t.last_run_uuid,
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
  // One redactor for every secret on display: the key, and secret-looking params (api_token …).
  return { ...redactSettings(shown), webhook_url: webhookTriggerPath(t.webhook_uuid) };
}

/** GET /webhook-runs/list: newest first. */
export async function listWebhookRuns(app: AppContext, page: Page) {
  const r = await app.repos.webhookRuns.list(page);
  return { data: r.data.map(webhookToApi), total: r.total };
}

/** DELETE /webhook-runs/{uuid}, `osm webhook delete`: runs already triggered are left alone. */
export async function deleteWebhookRun(app: AppContext, uuid: string): Promise<{ message: string; webhook_uuid: string }> {
  if (!(await app.repos.webhookRuns.delete(uuid))) throw errors.webhookNotFound();
  return { message: 'Webhook deleted', webhook_uuid: uuid };
}

// ---- trigger -------------------------------------------------------------------------------------

/** The optional body of a POST trigger; anything that is not a non-empty string is ignored. */
export interface TriggerOverrides {
  target?: string;
  flow?: string;
  module?: string;
}

/** Picks the override fields out of whatever body arrived (parse errors and wrong types are ignored, as the reference). */
export function overridesOf(body: unknown): TriggerOverrides {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const b = body as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  return { target: str(b.target), flow: str(b.flow), module: str(b.module) };
}

export interface TriggerAnswer {
  message: 'Run triggered successfully';
  run_uuid: string;
  run_id: number;
  target: string;
  workflow: string;
}

/**
 * Triggers a template: 404 `Webhook not found`, 401 `Invalid or missing authentication key`
 * (the key checked against its stored scrypt hash, in constant time), optional overrides (`module`
 * wins over `flow`; a target override is validated like any API target), then one queued run
 * (trigger_type webhook, priority high) that the run queue executes. The template is unchanged
 * except for its trigger count.
 */
export async function triggerWebhookRun(app: AppContext, uuid: string, key: unknown, overrides: TriggerOverrides, kick?: () => void): Promise<{ answer: TriggerAnswer; run: RunRecord }> {
  const found = uuid ? await app.repos.webhookRuns.getByUuid(uuid) : undefined;
  if (!found) throw errors.webhookNotFound();
  if (found.webhook_auth_key_hash !== '') {
    const given = typeof key === 'string' ? key : '';
    if (unusableKey(given) || !(await verifySecret(given, found.webhook_auth_key_hash))) throw errors.webhookKey();
  }
  // Deleted while the key was being checked: as if it had never existed.
  const tpl = await app.repos.webhookRuns.getByUuid(found.webhook_uuid);
  if (!tpl) throw errors.webhookNotFound();

  let name = tpl.workflow_name;
  let wantKind: string | undefined;
  if (overrides.flow) [name, wantKind] = [overrides.flow, 'flow'];
  if (overrides.module) [name, wantKind] = [overrides.module, 'module'];
  let file: string;
  try {
    file = await resolveWorkflowFile(app, name);
  } catch (err) {
    if (isOsmError(err) && err.code === 'OSM_ERR_API_WORKFLOW_NOT_FOUND') throw errors.webhookWorkflowNotFound(name);
    throw err; // 'Invalid workflow name' (a path in an override) stays a 400
  }
  const wf = app.loader.loadFile(file);
  if (wantKind && wf.kind !== wantKind) throw errors.validation(`'${name}' is a ${wf.kind}, not a ${wantKind}`);

  // Templates are registered by the operator's CLI; still, only allowlisted keys become run options.
  const options = requestOptionsOf(tpl.options, { operator: true });
  const target = overrides.target ?? tpl.target;
  // createRuns skips the target check for empty-target templates: an override is always checked.
  if (overrides.target !== undefined) validateTarget(target, 'target');

  const run = await app.repos.tx(async () => {
    const created = await createRuns(app, {
      workflow: wf,
      targets: [target],
      params: tpl.params,
      priority: 'high',
      status: 'queued',
      triggerType: 'webhook',
      triggerName: `webhook:${tpl.id}`,
      options,
    });
    const r = created.runs[0]!;
    await app.repos.webhookRuns.recordTrigger(tpl.webhook_uuid, r.run_uuid);
    await app.repos.events.insert({
      topic: 'webhook.received', name: 'webhook.received', source: 'webhook', source_type: 'webhook', data_type: 'scan',
      data: { webhook_id: tpl.id, scan_id: r.run_uuid, target: r.target, workflow: r.workflow_name },
      workspace: r.workspace, run_id: r.run_uuid, workflow_name: r.workflow_name, processed: true,
    });
    return r;
  });
  kick?.();
  return {
    run,
    answer: { message: 'Run triggered successfully', run_uuid: run.run_uuid, run_id: run.id, target: run.target, workflow: run.workflow_name },
  };
}
