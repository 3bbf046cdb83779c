/** The `workflows` table: the index of workflow files (refreshed from the workflows folder). */
import { bit, likeContains, listPage, parseJson, parseStringArray, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';

export interface WorkflowParamRow {
  name: string;
  required: boolean;
  default: string;
  generator: string;
}

export interface WorkflowRow {
  id: number;
  name: string;
  kind: string;
  description: string;
  tags: string[];
  file_path: string;
  params: WorkflowParamRow[];
  required_params: string[];
  step_count: number;
  module_count: number;
  hidden: boolean;
  checksum: string;
  indexed_at: string;
}

export interface WorkflowListFilter {
  kind?: string;
  /** Case-insensitive substring of name or description. */
  search?: string;
  /** Rows carrying any of these tags. */
  tags?: string[];
  includeHidden?: boolean;
}

export interface WorkflowsRepo {
  /** Every indexed workflow (hidden ones too), by name. */
  all(): WorkflowRow[];
  get(name: string): WorkflowRow | undefined;
  /** Inserts or replaces the row of `row.name`; says which happened. */
  upsert(row: Omit<WorkflowRow, 'id'>): 'added' | 'updated';
  /** Removes rows whose name is not in `names` (files that disappeared); returns how many. */
  deleteNotIn(names: string[]): number;
  /** Filtered page by name. Hidden workflows only with includeHidden. */
  list(filter: WorkflowListFilter, page: Page): ListResult<WorkflowRow>;
  /** Distinct tags of visible workflows, sorted. */
  tags(): string[];
  /** Visible workflows per kind. */
  countByKind(): { flows: number; modules: number };
}

/** Maps a workflows row to its record. */
export function mapWorkflow(row: Row): WorkflowRow {
  return {
    ...(row as unknown as WorkflowRow),
    tags: parseStringArray(row.tags),
    params: parseJson<WorkflowParamRow[]>(row.params, []),
    required_params: parseStringArray(row.required_params),
    hidden: row.hidden === 1,
  };
}

/** The upsert of `upsert` (named parameters from workflowValues); dialect-neutral. */
export const WORKFLOW_UPSERT_SQL = `INSERT INTO workflows (name, kind, description, tags, file_path, params, required_params, step_count, module_count,
     hidden, checksum, indexed_at)
   VALUES (@name, @kind, @description, @tags, @file_path, @params, @required_params, @step_count, @module_count,
     @hidden, @checksum, @indexed_at)
   ON CONFLICT (name) DO UPDATE SET
     kind = excluded.kind, description = excluded.description, tags = excluded.tags, file_path = excluded.file_path,
     params = excluded.params, required_params = excluded.required_params, step_count = excluded.step_count,
     module_count = excluded.module_count, hidden = excluded.hidden, checksum = excluded.checksum,
     indexed_at = excluded.indexed_at`;

export function workflowValues(row: Omit<WorkflowRow, 'id'>): Record<string, unknown> {
  return {
    name: row.name,
    kind: row.kind,
    description: row.description ?? '',
    tags: JSON.stringify(row.tags ?? []),
    file_path: row.file_path,
    params: JSON.stringify(row.params ?? []),
    required_params: JSON.stringify(row.required_params ?? []),
    step_count: row.step_count ?? 0,
    module_count: row.module_count ?? 0,
    hidden: bit(row.hidden),
    checksum: row.checksum,
    indexed_at: row.indexed_at,
  };
}

/**
 * The filters of `list`: `like` is the engine's case-insensitive LIKE, `anyTag` the engine's
 * "tags (a JSON array column) holds one of these" clause and its parameter.
 */
export function workflowListWhere(filter: WorkflowListFilter, like: 'LIKE' | 'ILIKE', anyTag: (tags: string[]) => [string, unknown]): Where {
  const where = new Where().eq('kind', filter.kind);
  if (!filter.includeHidden) where.add('hidden = 0');
  if (filter.search) {
    const p = likeContains(filter.search);
    where.add(`(name ${like} ? ESCAPE '\\' OR description ${like} ? ESCAPE '\\')`, p, p);
  }
  if (filter.tags && filter.tags.length > 0) where.add(...anyTag(filter.tags));
  return where;
}

/** Visible workflows per kind from (kind, n) rows. */
export function kindCounts(rows: Record<string, unknown>[]): { flows: number; modules: number } {
  const by = Object.fromEntries(rows.map((r) => [String(r.kind), Number(r.n)]));
  return { flows: by.flow ?? 0, modules: by.module ?? 0 };
}

/** Creates the workflow index repository on one connection. */
export function createWorkflowsRepo(db: Db, q: StatementCache): WorkflowsRepo {
  const get = (name: string): WorkflowRow | undefined => {
    const row = q('SELECT * FROM workflows WHERE name = ?').get(name) as Row | undefined;
    return row ? mapWorkflow(row) : undefined;
  };

  return {
    all() {
      return (q('SELECT * FROM workflows ORDER BY name ASC').all() as Row[]).map(mapWorkflow);
    },

    get,

    upsert(row) {
      return db.transaction(() => {
        const existed = q('SELECT 1 FROM workflows WHERE name = ?').get(row.name) !== undefined;
        q(WORKFLOW_UPSERT_SQL).run(workflowValues(row));
        return existed ? ('updated' as const) : ('added' as const);
      }).immediate();
    },

    deleteNotIn(names) {
      return q('DELETE FROM workflows WHERE name NOT IN (SELECT value FROM json_each(?))').run(JSON.stringify(names)).changes;
    },

    list(filter, page) {
      const where = workflowListWhere(filter, 'LIKE', (tags) => ['EXISTS (SELECT 1 FROM json_each(workflows.tags) t WHERE t.value IN (SELECT value FROM json_each(?)))', JSON.stringify(tags)]);
      return listPage(db, q, { table: 'workflows', where, orderBy: 'name ASC', map: mapWorkflow }, page);
    },

    tags() {
      const rows = q(
        `SELECT DISTINCT t.value AS tag FROM workflows w, json_each(w.tags) t
         WHERE w.hidden = 0 AND t.type = 'text' AND t.value <> '' ORDER BY tag ASC`,
      ).all() as { tag: string }[];
      return rows.map((r) => r.tag);
    },

    countByKind() {
      return kindCounts(q(`SELECT kind, COUNT(*) AS n FROM workflows WHERE hidden = 0 GROUP BY kind`).all() as { kind: string; n: number }[]);
    },
  };
}
