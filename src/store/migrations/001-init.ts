/**
 * Initial schema. Column names are the spec's field names (spec/http-api.md "Resources") plus the
 * reference's extra columns where the engine needs them. Timestamps are ISO 8601 UTC text
 * (`2026-01-15T10:30:00.123Z`), which sorts lexically. JSON columns hold JSON text.
 */
export const sql = /* sql */ `
CREATE TABLE runs (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  run_uuid         TEXT NOT NULL UNIQUE,
  workflow_name    TEXT NOT NULL,
  workflow_kind    TEXT NOT NULL,
  target           TEXT NOT NULL,
  params           TEXT NOT NULL DEFAULT '{}',
  status           TEXT NOT NULL CHECK (status IN ('pending','queued','running','completed','failed','cancelled')),
  workspace        TEXT NOT NULL DEFAULT '',
  started_at       TEXT,
  completed_at     TEXT,
  error_message    TEXT NOT NULL DEFAULT '',
  schedule_id      TEXT NOT NULL DEFAULT '',
  trigger_type     TEXT NOT NULL DEFAULT 'manual',
  trigger_name     TEXT NOT NULL DEFAULT '',
  run_group_id     TEXT NOT NULL DEFAULT '',
  priority         TEXT NOT NULL DEFAULT 'normal',
  priority_rank    INTEGER NOT NULL DEFAULT 2,
  run_mode         TEXT NOT NULL DEFAULT 'local',
  total_steps      INTEGER NOT NULL DEFAULT 0,
  completed_steps  INTEGER NOT NULL DEFAULT 0,
  current_pid      INTEGER NOT NULL DEFAULT 0,
  hooks_enabled    INTEGER NOT NULL DEFAULT 0,
  timeout_seconds  INTEGER NOT NULL DEFAULT 0,
  runner_type      TEXT NOT NULL DEFAULT 'host',
  options          TEXT NOT NULL DEFAULT '{}',
  owner_pid        INTEGER NOT NULL DEFAULT 0,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX idx_runs_created ON runs (created_at DESC, id DESC);
CREATE INDEX idx_runs_status_created ON runs (status, created_at DESC, id DESC);
CREATE INDEX idx_runs_workspace_created ON runs (workspace, created_at DESC, id DESC);
CREATE INDEX idx_runs_workflow_created ON runs (workflow_name, created_at DESC, id DESC);
CREATE INDEX idx_runs_group ON runs (run_group_id, created_at, id);
-- Substring filters cannot seek; this lets them scan a narrow covering index instead of the table.
CREATE INDEX idx_runs_target ON runs (target);
CREATE INDEX idx_runs_queue ON runs (status, priority_rank DESC, id ASC);
-- Reconciliation looks for rows that still claim a live process; few rows, so a partial index.
CREATE INDEX idx_runs_pid ON runs (current_pid) WHERE current_pid > 0;

CREATE TABLE step_results (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  step_uuid      TEXT NOT NULL UNIQUE,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  run_uuid       TEXT NOT NULL,
  workspace      TEXT NOT NULL DEFAULT '',
  module_name    TEXT NOT NULL DEFAULT '',
  step_name      TEXT NOT NULL,
  step_type      TEXT NOT NULL,
  step_index     INTEGER NOT NULL DEFAULT 0,
  status         TEXT NOT NULL CHECK (status IN ('pending','running','completed','failed','skipped')),
  command        TEXT NOT NULL DEFAULT '',
  output         TEXT NOT NULL DEFAULT '',
  error_message  TEXT NOT NULL DEFAULT '',
  exports        TEXT NOT NULL DEFAULT '{}',
  duration_ms    INTEGER NOT NULL DEFAULT 0,
  log_file       TEXT NOT NULL DEFAULT '',
  started_at     TEXT,
  completed_at   TEXT,
  created_at     TEXT NOT NULL
);
CREATE INDEX idx_steps_run ON step_results (run_id, id);
CREATE INDEX idx_steps_workspace ON step_results (workspace, id DESC);
CREATE INDEX idx_steps_status ON step_results (status, id DESC);
CREATE INDEX idx_steps_type ON step_results (step_type, id DESC);

CREATE TABLE artifacts (
  id             TEXT PRIMARY KEY,
  run_id         INTEGER NOT NULL DEFAULT 0,
  workspace      TEXT NOT NULL,
  name           TEXT NOT NULL,
  artifact_path  TEXT NOT NULL,
  artifact_type  TEXT NOT NULL DEFAULT 'output',
  content_type   TEXT NOT NULL DEFAULT 'unknown',
  size_bytes     INTEGER NOT NULL DEFAULT 0,
  line_count     INTEGER NOT NULL DEFAULT 0,
  optional       INTEGER NOT NULL DEFAULT 0,
  description    TEXT NOT NULL DEFAULT '',
  created_at     TEXT NOT NULL
);
CREATE INDEX idx_artifacts_run ON artifacts (run_id, created_at DESC);
CREATE INDEX idx_artifacts_workspace ON artifacts (workspace, created_at DESC);
CREATE INDEX idx_artifacts_created ON artifacts (created_at DESC);
CREATE UNIQUE INDEX idx_artifacts_ws_name_path ON artifacts (workspace, name, artifact_path, run_id);

CREATE TABLE assets (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace       TEXT NOT NULL,
  asset_value     TEXT NOT NULL,
  url             TEXT NOT NULL DEFAULT '',
  input           TEXT NOT NULL DEFAULT '',
  scheme          TEXT NOT NULL DEFAULT '',
  method          TEXT NOT NULL DEFAULT '',
  path            TEXT NOT NULL DEFAULT '',
  status_code     INTEGER NOT NULL DEFAULT 0,
  content_type    TEXT NOT NULL DEFAULT '',
  content_length  INTEGER NOT NULL DEFAULT 0,
  title           TEXT NOT NULL DEFAULT '',
  words           INTEGER NOT NULL DEFAULT 0,
  lines           INTEGER NOT NULL DEFAULT 0,
  host_ip         TEXT NOT NULL DEFAULT '',
  a               TEXT NOT NULL DEFAULT '[]',
  tls             TEXT NOT NULL DEFAULT '',
  asset_type      TEXT NOT NULL DEFAULT '',
  tech            TEXT NOT NULL DEFAULT '[]',
  time            TEXT NOT NULL DEFAULT '',
  remarks         TEXT NOT NULL DEFAULT '',
  source          TEXT NOT NULL DEFAULT '',
  is_cdn          INTEGER NOT NULL DEFAULT 0,
  is_cloud        INTEGER NOT NULL DEFAULT 0,
  is_waf          INTEGER NOT NULL DEFAULT 0,
  raw_json_data   TEXT NOT NULL DEFAULT '',
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  last_seen_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_assets_unique ON assets (workspace, asset_value, url);
CREATE INDEX idx_assets_ws_created ON assets (workspace, created_at DESC, id DESC);
CREATE INDEX idx_assets_created ON assets (created_at DESC, id DESC);
CREATE INDEX idx_assets_ws_type ON assets (workspace, asset_type, created_at DESC, id DESC);
CREATE INDEX idx_assets_ws_status ON assets (workspace, status_code, created_at DESC, id DESC);
CREATE INDEX idx_assets_type ON assets (asset_type, created_at DESC, id DESC);
CREATE INDEX idx_assets_status ON assets (status_code, created_at DESC, id DESC);
CREATE INDEX idx_assets_ws_updated ON assets (workspace, updated_at);
CREATE INDEX idx_assets_ws_seen ON assets (workspace, last_seen_at);

CREATE TABLE asset_diffs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_name  TEXT NOT NULL,
  from_time       TEXT NOT NULL,
  to_time         TEXT NOT NULL,
  total_added     INTEGER NOT NULL DEFAULT 0,
  total_removed   INTEGER NOT NULL DEFAULT 0,
  total_changed   INTEGER NOT NULL DEFAULT 0,
  diff_data       TEXT NOT NULL DEFAULT '{}',
  run_id          INTEGER NOT NULL DEFAULT 0,
  created_at      TEXT NOT NULL
);
CREATE INDEX idx_asset_diffs_ws ON asset_diffs (workspace_name, created_at DESC, id DESC);
CREATE INDEX idx_asset_diffs_created ON asset_diffs (created_at DESC, id DESC);

CREATE TABLE vulnerabilities (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace             TEXT NOT NULL,
  vuln_info             TEXT NOT NULL DEFAULT '',
  vuln_title            TEXT NOT NULL DEFAULT '',
  vuln_desc             TEXT NOT NULL DEFAULT '',
  vuln_poc              TEXT NOT NULL DEFAULT '',
  -- Constrained so the per-severity counters always add up to the total.
  severity              TEXT NOT NULL DEFAULT 'info' CHECK (severity IN ('critical','high','medium','low','info')),
  confidence            TEXT NOT NULL DEFAULT 'Certain',
  asset_type            TEXT NOT NULL DEFAULT '',
  asset_value           TEXT NOT NULL DEFAULT '',
  template_id           TEXT NOT NULL DEFAULT '',
  matcher_name          TEXT NOT NULL DEFAULT '',
  tags                  TEXT NOT NULL DEFAULT '[]',
  detail_http_request   TEXT NOT NULL DEFAULT '',
  detail_http_response  TEXT NOT NULL DEFAULT '',
  raw_vuln_json         TEXT NOT NULL DEFAULT '',
  fingerprint           TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL,
  last_seen_at          TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_vulns_fingerprint ON vulnerabilities (fingerprint) WHERE fingerprint IS NOT NULL;
CREATE INDEX idx_vulns_created ON vulnerabilities (created_at DESC, id DESC);
CREATE INDEX idx_vulns_ws_created ON vulnerabilities (workspace, created_at DESC, id DESC);
CREATE INDEX idx_vulns_ws_sev_created ON vulnerabilities (workspace, severity, created_at DESC, id DESC);
CREATE INDEX idx_vulns_sev_created ON vulnerabilities (severity, created_at DESC, id DESC);
CREATE INDEX idx_vulns_conf ON vulnerabilities (confidence, created_at DESC, id DESC);
CREATE INDEX idx_vulns_asset ON vulnerabilities (asset_value);
CREATE INDEX idx_vulns_ws_updated ON vulnerabilities (workspace, updated_at);
CREATE INDEX idx_vulns_ws_seen ON vulnerabilities (workspace, last_seen_at);

CREATE TABLE event_logs (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  topic         TEXT NOT NULL,
  event_id      TEXT NOT NULL,
  name          TEXT NOT NULL DEFAULT '',
  source        TEXT NOT NULL DEFAULT '',
  source_type   TEXT NOT NULL DEFAULT '',
  data_type     TEXT NOT NULL DEFAULT '',
  data          TEXT NOT NULL DEFAULT '{}',
  workspace     TEXT NOT NULL DEFAULT '',
  run_id        TEXT NOT NULL DEFAULT '',
  workflow_name TEXT NOT NULL DEFAULT '',
  processed     INTEGER NOT NULL DEFAULT 0,
  processed_at  TEXT,
  error         TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL
);
CREATE INDEX idx_events_topic ON event_logs (topic, id DESC);
CREATE INDEX idx_events_workspace ON event_logs (workspace, id DESC);
CREATE INDEX idx_events_run ON event_logs (run_id, id DESC);
CREATE INDEX idx_events_source ON event_logs (source, id DESC);
CREATE INDEX idx_events_name ON event_logs (name, id DESC);
CREATE INDEX idx_events_workflow ON event_logs (workflow_name, id DESC);
CREATE INDEX idx_events_processed ON event_logs (processed, id DESC);

CREATE TABLE schedules (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  workflow_name  TEXT NOT NULL,
  workflow_kind  TEXT NOT NULL DEFAULT '',
  workflow_path  TEXT NOT NULL DEFAULT '',
  trigger_name   TEXT NOT NULL DEFAULT '',
  trigger_type   TEXT NOT NULL DEFAULT 'cron',
  schedule       TEXT NOT NULL DEFAULT '',
  event_topic    TEXT NOT NULL DEFAULT '',
  watch_path     TEXT NOT NULL DEFAULT '',
  input_config   TEXT NOT NULL DEFAULT '{}',
  is_enabled     INTEGER NOT NULL DEFAULT 1,
  last_run       TEXT,
  next_run       TEXT,
  run_count      INTEGER NOT NULL DEFAULT 0,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
CREATE INDEX idx_schedules_created ON schedules (created_at DESC);
CREATE INDEX idx_schedules_enabled ON schedules (is_enabled);

CREATE TABLE workflows (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  name             TEXT NOT NULL UNIQUE,
  kind             TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  tags             TEXT NOT NULL DEFAULT '[]',
  file_path        TEXT NOT NULL,
  params           TEXT NOT NULL DEFAULT '[]',
  required_params  TEXT NOT NULL DEFAULT '[]',
  step_count       INTEGER NOT NULL DEFAULT 0,
  module_count     INTEGER NOT NULL DEFAULT 0,
  hidden           INTEGER NOT NULL DEFAULT 0,
  checksum         TEXT NOT NULL,
  indexed_at       TEXT NOT NULL
);
CREATE INDEX idx_workflows_kind ON workflows (kind, name);
CREATE INDEX idx_workflows_hidden ON workflows (hidden, name);
CREATE INDEX idx_workflows_checksum ON workflows (checksum);

CREATE TABLE workspaces (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  name                  TEXT NOT NULL UNIQUE,
  data_source           TEXT NOT NULL DEFAULT 'local',
  local_path            TEXT NOT NULL DEFAULT '',
  state_execution_log   TEXT NOT NULL DEFAULT '',
  state_completed_file  TEXT NOT NULL DEFAULT '',
  state_workflow_file   TEXT NOT NULL DEFAULT '',
  total_assets          INTEGER NOT NULL DEFAULT 0,
  total_subdomains      INTEGER NOT NULL DEFAULT 0,
  total_urls            INTEGER NOT NULL DEFAULT 0,
  total_ips             INTEGER NOT NULL DEFAULT 0,
  total_vulns           INTEGER NOT NULL DEFAULT 0,
  vuln_critical         INTEGER NOT NULL DEFAULT 0,
  vuln_high             INTEGER NOT NULL DEFAULT 0,
  vuln_medium           INTEGER NOT NULL DEFAULT 0,
  vuln_low              INTEGER NOT NULL DEFAULT 0,
  vuln_info             INTEGER NOT NULL DEFAULT 0,
  risk_score            REAL NOT NULL DEFAULT 0,
  last_run              TEXT,
  run_workflow          TEXT NOT NULL DEFAULT '',
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);
CREATE INDEX idx_workspaces_source ON workspaces (data_source, name);

-- Counters kept exact by triggers (migration 002) so /stats never counts whole tables.
CREATE TABLE counters (
  name   TEXT PRIMARY KEY,
  value  INTEGER NOT NULL DEFAULT 0
);
`;
