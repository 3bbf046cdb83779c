/** The `webhook_runs` table on PostgreSQL (statements shared with src/store/webhook-runs.ts). */
import type { Async } from '../../async.js';
import { nowIso, Where } from '../../sql.js';
import { mapWebhookRun, webhookRunValues, WEBHOOK_RUN_INSERT_SQL, WEBHOOK_RUN_TRIGGER_SQL, type WebhookRunsRepo } from '../../webhook-runs.js';
import type { PgDb } from '../db.js';
import { pgListPage } from '../list.js';

export function createPgWebhookRunsRepo(db: PgDb): Async<WebhookRunsRepo> {
  return {
    async create(input) {
      return mapWebhookRun((await db.queryNamed(WEBHOOK_RUN_INSERT_SQL, webhookRunValues(input))).rows[0]!);
    },
    async getByUuid(uuid) {
      const row = await db.one('SELECT * FROM webhook_runs WHERE webhook_uuid = ?', [uuid]);
      return row ? mapWebhookRun(row) : undefined;
    },
    list(page) {
      return pgListPage(db, { table: 'webhook_runs', where: new Where(), orderBy: 'created_at DESC, id DESC', map: mapWebhookRun }, page);
    },
    async recordTrigger(uuid, runUuid) {
      const now = nowIso();
      await db.query(WEBHOOK_RUN_TRIGGER_SQL, [now, runUuid, now, uuid]);
    },
    async delete(uuid) {
      return (await db.query('DELETE FROM webhook_runs WHERE webhook_uuid = ?', [uuid])).rowCount > 0;
    },
  };
}
