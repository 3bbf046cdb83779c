/**
 * The `vulnerabilities` table on PostgreSQL: fingerprint dedupe and merge rules of
 * src/store/vulns.ts, imported in bulk (../bulk.ts), totals and summaries from the trigger-kept
 * counters (same queries as SQLite) and the diff-window queries.
 */
import type { Async } from '../../async.js';
import { nowIso } from '../../sql.js';
import {
  mapVuln,
  mergeVuln,
  normalizeVuln,
  toVulnSummary,
  vulnBatch,
  vulnListWhere,
  vulnParams,
  vulnSummarySql,
  vulnTotalSql,
  vulnWithDefaults,
  VULN_BRIEF,
  VULN_COLUMNS,
  VULN_INSERT_SQL,
  VULN_UPDATE_COLUMNS,
  type VulnBrief,
  type VulnRecord,
  type VulnsRepo,
  type VulnValues,
} from '../../vulns.js';
import { errors } from '../../../errors.js';
import { bulkUpsert, type BulkSpec } from '../bulk.js';
import type { PgDb } from '../db.js';
import { pgDiffWindowQueries } from '../diff-window.js';
import { pgListPage } from '../list.js';

const SPEC: BulkSpec<VulnValues, VulnRecord> = {
  table: 'vulnerabilities',
  history: 'vuln_history',
  columns: VULN_COLUMNS,
  updateColumns: VULN_UPDATE_COLUMNS,
  params: vulnParams,
  // New rows get the defaults (severity info, confidence Certain); incoming rows keep '' as "not given" for merges.
  initial: vulnWithDefaults,
  pending: (v) => ({ ...v, id: 0, created_at: '', updated_at: '', last_seen_at: '' }) as VulnRecord,
  map: mapVuln,
  merge: mergeVuln,
  key: (v) => v.fingerprint ?? '',
  rowKey: (r) => r.fingerprint ?? '',
  candidates: (db, _workspace, values) => db.all('SELECT * FROM vulnerabilities WHERE fingerprint = ANY(?::text[])', [[...new Set(values.map((v) => v.fingerprint))]]),
};

export function createPgVulnsRepo(db: PgDb): Async<VulnsRepo> {
  return {
    async create(input) {
      if (!input.workspace || typeof input.workspace !== 'string') throw errors.workspaceRequired();
      const { rows } = await db.queryNamed(VULN_INSERT_SQL, { ...vulnParams(vulnWithDefaults(normalizeVuln(input.workspace, input, false))), now: nowIso() });
      return mapVuln(rows[0]!);
    },
    async upsertMany(workspace, rows, now = nowIso()) {
      return bulkUpsert(db, SPEC, workspace, vulnBatch(workspace, rows), now);
    },
    async touchedSince(workspace, since, limit, afterId = 0) {
      return (await db.all('SELECT * FROM vulnerabilities WHERE id > ? AND workspace = ? AND (updated_at >= ? OR last_seen_at >= ?) ORDER BY id LIMIT ?', [afterId, workspace, since, since, limit])).map(mapVuln);
    },
    async get(id) {
      const row = await db.one('SELECT * FROM vulnerabilities WHERE id = ?', [id]);
      return row ? mapVuln(row) : undefined;
    },
    async delete(id) {
      return (await db.query('DELETE FROM vulnerabilities WHERE id = ?', [id])).rowCount > 0;
    },
    list(filter, page) {
      const t = vulnTotalSql(filter);
      const total = t && (async () => Number((await db.one(t.sql, t.params))?.n ?? 0));
      return pgListPage(db, { table: 'vulnerabilities', where: vulnListWhere(filter, 'ILIKE'), orderBy: 'created_at DESC, id DESC', map: mapVuln, total }, page);
    },
    async summary(workspace, orgUuid) {
      const t = vulnSummarySql(workspace, orgUuid);
      return toVulnSummary(t.shape, await db.all(t.sql, t.params));
    },
    ...pgDiffWindowQueries<VulnRecord, VulnBrief>(db, 'vulnerabilities', 'vuln_history', mapVuln, VULN_BRIEF),
  };
}
