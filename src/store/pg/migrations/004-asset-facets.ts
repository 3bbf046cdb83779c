/**
 * PostgreSQL twin of src/store/migrations/004-asset-facets.ts: per-workspace asset counts by
 * status code and by asset type, kept by row triggers. The "+" side is one upsert.
 */
import { pgTrigger } from './sql-helpers.js';

type Ref = 'NEW' | 'OLD';

function facetEffect(ref: Ref, sign: '+' | '-'): string {
  const one = (table: string, column: string) =>
    sign === '+'
      ? `INSERT INTO ${table} (workspace, ${column}, n) VALUES (${ref}.workspace, ${ref}.${column}, 1)
    ON CONFLICT (workspace, ${column}) DO UPDATE SET n = ${table}.n + 1;`
      : `UPDATE ${table} SET n = n - 1 WHERE workspace = ${ref}.workspace AND ${column} = ${ref}.${column};`;
  return `${one('asset_status_counts', 'status_code')}
  ${one('asset_type_counts', 'asset_type')}`;
}

export const sql = /* sql */ `
CREATE TABLE asset_status_counts (
  workspace    TEXT NOT NULL,
  status_code  BIGINT NOT NULL,
  n            BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace, status_code)
);
CREATE INDEX idx_asset_status_counts_code ON asset_status_counts (status_code);

CREATE TABLE asset_type_counts (
  workspace   TEXT NOT NULL,
  asset_type  TEXT NOT NULL,
  n           BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace, asset_type)
);
CREATE INDEX idx_asset_type_counts_type ON asset_type_counts (asset_type);

INSERT INTO asset_status_counts (workspace, status_code, n) SELECT workspace, status_code, COUNT(*) FROM assets GROUP BY workspace, status_code;
INSERT INTO asset_type_counts (workspace, asset_type, n) SELECT workspace, asset_type, COUNT(*) FROM assets GROUP BY workspace, asset_type;

${pgTrigger('trg_asset_facets_insert', 'assets', 'INSERT', facetEffect('NEW', '+'))}

${pgTrigger('trg_asset_facets_delete', 'assets', 'DELETE', facetEffect('OLD', '-'))}

${pgTrigger('trg_asset_facets_update', 'assets', 'UPDATE OF workspace, status_code, asset_type', `${facetEffect('OLD', '-')}
  ${facetEffect('NEW', '+')}`, 'OLD.workspace IS DISTINCT FROM NEW.workspace OR OLD.status_code IS DISTINCT FROM NEW.status_code OR OLD.asset_type IS DISTINCT FROM NEW.asset_type')}
`;
