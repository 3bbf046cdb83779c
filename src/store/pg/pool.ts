/**
 * PostgreSQL connections: a `pg` Pool per target, and a probe that says whether the server
 * answers and, when it does not, why (refused, unknown host, timeout, authentication, missing
 * database), always naming host:port. Integers come back as JavaScript numbers (BIGINT columns
 * hold SQLite's 64-bit integers; every value osm writes fits in a double).
 */
import pg from 'pg';
import { errors } from '../../errors.js';
import { hostPort, poolConfig, type PgTarget } from './config.js';

// int8 (BIGINT) and numeric → number, like better-sqlite3 gives them.
pg.types.setTypeParser(20, (v) => Number(v));

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** A new pool for `target` (the caller ends it). */
export function openPgPool(target: PgTarget, opts: { max?: number; connectTimeoutMs?: number } = {}): PgPool {
  const pool = new pg.Pool(poolConfig(target, opts));
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A pool client checked out with a listener for its `error` event: a client whose socket is cut
 * while checked out emits one, which would end the process if nobody heard it (the failing query
 * reports the cut). `release` hands it back, or destroys it when it failed.
 */
export async function checkout(pool: PgPool): Promise<{ client: PgClient; release: (failed?: unknown) => void }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  return {
    client,
    // `failed`: the caller saw the connection fail (destroyed too, rather than handed on).
    release: (failed?: unknown) => {
      client.off('error', onError);
      client.release(failed instanceof Error ? failed : broken);
    },
  };
}

export interface PgProbe {
  reachable: boolean;
  /** host:port probed. */
  address: string;
  /** Server version when reachable. */
  version?: string;
  /** Why it is not reachable (refused, timeout, authentication failed …). */
  cause?: string;
}

/** The cause of a connection error in words. */
export function describePgError(err: unknown): string {
  const e = err as { code?: string; message?: string };
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused (is PostgreSQL running and listening there?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case '28P01':
    case '28000':
      return `authentication failed: ${e.message}`;
    case '3D000':
      return `database does not exist: ${e.message}`;
    default:
      return e.message || String(err);
  }
}

/** Connects once and asks for the server version; never throws. */
export async function probePg(target: PgTarget, timeoutMs = 5000): Promise<PgProbe> {
  const client = new pg.Client({ ...poolConfig(target, { connectTimeoutMs: timeoutMs }) });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const r = await client.query<{ v: string }>('SHOW server_version');
    return { reachable: true, address: hostPort(target), version: r.rows[0]?.v };
  } catch (err) {
    return { reachable: false, address: hostPort(target), cause: describePgError(err) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Throws a clear "unreachable" error naming host:port and the cause when the target does not answer. */
export async function requireReachable(target: PgTarget): Promise<PgProbe> {
  const p = await probePg(target);
  if (!p.reachable) throw errors.unavailable(`PostgreSQL at ${p.address} (${target.display}) is not reachable: ${p.cause}`);
  return p;
}
