/**
 * A worker with its own database ships the assets and findings an attempt wrote there to the
 * master, as fenced `rows` records (src/distributed/records.ts) the master merges by value.
 */
import type { Queue } from 'bullmq';
import type { AppContext } from '../services/context.js';
import { nowIso } from '../store/sql.js';
import { PROTOCOL_VERSION } from './protocol.js';
import { MAX_SHIPPED_ROWS, recordEnd, ROWS_PER_RECORD } from './records.js';

/** A shipped row: the values only (ids, workspace and timestamps are the master's own). */
function stripRow(row: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, workspace: _w, created_at: _c, updated_at: _u, last_seen_at: _l, org_uuid: _o, fingerprint: _f, ...rest } = row;
  return rest;
}

/** Rows read from the worker's database at a time: a page is shipped before the next is read. */
const PAGE_ROWS = 10 * ROWS_PER_RECORD;

/**
 * Ships the assets and vulnerabilities of the run's workspace that this attempt created or saw
 * (updated or last seen since it started), in chunks of ROWS_PER_RECORD, each fenced by lock and
 * attempt. They are read a page (PAGE_ROWS, by id) at a time and each page leaves before the next
 * is read: the master applies the first rows while the rest are read, and the worker never holds
 * more than a page. Undefined when refused; `capped` when more than MAX_SHIPPED_ROWS of a table.
 */
export async function shipRows(
  w: { app: AppContext; prefix: string; workerId: string; log: (msg: string, fields?: Record<string, unknown>) => void },
  client: Awaited<Queue['client']>,
  token: string,
  attempt: number,
  uuid: string,
  since: string,
): Promise<{ rows: number; capped: boolean } | undefined> {
  const run = await w.app.repos.runs.getByUuid(uuid);
  if (!run?.workspace) return { rows: 0, capped: false };
  const repos = w.app.repos;
  let seq = 0;
  let total = 0;
  let capped = false;
  const tables = [
    { table: 'assets' as const, read: (ws: string, limit: number, after: number) => repos.assets.touchedSince(ws, since, limit, after) },
    { table: 'vulnerabilities' as const, read: (ws: string, limit: number, after: number) => repos.vulns.touchedSince(ws, since, limit, after) },
  ];
  for (const t of tables) {
    let after = 0;
    let shipped = 0;
    for (;;) {
      // One row more than the cap allows tells that the table was capped.
      const want = Math.min(PAGE_ROWS, MAX_SHIPPED_ROWS + 1 - shipped);
      const page = await t.read(run.workspace, want, after);
      if (page.length === 0) break;
      after = page[page.length - 1]!.id;
      const rows = page.map((r) => stripRow(r as unknown as Record<string, unknown>));
      if (shipped + rows.length > MAX_SHIPPED_ROWS) {
        capped = true;
        rows.length = MAX_SHIPPED_ROWS - shipped;
      }
      for (let i = 0; i < rows.length; i += ROWS_PER_RECORD) {
        const ok = await recordEnd(client, w.prefix, token, attempt, {
          v: PROTOCOL_VERSION, kind: 'rows', run_uuid: uuid, worker_id: w.workerId, at: nowIso(), seq: seq++, table: t.table, workspace: run.workspace, rows: rows.slice(i, i + ROWS_PER_RECORD),
        });
        if (!ok) return undefined;
      }
      shipped += rows.length;
      if (capped || page.length < want) break;
    }
    total += shipped;
  }
  if (total > 0) w.log('rows shipped to the master', { run_uuid: uuid, attempt, rows: total, capped });
  return { rows: total, capped };
}
