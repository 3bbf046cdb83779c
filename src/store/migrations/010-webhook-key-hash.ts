/**
 * Webhook auth keys are kept as salted scrypt hashes (src/util/key-hash.ts) instead of in plain
 * text: a new `webhook_auth_key_hash` column ('' = no key), existing keys hashed into it, then the
 * plain column dropped. The migration runs with secure_delete on and the WAL truncated afterwards
 * (migrate.ts, `scrub`), so the old keys do not linger in free pages or old WAL frames.
 */
import { hashSecret } from '../../util/key-hash.js';
import type { Db } from '../sql.js';

export const sql = /* sql */ `
ALTER TABLE webhook_runs ADD COLUMN webhook_auth_key_hash TEXT NOT NULL DEFAULT '';
`;

/** Hashes the keys written by older versions, then removes the plain column. */
export function run(db: Db): void {
  const rows = db.prepare(`SELECT id, webhook_auth_key AS k FROM webhook_runs WHERE webhook_auth_key <> ''`).all() as { id: number; k: string }[];
  const set = db.prepare(`UPDATE webhook_runs SET webhook_auth_key_hash = ?, webhook_auth_key = '' WHERE id = ?`);
  for (const r of rows) set.run(hashSecret(r.k), r.id);
  db.exec('ALTER TABLE webhook_runs DROP COLUMN webhook_auth_key');
}
