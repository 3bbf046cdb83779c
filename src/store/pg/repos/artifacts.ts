/**
 * The `artifacts` table on PostgreSQL (statements shared with src/store/artifacts.ts). Lists
 * break created_at ties by id (SQLite uses its rowid, which PostgreSQL has no equivalent of).
 */
import type { Async } from '../../async.js';
import { artifactListWhere, artifactValues, ARTIFACT_UPSERT_SQL, mapArtifact, type ArtifactsRepo } from '../../artifacts.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

export function createPgArtifactsRepo(db: PgDb): Async<ArtifactsRepo> {
  return {
    async upsert(input) {
      const { rows } = await db.queryNamed(ARTIFACT_UPSERT_SQL, artifactValues(input));
      return mapArtifact(rows[0]!);
    },
    async get(id) {
      const row = await db.one('SELECT * FROM artifacts WHERE id = ?', [id]);
      return row ? mapArtifact(row) : undefined;
    },
    async listByRun(runId) {
      return (await db.all('SELECT * FROM artifacts WHERE run_id = ? ORDER BY created_at DESC, id DESC', [runId])).map(mapArtifact);
    },
    async deleteByRun(runId) {
      return (await db.query('DELETE FROM artifacts WHERE run_id = ?', [runId])).rowCount;
    },
    list(filter, page) {
      return pgListPage(db, { table: 'artifacts', where: artifactListWhere(filter, 'ILIKE'), orderBy: 'created_at DESC, id DESC', map: mapArtifact }, page);
    },
  };
}
