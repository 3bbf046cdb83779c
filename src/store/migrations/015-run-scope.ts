/**
 * Target scope of a run (docs/scope.md): the layers in force (entry texts, for the record) and how
 * many values were dropped as out of scope — foreach items and imported rows — by source, with the
 * first few dropped values. One row per run that had a scope; it goes with the run.
 */
export const sql = /* sql */ `
CREATE TABLE IF NOT EXISTS run_scope (
  run_id      INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  layers      TEXT NOT NULL DEFAULT '[]',
  dropped     INTEGER NOT NULL DEFAULT 0,
  by_source   TEXT NOT NULL DEFAULT '{}',
  samples     TEXT NOT NULL DEFAULT '[]',
  updated_at  TEXT NOT NULL DEFAULT ''
);
`;
