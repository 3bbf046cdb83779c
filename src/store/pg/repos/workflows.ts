/**
 * The workflow index on PostgreSQL (statements shared with src/store/workflows.ts). Names sort
 * in byte order (COLLATE "C") like SQLite's BINARY collation; the JSON tag lists are read with
 * jsonb functions where SQLite uses json_each (osm always writes them as JSON arrays).
 */
import type { Async } from '../../async.js';
import { kindCounts, mapWorkflow, workflowListWhere, workflowValues, WORKFLOW_UPSERT_SQL, type WorkflowsRepo } from '../../workflows.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

/** The string items of a JSON array column. */
const tagItems = (column: string) => `jsonb_array_elements(CASE WHEN jsonb_typeof(${column}::jsonb) = 'array' THEN ${column}::jsonb ELSE '[]'::jsonb END)`;

export function createPgWorkflowsRepo(db: PgDb): Async<WorkflowsRepo> {
  const get = async (name: string) => {
    const row = await db.one('SELECT * FROM workflows WHERE name = ?', [name]);
    return row ? mapWorkflow(row) : undefined;
  };
  return {
    async all() {
      return (await db.all('SELECT * FROM workflows ORDER BY name COLLATE "C" ASC')).map(mapWorkflow);
    },
    get,
    upsert(row) {
      return db.tx(async () => {
        // xmax = 0 on the returned row: it was inserted, not updated.
        const { rows } = await db.queryNamed(`${WORKFLOW_UPSERT_SQL} RETURNING (xmax = 0) AS inserted`, workflowValues(row));
        return rows[0]?.inserted ? ('added' as const) : ('updated' as const);
      });
    },
    async deleteNotIn(names) {
      return (await db.query('DELETE FROM workflows WHERE NOT (name = ANY(?::text[]))', [names])).rowCount;
    },
    list(filter, page) {
      const where = workflowListWhere(filter, 'ILIKE', (tags) => [`EXISTS (SELECT 1 FROM ${tagItems('workflows.tags')} t WHERE jsonb_typeof(t) = 'string' AND t #>> '{}' = ANY(?::text[]))`, tags]);
      return pgListPage(db, { table: 'workflows', where, orderBy: 'name COLLATE "C" ASC', map: mapWorkflow }, page);
    },
    async tags() {
      const rows = await db.all(
        `SELECT DISTINCT (t #>> '{}') COLLATE "C" AS tag FROM workflows w, ${tagItems('w.tags')} t
         WHERE w.hidden = 0 AND jsonb_typeof(t) = 'string' AND t #>> '{}' <> '' ORDER BY tag ASC`,
      );
      return rows.map((r) => r.tag as string);
    },
    async countByKind() {
      return kindCounts(await db.all(`SELECT kind, COUNT(*) AS n FROM workflows WHERE hidden = 0 GROUP BY kind`));
    },
  };
}
