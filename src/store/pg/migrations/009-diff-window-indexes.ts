/** PostgreSQL twin of src/store/migrations/009-diff-window-indexes.ts (same tables, columns and indexes; see ../README in migrations/index.ts). */
export const sql = /* sql */ `
DROP INDEX IF EXISTS idx_assets_ws_updated;
CREATE INDEX idx_assets_ws_updated ON assets (workspace, updated_at, created_at);
DROP INDEX IF EXISTS idx_assets_ws_seen;
CREATE INDEX idx_assets_ws_seen ON assets (workspace, last_seen_at, created_at);
DROP INDEX IF EXISTS idx_vulns_ws_updated;
CREATE INDEX idx_vulns_ws_updated ON vulnerabilities (workspace, updated_at, created_at);
DROP INDEX IF EXISTS idx_vulns_ws_seen;
CREATE INDEX idx_vulns_ws_seen ON vulnerabilities (workspace, last_seen_at, created_at);
`;
