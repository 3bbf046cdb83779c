/**
 * The counters of migrations 002 and 004 kept by STATEMENT triggers with transition tables
 * instead of row triggers. A row trigger updated the same hot rows (`counters`, the workspace
 * row, the facet counts) once per inserted row: inside one bulk-import transaction every update
 * adds a row version PostgreSQL cannot prune until the transaction ends, so each next update
 * walks a longer chain and a 1,000-row batch costs quadratically. A statement trigger aggregates
 * the statement's rows (`new_rows` / `old_rows`) and touches each hot row once. Same counts as
 * before (the pg-schema and engine tests check them against COUNT(*)). Only INSERT and DELETE
 * move to statement triggers: the UPDATE triggers of 002/004 stay row triggers, because they fire
 * only WHEN a counted column changes (rare), while a statement trigger with transition tables
 * cannot have a column list and would join every updated row's old and new versions — on every
 * re-import's `last_seen_at` update.
 * (SQLite's twin, src/store/migrations/018-statement-triggers.ts, changes nothing.)
 */
import { PG_NOW } from './sql-helpers.js';

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

function fn(name: string, body: string): string {
  return `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
${body}
  RETURN NULL;
END
$fn$;`;
}

function trigger(name: string, table: string, event: 'INSERT' | 'DELETE'): string {
  const ref = event === 'INSERT' ? 'NEW TABLE AS new_rows' : 'OLD TABLE AS old_rows';
  return `CREATE TRIGGER ${name} AFTER ${event} ON ${table} REFERENCING ${ref} FOR EACH STATEMENT EXECUTE FUNCTION ${name}();`;
}

const drop = (name: string, table: string) => `DROP TRIGGER IF EXISTS ${name} ON ${table};\nDROP FUNCTION IF EXISTS ${name}();`;

/** Workspace rows for the workspaces of `rows` (a relation with a `workspace` column). */
const ensureWorkspaces = (rows: string) =>
  `  INSERT INTO workspaces (name, data_source, created_at, updated_at) SELECT DISTINCT workspace, 'local', ${PG_NOW}, ${PG_NOW} FROM ${rows} r
    ON CONFLICT (name) DO NOTHING;`;

/** Asset counters (total, per workspace, per status code and type) for the rows of `rows`, added or taken away. */
function assetEffect(rows: string, sign: '+' | '-'): string {
  const facet = (table: string, column: string) =>
    sign === '+'
      ? `  INSERT INTO ${table} (workspace, ${column}, n) SELECT workspace, ${column}, COUNT(*) FROM ${rows} r GROUP BY workspace, ${column}
    ON CONFLICT (workspace, ${column}) DO UPDATE SET n = ${table}.n + EXCLUDED.n;`
      : `  UPDATE ${table} c SET n = c.n - d.n FROM (SELECT workspace, ${column}, COUNT(*) AS n FROM ${rows} r GROUP BY workspace, ${column}) d
    WHERE c.workspace = d.workspace AND c.${column} = d.${column};`;
  return `  UPDATE counters SET value = value ${sign} (SELECT COUNT(*) FROM ${rows} r) WHERE name = 'assets.total';
${sign === '+' ? ensureWorkspaces(rows) : ''}
  UPDATE workspaces w SET total_assets = w.total_assets ${sign} d.n FROM (SELECT workspace, COUNT(*) AS n FROM ${rows} r GROUP BY workspace) d WHERE w.name = d.workspace;
${facet('asset_status_counts', 'status_code')}
${facet('asset_type_counts', 'asset_type')}`;
}

/** Vulnerability counters (total and per severity, globally and per workspace) for `rows`. */
function vulnEffect(rows: string, sign: '+' | '-'): string {
  const perSeverity = SEVERITIES.map((s) => `vuln_${s} = w.vuln_${s} ${sign} d.${s}`).join(', ');
  const filters = SEVERITIES.map((s) => `COUNT(*) FILTER (WHERE severity = '${s}') AS ${s}`).join(', ');
  return `${sign === '+' ? ensureWorkspaces(rows) : ''}
  UPDATE counters c SET value = c.value ${sign} d.n
    FROM (SELECT 'vulns.total' AS name, COUNT(*) AS n FROM ${rows} r UNION ALL SELECT 'vulns.' || severity, COUNT(*) FROM ${rows} r GROUP BY severity) d
    WHERE c.name = d.name;
  UPDATE workspaces w SET total_vulns = w.total_vulns ${sign} d.n, ${perSeverity}
    FROM (SELECT workspace, COUNT(*) AS n, ${filters} FROM ${rows} r GROUP BY workspace) d WHERE w.name = d.workspace;`;
}

export const sql = /* sql */ `
${['trg_assets_insert', 'trg_assets_delete', 'trg_asset_facets_insert', 'trg_asset_facets_delete'].map((t) => drop(t, 'assets')).join('\n')}
${['trg_vulns_insert', 'trg_vulns_delete'].map((t) => drop(t, 'vulnerabilities')).join('\n')}

${fn('trg_assets_insert', assetEffect('new_rows', '+'))}
${trigger('trg_assets_insert', 'assets', 'INSERT')}

${fn('trg_assets_delete', assetEffect('old_rows', '-'))}
${trigger('trg_assets_delete', 'assets', 'DELETE')}

${fn('trg_vulns_insert', vulnEffect('new_rows', '+'))}
${trigger('trg_vulns_insert', 'vulnerabilities', 'INSERT')}

${fn('trg_vulns_delete', vulnEffect('old_rows', '-'))}
${trigger('trg_vulns_delete', 'vulnerabilities', 'DELETE')}
`;
