/** PostgreSQL twin of src/store/migrations/015-run-scope.ts (a run's scope layers and dropped counts). */
export const sql = /* sql */ `
CREATE TABLE run_scope (
  run_id      BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  layers      TEXT NOT NULL DEFAULT '[]',
  dropped     BIGINT NOT NULL DEFAULT 0,
  by_source   TEXT NOT NULL DEFAULT '{}',
  samples     TEXT NOT NULL DEFAULT '[]',
  updated_at  TEXT NOT NULL DEFAULT ''
);
`;
