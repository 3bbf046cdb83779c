/**
 * PostgreSQL twin of src/store/migrations/010-webhook-key-hash.ts: keys become salted scrypt
 * hashes in `webhook_auth_key_hash`, then the plain column is dropped.
 */
import { hashSecret } from '../../../util/key-hash.js';
import type { PgQueryable } from './index.js';

export const sql = /* sql */ `
ALTER TABLE webhook_runs ADD COLUMN webhook_auth_key_hash TEXT NOT NULL DEFAULT '';
`;

export async function run(db: PgQueryable): Promise<void> {
  const rows = (await db.query<{ id: number; k: string }>(`SELECT id, webhook_auth_key AS k FROM webhook_runs WHERE webhook_auth_key <> ''`)).rows;
  for (const r of rows) await db.query(`UPDATE webhook_runs SET webhook_auth_key_hash = $1, webhook_auth_key = '' WHERE id = $2`, [hashSecret(r.k), r.id]);
  await db.query('ALTER TABLE webhook_runs DROP COLUMN webhook_auth_key');
}
