/**
 * The `artifacts` table on PostgreSQL (statements shared with src/store/artifacts.ts). Lists
 * break created_at ties by id (SQLite uses its rowid, which PostgreSQL has no equivalent of).
 */
import type { Async } from '../../async.js';
import { artifactListWhere, artifactUpsertMany, artifactValues, ARTIFACT_UPSERT_SQL, mapArtifact, type ArtifactRecord, type ArtifactsRepo } from '../../artifacts.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

export function createPgArtifactsRepo(db: PgDb): Async<ArtifactsRepo> {
  const upsert = async (input: Parameters<ArtifactsRepo['upsert']>[0]) => {
    // Upserts by key: sent twice, the row is the same.
    const { rows } = await db.queryNamed(ARTIFACT_UPSERT_SQL, artifactValues(input), { idempotent: true });
    return mapArtifact(rows[0]!);
  };
  return {
    upsert,
    async upsertMany(inputs) {
      if (inputs.length <= 1) return Promise.all(inputs.map(upsert));
      const many = artifactUpsertMany(inputs);
      if (!many) return db.tx(async () => {
        const out: ArtifactRecord[] = [];
        for (const input of inputs) out.push(await upsert(input));
        return out;
      });
      // One round trip; the rows come back in no particular order.
      const { rows } = await db.queryNamed(many.sql, many.values, { idempotent: true });
      const byKey = new Map(rows.map((r) => [JSON.stringify([r.workspace, r.name, r.artifact_path, Number(r.run_id)]), mapArtifact(r)]));
      return inputs.map((a) => byKey.get(JSON.stringify([a.workspace, a.name, a.artifact_path, a.run_id ?? 0]))!);
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
