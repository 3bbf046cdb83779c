/**
 * Stored vulnerability diff snapshots: `vuln_diffs`, with the columns and indexes of `asset_diffs`
 * (migration 001). A row is written next to the asset one when a run completes, linked by run_id.
 */
export const sql = /* sql */ `
CREATE TABLE vuln_diffs (
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
CREATE INDEX idx_vuln_diffs_ws ON vuln_diffs (workspace_name, created_at DESC, id DESC);
CREATE INDEX idx_vuln_diffs_created ON vuln_diffs (created_at DESC, id DESC);
`;
