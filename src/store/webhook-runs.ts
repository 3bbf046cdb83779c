/**
 * The `webhook_runs` table: run templates registered with `osm run … --as-webhook`, started by
 * `GET|POST /osm/api/webhook-runs/{uuid}/trigger`. A template is never executed itself; each
 * trigger creates an ordinary run and is counted here.
 */
import { randomUUID } from 'node:crypto';
import { listPage, nowIso, parseJson, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page, Priority } from './types.js';

export interface WebhookRunRecord {
  id: number;
  webhook_uuid: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params: Record<string, string>;
  /** Run options of the triggered runs (the CLI's flags: tactic, space, timeout …). */
  options: Record<string, unknown>;
  workspace: string;
  priority: Priority;
  /** Salted scrypt hash of the auth key (src/util/key-hash.ts); '' when the UUID alone triggers the template. */
  webhook_auth_key_hash: string;
  trigger_count: number;
  last_triggered_at: string | null;
  last_run_uuid: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookRunInput {
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params?: Record<string, string>;
  options?: object;
  workspace?: string;
  priority?: Priority;
  /** Already hashed (hashSecret): the key itself is never stored. */
  webhook_auth_key_hash?: string;
}

export interface WebhookRunsRepo {
  /** Inserts a template with a fresh UUID v4. */
  create(input: WebhookRunInput): WebhookRunRecord;
  getByUuid(uuid: string): WebhookRunRecord | undefined;
  /** Page of templates, newest first. */
  list(page: Page): ListResult<WebhookRunRecord>;
  /** Records one trigger: trigger_count + 1, last_triggered_at, last_run_uuid. */
  recordTrigger(uuid: string, runUuid: string): void;
  delete(uuid: string): boolean;
}

/** Maps a webhook_runs row to its record. */
export function mapWebhookRun(row: Row): WebhookRunRecord {
  return {
    ...(row as unknown as WebhookRunRecord),
    params: parseJson<Record<string, string>>(row.params, {}),
    options: parseJson<Record<string, unknown>>(row.options, {}),
  };
}

/** The INSERT of `create` (named parameters from webhookRunValues); dialect-neutral. */
export const WEBHOOK_RUN_INSERT_SQL = `INSERT INTO webhook_runs (webhook_uuid, workflow_name, workflow_kind, target, params, options, workspace, priority, webhook_auth_key_hash, created_at, updated_at)
   VALUES (@webhook_uuid, @workflow_name, @workflow_kind, @target, @params, @options, @workspace, @priority, @webhook_auth_key_hash, @now, @now)
   RETURNING *`;

/** The UPDATE of recordTrigger (positional: now, run uuid, now, webhook uuid). */
export const WEBHOOK_RUN_TRIGGER_SQL = 'UPDATE webhook_runs SET trigger_count = trigger_count + 1, last_triggered_at = ?, last_run_uuid = ?, updated_at = ? WHERE webhook_uuid = ?';

export function webhookRunValues(input: WebhookRunInput): Record<string, unknown> {
  return {
    webhook_uuid: randomUUID(),
    workflow_name: input.workflow_name,
    workflow_kind: input.workflow_kind,
    target: input.target,
    params: JSON.stringify(input.params ?? {}),
    options: JSON.stringify(input.options ?? {}),
    workspace: input.workspace ?? '',
    priority: input.priority ?? 'high',
    webhook_auth_key_hash: input.webhook_auth_key_hash ?? '',
    now: nowIso(),
  };
}

/** Creates the webhook_runs repository on one connection. */
export function createWebhookRunsRepo(db: Db, q: StatementCache): WebhookRunsRepo {
  return {
    create(input) {
      return mapWebhookRun(q(WEBHOOK_RUN_INSERT_SQL).get(webhookRunValues(input)) as Row);
    },

    getByUuid(uuid) {
      const row = q('SELECT * FROM webhook_runs WHERE webhook_uuid = ?').get(uuid) as Row | undefined;
      return row ? mapWebhookRun(row) : undefined;
    },

    list(page) {
      return listPage(db, q, { table: 'webhook_runs', where: new Where(), orderBy: 'created_at DESC, id DESC', map: mapWebhookRun }, page);
    },

    recordTrigger(uuid, runUuid) {
      const now = nowIso();
      q(WEBHOOK_RUN_TRIGGER_SQL).run(now, runUuid, now, uuid);
    },

    delete(uuid) {
      return q('DELETE FROM webhook_runs WHERE webhook_uuid = ?').run(uuid).changes > 0;
    },
  };
}
