/**
 * Organizations. An org groups workspaces; the four org-scoped tables (workspaces, assets,
 * vulnerabilities, runs) carry `org_uuid`, NOT NULL with the default org as a constant DEFAULT, so
 * existing rows belong to the default org without being touched: SQLite's ADD COLUMN with a
 * constant default only edits the schema (O(1) on a table of millions of rows), it rewrites nothing.
 *
 * New rows take the org of their workspace's row (see src/store/orgs.ts `orgOfWorkspaceSql`), so
 * every row of a workspace shares the workspace's org: org stats and `?org=` totals are read from
 * the trigger-kept workspace counters. Org names are unique case-insensitively (COLLATE NOCASE).
 */
import { DEFAULT_ORG_NAME, DEFAULT_ORG_UUID, NOT_DEFAULT_ORG as NOT_DEFAULT } from '../org-constants.js';

const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

export const sql = /* sql */ `
CREATE TABLE orgs (
  uuid         TEXT PRIMARY KEY,
  name         TEXT NOT NULL UNIQUE COLLATE NOCASE,
  description  TEXT NOT NULL DEFAULT '',
  tags         TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
INSERT INTO orgs (uuid, name, description, tags, created_at, updated_at)
  VALUES ('${DEFAULT_ORG_UUID}', '${DEFAULT_ORG_NAME}', 'Default organization', '[]', ${NOW}, ${NOW});

ALTER TABLE workspaces ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE assets ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE vulnerabilities ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE runs ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';

-- Each serves the ?org= listing of its table in its sort order, and moving or purging an org's rows.
CREATE INDEX idx_workspaces_org ON workspaces (org_uuid, name);
CREATE INDEX idx_runs_org_created ON runs (org_uuid, created_at DESC, id DESC);
-- Assets and findings are bulk-imported: their org indexes leave the default org out, so rows of
-- the default org (every row of a database that never uses orgs) cost no index write on import
-- (a full index made inserting new assets ~8% more expensive). Queries name the same term
-- (${NOT_DEFAULT}) to use them; a default-org listing walks the created_at index instead.
CREATE INDEX idx_assets_org_created ON assets (org_uuid, created_at DESC, id DESC) WHERE ${NOT_DEFAULT};
CREATE INDEX idx_vulns_org_created ON vulnerabilities (org_uuid, created_at DESC, id DESC) WHERE ${NOT_DEFAULT};
`;
