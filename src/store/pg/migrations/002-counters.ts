/**
 * PostgreSQL twin of src/store/migrations/002-counters.ts: the exact counters of `counters` and of
 * the workspace rows, backfilled once and then kept by row triggers (PL/pgSQL functions named like
 * the SQLite triggers). Unlike SQLite, an `ON CONFLICT` inside a trigger is not overridden by the
 * outer statement, so the workspace row is created with `ON CONFLICT (name) DO NOTHING`.
 */
import { PG_NOW, pgTrigger } from './sql-helpers.js';

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

function ensureWorkspace(ref: 'NEW'): string {
  return `INSERT INTO workspaces (name, data_source, created_at, updated_at) VALUES (${ref}.workspace, 'local', ${PG_NOW}, ${PG_NOW})
    ON CONFLICT (name) DO NOTHING;`;
}

function vulnEffect(ref: 'NEW' | 'OLD', sign: '+' | '-'): string {
  const perSeverity = SEVERITIES.map((s) => `vuln_${s} = vuln_${s} ${sign} (${ref}.severity = '${s}')::int`).join(',\n      ');
  return `UPDATE counters SET value = value ${sign} 1 WHERE name IN ('vulns.total', 'vulns.' || ${ref}.severity);
  UPDATE workspaces SET total_vulns = total_vulns ${sign} 1,
      ${perSeverity}
    WHERE name = ${ref}.workspace;`;
}

const backfillSeverities = SEVERITIES.map(
  (s) => `vuln_${s} = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name AND v.severity = '${s}')`,
).join(',\n  ');

const upsertCounter = (name: string, count: string) =>
  `INSERT INTO counters (name, value) VALUES ('${name}', (${count})) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;`;

export const sql = /* sql */ `
${upsertCounter('assets.total', 'SELECT COUNT(*) FROM assets')}
${upsertCounter('vulns.total', 'SELECT COUNT(*) FROM vulnerabilities')}
${SEVERITIES.map((s) => upsertCounter(`vulns.${s}`, `SELECT COUNT(*) FROM vulnerabilities WHERE severity = '${s}'`)).join('\n')}

INSERT INTO workspaces (name, data_source, created_at, updated_at)
  SELECT w, 'local', ${PG_NOW}, ${PG_NOW}
  FROM (SELECT workspace AS w FROM assets UNION SELECT workspace FROM vulnerabilities) s
  WHERE w NOT IN (SELECT name FROM workspaces);
UPDATE workspaces SET
  total_assets = (SELECT COUNT(*) FROM assets a WHERE a.workspace = workspaces.name),
  total_vulns = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name),
  ${backfillSeverities};

${pgTrigger('trg_assets_insert', 'assets', 'INSERT', `UPDATE counters SET value = value + 1 WHERE name = 'assets.total';
  ${ensureWorkspace('NEW')}
  UPDATE workspaces SET total_assets = total_assets + 1 WHERE name = NEW.workspace;`)}

${pgTrigger('trg_assets_delete', 'assets', 'DELETE', `UPDATE counters SET value = value - 1 WHERE name = 'assets.total';
  UPDATE workspaces SET total_assets = total_assets - 1 WHERE name = OLD.workspace;`)}

${pgTrigger('trg_assets_move', 'assets', 'UPDATE OF workspace', `UPDATE workspaces SET total_assets = total_assets - 1 WHERE name = OLD.workspace;
  ${ensureWorkspace('NEW')}
  UPDATE workspaces SET total_assets = total_assets + 1 WHERE name = NEW.workspace;`, 'OLD.workspace IS DISTINCT FROM NEW.workspace')}

${pgTrigger('trg_vulns_insert', 'vulnerabilities', 'INSERT', `${ensureWorkspace('NEW')}
  ${vulnEffect('NEW', '+')}`)}

${pgTrigger('trg_vulns_delete', 'vulnerabilities', 'DELETE', vulnEffect('OLD', '-'))}

${pgTrigger('trg_vulns_update', 'vulnerabilities', 'UPDATE OF severity, workspace', `${vulnEffect('OLD', '-')}
  ${ensureWorkspace('NEW')}
  ${vulnEffect('NEW', '+')}`, 'OLD.severity IS DISTINCT FROM NEW.severity OR OLD.workspace IS DISTINCT FROM NEW.workspace')}
`;
