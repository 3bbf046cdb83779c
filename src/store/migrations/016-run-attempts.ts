/**
 * Attempts of distributed runs (issue 15): every execution of a run on a worker is one row, with
 * its number (fencing token: a result of an older attempt is refused), the worker, start and end,
 * the outcome and why the attempt was made (`first`, `stalled`, `worker lost`, `retry`).
 */
export const sql = /* sql */ `
CREATE TABLE IF NOT EXISTS run_attempts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  run_uuid    TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  worker_id   TEXT NOT NULL DEFAULT '',
  started_at  TEXT NOT NULL,
  ended_at    TEXT,
  outcome     TEXT NOT NULL DEFAULT 'running',
  cause       TEXT NOT NULL DEFAULT 'first',
  error       TEXT NOT NULL DEFAULT '',
  UNIQUE (run_uuid, attempt)
);
CREATE INDEX IF NOT EXISTS idx_run_attempts_worker ON run_attempts (worker_id, outcome);
`;
