/** The `artifacts` table: files a run produced or registered (reports, state files, outputs). */
import { randomUUID } from 'node:crypto';
import { bit, likeContains, listPage, nowIso, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';
import { inWorkspacesOf, type OrgFilter } from './org-constants.js';

export interface ArtifactRecord {
  id: string;
  run_id: number;
  workspace: string;
  name: string;
  artifact_path: string;
  artifact_type: string;
  content_type: string;
  size_bytes: number;
  line_count: number;
  optional: boolean;
  description: string;
  created_at: string;
}

export type ArtifactInput = Omit<ArtifactRecord, 'id' | 'created_at'> & { id?: string };

export interface ArtifactListFilter {
  workspace?: string;
  /** Only artifacts of workspaces of these orgs. */
  org_uuid?: OrgFilter;
  /** Substring of id, run id, workspace, name, path, type, content type or description. */
  search?: string;
}

export interface ArtifactsRepo {
  /** Inserts an artifact, or refreshes size/lines/type of the one with the same workspace, name, path and run. */
  upsert(input: ArtifactInput): ArtifactRecord;
  /** `upsert` of each, in one statement where the engine can; records in the order of `inputs`. */
  upsertMany(inputs: ArtifactInput[]): ArtifactRecord[];
  get(id: string): ArtifactRecord | undefined;
  /** Artifacts of one run, newest first. */
  listByRun(runId: number): ArtifactRecord[];
  /** Removes the artifact rows of one run (the files stay); the number removed. */
  deleteByRun(runId: number): number;
  /** Filtered page, newest first. */
  list(filter: ArtifactListFilter, page: Page): ListResult<ArtifactRecord>;
}

/** Maps an artifacts row to its record. */
export function mapArtifact(row: Row): ArtifactRecord {
  return { ...(row as unknown as ArtifactRecord), optional: row.optional === 1 };
}

const ARTIFACT_COLUMNS = `id, run_id, workspace, name, artifact_path, artifact_type, content_type, size_bytes,
     line_count, optional, description, created_at`;
const ARTIFACT_VALUES = `@id, @run_id, @workspace, @name, @artifact_path, @artifact_type, @content_type, @size_bytes,
     @line_count, @optional, @description, @now`;
const ARTIFACT_ON_CONFLICT = `ON CONFLICT (workspace, name, artifact_path, run_id) DO UPDATE SET
     size_bytes = excluded.size_bytes,
     line_count = excluded.line_count,
     artifact_type = excluded.artifact_type,
     content_type = excluded.content_type,
     optional = excluded.optional,
     description = CASE WHEN excluded.description <> '' THEN excluded.description ELSE artifacts.description END
   RETURNING *`;

/** The upsert of `upsert` (named parameters from artifactValues); dialect-neutral. */
export const ARTIFACT_UPSERT_SQL = `INSERT INTO artifacts (${ARTIFACT_COLUMNS})
   VALUES (${ARTIFACT_VALUES})
   ${ARTIFACT_ON_CONFLICT}`;

/**
 * One upsert of several artifacts (named parameters: artifactValues of row i prefixed `a<i>_`),
 * or undefined when two of them share a key (one statement cannot update a row twice: the caller
 * upserts them one by one then).
 */
export function artifactUpsertMany(inputs: ArtifactInput[]): { sql: string; values: Record<string, unknown> } | undefined {
  const keys = new Set(inputs.map((a) => JSON.stringify([a.workspace, a.name, a.artifact_path, a.run_id ?? 0])));
  if (keys.size !== inputs.length) return undefined;
  const rows: string[] = [];
  const values: Record<string, unknown> = {};
  inputs.forEach((input, i) => {
    rows.push(`(${ARTIFACT_VALUES.replace(/@(\w+)/g, `@a${i}_$1`)})`);
    for (const [k, v] of Object.entries(artifactValues(input))) values[`a${i}_${k}`] = v;
  });
  return { sql: `INSERT INTO artifacts (${ARTIFACT_COLUMNS}) VALUES ${rows.join(', ')} ${ARTIFACT_ON_CONFLICT}`, values };
}

/** The defaulted column values of an artifact. */
export function artifactValues(input: ArtifactInput): Record<string, unknown> {
  return {
    id: input.id ?? randomUUID(),
    run_id: input.run_id ?? 0,
    workspace: input.workspace,
    name: input.name,
    artifact_path: input.artifact_path,
    artifact_type: input.artifact_type || 'output',
    content_type: input.content_type || 'unknown',
    size_bytes: input.size_bytes ?? 0,
    line_count: input.line_count ?? 0,
    optional: bit(input.optional),
    description: input.description ?? '',
    now: nowIso(),
  };
}

/** The filters of `list`; `like` is the engine's case-insensitive LIKE (SQLite LIKE, PostgreSQL ILIKE). */
export function artifactListWhere(filter: ArtifactListFilter, like: 'LIKE' | 'ILIKE'): Where {
  const where = new Where().eq('workspace', filter.workspace);
  if (filter.org_uuid !== undefined) inWorkspacesOf(where, 'workspace', filter.org_uuid);
  if (filter.search) {
    const p = likeContains(filter.search);
    const cols = ['id', 'CAST(run_id AS TEXT)', 'workspace', 'name', 'artifact_path', 'artifact_type', 'content_type', 'description'];
    where.add(`(${cols.map((c) => `${c} ${like} ? ESCAPE '\\'`).join(' OR ')})`, ...cols.map(() => p));
  }
  return where;
}

/** Creates the artifacts repository on one connection. */
export function createArtifactsRepo(db: Db, q: StatementCache): ArtifactsRepo {
  return {
    upsert(input) {
      return mapArtifact(q(ARTIFACT_UPSERT_SQL).get(artifactValues(input)) as Row);
    },

    upsertMany(inputs) {
      if (inputs.length === 0) return [];
      return db.transaction(() => inputs.map((input) => mapArtifact(q(ARTIFACT_UPSERT_SQL).get(artifactValues(input)) as Row))).immediate();
    },

    get(id) {
      const row = q('SELECT * FROM artifacts WHERE id = ?').get(id) as Row | undefined;
      return row ? mapArtifact(row) : undefined;
    },

    listByRun(runId) {
      return (q('SELECT * FROM artifacts WHERE run_id = ? ORDER BY created_at DESC, rowid DESC').all(runId) as Row[]).map(mapArtifact);
    },

    deleteByRun(runId) {
      return q('DELETE FROM artifacts WHERE run_id = ?').run(runId).changes;
    },

    list(filter, page) {
      const where = artifactListWhere(filter, 'LIKE');
      return listPage(db, q, { table: 'artifacts', where, orderBy: 'created_at DESC, rowid DESC', map: mapArtifact }, page);
    },
  };
}
