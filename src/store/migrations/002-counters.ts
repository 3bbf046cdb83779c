/**
 * Exact counters kept by triggers, so `/stats`, the vulnerability summary and the workspace
 * listing never count whole tables. Global counters live in `counters`; per-workspace counters
 * live on the `workspaces` row, which an insert creates (data_source 'local') when missing.
 * Existing rows are counted once here, so a database migrated from version 1 starts exact.
 *
 * The workspace row is created with `INSERT ... WHERE NOT EXISTS` rather than `INSERT OR IGNORE`:
 * inside a trigger an `OR <policy>` clause is overridden by the outer statement's policy, and an
 * outer `OR REPLACE` would then replace (and zero) the workspace row.
 */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

/** SQL that creates the workspace row for `ref.workspace` when it does not exist yet. */
function ensureWorkspace(ref: 'NEW'): string {
  return `INSERT INTO workspaces (name, data_source, created_at, updated_at)
    SELECT ${ref}.workspace, 'local', ${NOW}, ${NOW}
    WHERE NOT EXISTS (SELECT 1 FROM workspaces WHERE name = ${ref}.workspace);`;
}

/** SQL that adds `sign` (±1) to the vulnerability counters for the row `ref`. */
function vulnEffect(ref: 'NEW' | 'OLD', sign: '+' | '-'): string {
  const perSeverity = SEVERITIES.map((s) => `vuln_${s} = vuln_${s} ${sign} (${ref}.severity = '${s}')`).join(',\n      ');
  return `UPDATE counters SET value = value ${sign} 1 WHERE name IN ('vulns.total', 'vulns.' || ${ref}.severity);
    UPDATE workspaces SET total_vulns = total_vulns ${sign} 1,
      ${perSeverity}
    WHERE name = ${ref}.workspace;`;
}

const backfillSeverities = SEVERITIES.map(
  (s) => `vuln_${s} = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name AND v.severity = '${s}')`,
).join(',\n  ');

export const sql = /* sql */ `
INSERT OR REPLACE INTO counters (name, value) VALUES ('assets.total', (SELECT COUNT(*) FROM assets));
INSERT OR REPLACE INTO counters (name, value) VALUES ('vulns.total', (SELECT COUNT(*) FROM vulnerabilities));
${SEVERITIES.map(
  (s) => `INSERT OR REPLACE INTO counters (name, value) VALUES ('vulns.${s}', (SELECT COUNT(*) FROM vulnerabilities WHERE severity = '${s}'));`,
).join('\n')}

INSERT INTO workspaces (name, data_source, created_at, updated_at)
  SELECT w, 'local', ${NOW}, ${NOW}
  FROM (SELECT workspace AS w FROM assets UNION SELECT workspace FROM vulnerabilities)
  WHERE w NOT IN (SELECT name FROM workspaces);
UPDATE workspaces SET
  total_assets = (SELECT COUNT(*) FROM assets a WHERE a.workspace = workspaces.name),
  total_vulns = (SELECT COUNT(*) FROM vulnerabilities v WHERE v.workspace = workspaces.name),
  ${backfillSeverities};

CREATE TRIGGER trg_assets_insert AFTER INSERT ON assets BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'assets.total';
  ${ensureWorkspace('NEW')}
  UPDATE workspaces SET total_assets = total_assets + 1 WHERE name = NEW.workspace;
END;

CREATE TRIGGER trg_assets_delete AFTER DELETE ON assets BEGIN
  UPDATE counters SET value = value - 1 WHERE name = 'assets.total';
  UPDATE workspaces SET total_assets = total_assets - 1 WHERE name = OLD.workspace;
END;

CREATE TRIGGER trg_assets_move AFTER UPDATE OF workspace ON assets
WHEN OLD.workspace IS NOT NEW.workspace BEGIN
  UPDATE workspaces SET total_assets = total_assets - 1 WHERE name = OLD.workspace;
  ${ensureWorkspace('NEW')}
  UPDATE workspaces SET total_assets = total_assets + 1 WHERE name = NEW.workspace;
END;

CREATE TRIGGER trg_vulns_insert AFTER INSERT ON vulnerabilities BEGIN
  ${ensureWorkspace('NEW')}
  ${vulnEffect('NEW', '+')}
END;

CREATE TRIGGER trg_vulns_delete AFTER DELETE ON vulnerabilities BEGIN
  ${vulnEffect('OLD', '-')}
END;

CREATE TRIGGER trg_vulns_update AFTER UPDATE OF severity, workspace ON vulnerabilities
WHEN OLD.severity IS NOT NEW.severity OR OLD.workspace IS NOT NEW.workspace BEGIN
  ${vulnEffect('OLD', '-')}
  ${ensureWorkspace('NEW')}
  ${vulnEffect('NEW', '+')}
END;
`;
