/**
 * Fenced connections (migration 019): a worker executing attempt N of a distributed run straight
 * against the shared PostgreSQL database writes only through connections that carry
 * `osm.fence_run` and `osm.fence_attempt` as startup settings (the `options` parameter of the
 * URL, so evaluator processes and bridge threads reopening the locator's URL are fenced too). The
 * database refuses each of their write statements once a newer attempt has claimed the run.
 */
import { isPostgresUrl } from '../../settings/schema.js';

/** SQLSTATE of a statement refused by the fence. */
export const FENCE_SQLSTATE = 'OSMF1';

/** `url` with the fence of `runUuid` / `attempt` added to its startup options. */
export function fencedUrl(url: string, runUuid: string, attempt: number): string {
  if (!isPostgresUrl(url)) throw new Error('a fence needs a postgres:// URL');
  if (!/^[0-9a-f-]{36}$/i.test(runUuid) || !Number.isInteger(attempt) || attempt < 1) throw new Error(`invalid fence ${runUuid}/${attempt}`);
  const u = new URL(url);
  const own = (u.searchParams.get('options') ?? '').replace(/\s*-c\s*osm\.fence_(run|attempt)=\S*/g, '').trim();
  u.searchParams.set('options', `${own ? `${own} ` : ''}-c osm.fence_run=${runUuid} -c osm.fence_attempt=${attempt}`);
  return u.toString();
}

/** True for an error the fence raised (the attempt lost the run to a newer one). */
export function isFenceError(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === FENCE_SQLSTATE;
}
