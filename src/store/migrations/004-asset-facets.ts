/**
 * Per-workspace asset counts by status code and by asset type, kept exact by triggers, so
 * GET /assets filtered by workspace and status_code (or asset_type) knows its total without a
 * COUNT: counting 187,000 index entries cost 60-90 ms per request at a million assets
 * (bench/04-api-reads). Rows are created with `INSERT ... WHERE NOT EXISTS` then incremented,
 * not with an UPSERT, for the reason given in 002: an outer statement's conflict policy would
 * override a policy inside the trigger.
 */
type Ref = 'NEW' | 'OLD';

/** SQL that adds `sign` (±1) to the facet counts of the row `ref`, creating count rows on the way up. */
function facetEffect(ref: Ref, sign: '+' | '-'): string {
  const ensure = (table: string, column: string) =>
    sign === '+'
      ? `INSERT INTO ${table} (workspace, ${column}, n) SELECT ${ref}.workspace, ${ref}.${column}, 0
    WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE workspace = ${ref}.workspace AND ${column} = ${ref}.${column});\n  `
      : '';
  return `${ensure('asset_status_counts', 'status_code')}UPDATE asset_status_counts SET n = n ${sign} 1 WHERE workspace = ${ref}.workspace AND status_code = ${ref}.status_code;
  ${ensure('asset_type_counts', 'asset_type')}UPDATE asset_type_counts SET n = n ${sign} 1 WHERE workspace = ${ref}.workspace AND asset_type = ${ref}.asset_type;`;
}

export const sql = /* sql */ `
CREATE TABLE asset_status_counts (
  workspace    TEXT NOT NULL,
  status_code  INTEGER NOT NULL,
  n            INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace, status_code)
) WITHOUT ROWID;
CREATE INDEX idx_asset_status_counts_code ON asset_status_counts (status_code);

CREATE TABLE asset_type_counts (
  workspace   TEXT NOT NULL,
  asset_type  TEXT NOT NULL,
  n           INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace, asset_type)
) WITHOUT ROWID;
CREATE INDEX idx_asset_type_counts_type ON asset_type_counts (asset_type);

INSERT INTO asset_status_counts (workspace, status_code, n) SELECT workspace, status_code, COUNT(*) FROM assets GROUP BY workspace, status_code;
INSERT INTO asset_type_counts (workspace, asset_type, n) SELECT workspace, asset_type, COUNT(*) FROM assets GROUP BY workspace, asset_type;

CREATE TRIGGER trg_asset_facets_insert AFTER INSERT ON assets BEGIN
  ${facetEffect('NEW', '+')}
END;

CREATE TRIGGER trg_asset_facets_delete AFTER DELETE ON assets BEGIN
  ${facetEffect('OLD', '-')}
END;

CREATE TRIGGER trg_asset_facets_update AFTER UPDATE OF workspace, status_code, asset_type ON assets
WHEN OLD.workspace IS NOT NEW.workspace OR OLD.status_code IS NOT NEW.status_code OR OLD.asset_type IS NOT NEW.asset_type BEGIN
  ${facetEffect('OLD', '-')}
  ${facetEffect('NEW', '+')}
END;
`;
