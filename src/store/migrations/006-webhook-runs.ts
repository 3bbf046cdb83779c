/**
 * Webhook run templates (`osm run … --as-webhook`): what `/webhook-runs/{uuid}/trigger` starts.
 * The reference keeps them as `runs` rows with status `webhook`; here they have their own table so
 * the runs table (and every run listing) only ever holds the spec's run states. A trigger creates
 * an ordinary run; the template itself never runs.
 */
export const sql = /* sql */ `
CREATE TABLE webhook_runs (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_uuid       TEXT NOT NULL UNIQUE,
  workflow_name      TEXT NOT NULL,
  workflow_kind      TEXT NOT NULL,
  target             TEXT NOT NULL,
  params             TEXT NOT NULL DEFAULT '{}',
  options            TEXT NOT NULL DEFAULT '{}',
  workspace          TEXT NOT NULL DEFAULT '',
  priority           TEXT NOT NULL DEFAULT 'high',
  webhook_auth_key   TEXT NOT NULL DEFAULT '',
  trigger_count      INTEGER NOT NULL DEFAULT 0,
  last_triggered_at  TEXT,
  last_run_uuid      TEXT NOT NULL DEFAULT '',
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE INDEX idx_webhook_runs_created ON webhook_runs (created_at DESC, id DESC);
`;
