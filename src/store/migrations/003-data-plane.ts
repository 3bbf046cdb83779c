/**
 * Data plane: field-level history of assets and vulnerabilities (so diffs can say what changed,
 * old → new), and the file-based workspace counters of the reference that 001 did not have.
 * History rows go with their asset or finding (ON DELETE CASCADE); values are JSON text so a
 * number stays a number and a tech list stays a list.
 */
export const sql = /* sql */ `
ALTER TABLE workspaces ADD COLUMN total_links INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN total_content INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN total_archive INTEGER NOT NULL DEFAULT 0;

CREATE TABLE asset_history (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  asset_id    INTEGER NOT NULL REFERENCES assets(id) ON DELETE CASCADE,
  workspace   TEXT NOT NULL,
  field       TEXT NOT NULL,
  old_value   TEXT NOT NULL,
  new_value   TEXT NOT NULL,
  changed_at  TEXT NOT NULL
);
CREATE INDEX idx_asset_history_asset ON asset_history (asset_id);
CREATE INDEX idx_asset_history_ws ON asset_history (workspace, changed_at);

CREATE TABLE vuln_history (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  vuln_id     INTEGER NOT NULL REFERENCES vulnerabilities(id) ON DELETE CASCADE,
  workspace   TEXT NOT NULL,
  field       TEXT NOT NULL,
  old_value   TEXT NOT NULL,
  new_value   TEXT NOT NULL,
  changed_at  TEXT NOT NULL
);
CREATE INDEX idx_vuln_history_vuln ON vuln_history (vuln_id);
CREATE INDEX idx_vuln_history_ws ON vuln_history (workspace, changed_at);
`;
