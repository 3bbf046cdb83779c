/**
 * PostgreSQL twin of src/store/migrations/007-orgs.ts: the orgs table (names unique
 * case-insensitively through the osm_nocase collation of 001), the default org, `org_uuid` on the
 * four org-scoped tables, and the same (partial) org indexes.
 */
import { DEFAULT_ORG_NAME, DEFAULT_ORG_UUID, NOT_DEFAULT_ORG as NOT_DEFAULT } from '../../org-constants.js';
import { PG_NOW } from './sql-helpers.js';

export const sql = /* sql */ `
CREATE TABLE orgs (
  uuid         TEXT PRIMARY KEY,
  name         TEXT COLLATE osm_nocase NOT NULL UNIQUE,
  description  TEXT NOT NULL DEFAULT '',
  tags         TEXT NOT NULL DEFAULT '[]',
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
INSERT INTO orgs (uuid, name, description, tags, created_at, updated_at)
  VALUES ('${DEFAULT_ORG_UUID}', '${DEFAULT_ORG_NAME}', 'Default organization', '[]', ${PG_NOW}, ${PG_NOW});

ALTER TABLE workspaces ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE assets ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE vulnerabilities ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';
ALTER TABLE runs ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '${DEFAULT_ORG_UUID}';

CREATE INDEX idx_workspaces_org ON workspaces (org_uuid, name);
CREATE INDEX idx_runs_org_created ON runs (org_uuid, created_at DESC, id DESC);
CREATE INDEX idx_assets_org_created ON assets (org_uuid, created_at DESC, id DESC) WHERE ${NOT_DEFAULT};
CREATE INDEX idx_vulns_org_created ON vulnerabilities (org_uuid, created_at DESC, id DESC) WHERE ${NOT_DEFAULT};
`;
