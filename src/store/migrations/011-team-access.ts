/**
 * Team access (users, roles, API tokens, JWT revocation, audit log). Org bindings are JSON arrays
 * of org uuids: they are read whole with the credential on every request and never queried by.
 */
export const sql = /* sql */ `
CREATE TABLE users (
  id             INTEGER PRIMARY KEY,
  username       TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash  TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  orgs           TEXT NOT NULL DEFAULT '[]',
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE api_tokens (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  token_hash    TEXT NOT NULL UNIQUE,
  token_prefix  TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  orgs          TEXT NOT NULL DEFAULT '[]',
  created_by    TEXT NOT NULL DEFAULT '',
  expires_at    TEXT,
  revoked_at    TEXT,
  last_used_at  TEXT,
  created_at    TEXT NOT NULL
);
-- A name identifies one live token; a revoked token's name can be used again.
CREATE UNIQUE INDEX idx_api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;

-- JWT revocation: a token carries the version current at login; logout and password changes bump it.
CREATE TABLE auth_versions (
  username       TEXT PRIMARY KEY COLLATE NOCASE,
  token_version  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE audit_log (
  id          INTEGER PRIMARY KEY,
  created_at  TEXT NOT NULL,
  actor       TEXT NOT NULL,
  actor_kind  TEXT NOT NULL,
  role        TEXT NOT NULL DEFAULT '',
  orgs        TEXT NOT NULL DEFAULT '[]',
  method      TEXT NOT NULL,
  route       TEXT NOT NULL,
  path        TEXT NOT NULL,
  object      TEXT NOT NULL DEFAULT '',
  status      INTEGER NOT NULL,
  result      TEXT NOT NULL,
  client_ip   TEXT NOT NULL DEFAULT '',
  detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_audit_created ON audit_log (created_at, id);
CREATE INDEX idx_audit_actor ON audit_log (actor, created_at);
`;
