/**
 * PostgreSQL twin of src/store/migrations/019-attempt-fence.ts, with the fence itself.
 *
 * A worker executing attempt N of a distributed run writes through connections opened with
 * `osm.fence_run` and `osm.fence_attempt` set (src/store/pg/fence.ts). Before every write
 * statement on the tables a run can touch, `osm_fence_check` locks the run's row FOR KEY SHARE and
 * refuses the statement (SQLSTATE OSMF1) unless `runs.fence_attempt` is still N. The next attempt
 * raises the fence under a FOR UPDATE lock of the same row (attempts.claimRun), which waits for the
 * statements already past their check and makes every later one fail: a worker that lost its
 * lease can write nothing more, whatever path the write takes (engine, evaluator processes,
 * bridge threads). Connections without the settings (the master, daemons, tools) are not fenced.
 * The counter tables are written only by triggers of already-checked statements, and the
 * bookkeeping tables (migrations, leases, attempts, store_meta) are the fencing's own.
 */
export const FENCED_TABLES = [
  'runs', 'step_results', 'event_logs', 'artifacts', 'assets', 'asset_history', 'asset_diffs',
  'vulnerabilities', 'vuln_history', 'vuln_diffs', 'workspaces', 'run_scope', 'workflows',
  'schedules', 'webhook_runs', 'orgs', 'users', 'api_tokens', 'audit_log', 'auth_versions',
] as const;

export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN fence_attempt BIGINT NOT NULL DEFAULT 0;
CREATE TABLE store_meta (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL DEFAULT ''
);
INSERT INTO store_meta (key, value) VALUES ('store_id', replace(gen_random_uuid()::text, '-', ''))
  ON CONFLICT (key) DO NOTHING;
CREATE FUNCTION osm_fence_check() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  fence_run text := current_setting('osm.fence_run', true);
  fence_attempt text;
  current_attempt bigint;
BEGIN
  IF fence_run IS NULL OR fence_run = '' THEN
    RETURN NULL;
  END IF;
  fence_attempt := current_setting('osm.fence_attempt', true);
  SELECT r.fence_attempt INTO current_attempt FROM runs r WHERE r.run_uuid = fence_run FOR KEY SHARE;
  IF current_attempt IS NULL OR current_attempt::text IS DISTINCT FROM fence_attempt THEN
    RAISE EXCEPTION 'attempt % of run % is fenced off: the run now belongs to attempt %', fence_attempt, fence_run, coalesce(current_attempt::text, '(run deleted)')
      USING ERRCODE = 'OSMF1';
  END IF;
  RETURN NULL;
END
$fn$;
${FENCED_TABLES.map((t) => `CREATE TRIGGER osm_fence_${t} BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION osm_fence_check();`).join('\n')}
`;
