/**
 * The PostgreSQL query layer the repositories share: `?` and `@name` placeholders (the SQLite
 * repositories' style) turned into `$n`, queries of a transaction routed to its pool client
 * through AsyncLocalStorage, and connection-level failures mapped to one typed error
 * (`errors.unavailable`, HTTP 503) naming the server.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFromStdin } from 'pg-copy-streams';
import { errors, OsmError } from '../../errors.js';
import { checkout, describePgError, type PgClient, type PgPool } from './pool.js';
import { withoutNulChars, type Row } from '../sql.js';
import { currentPatience } from '../patience.js';

/** `?` placeholders → `$1, $2 …` (osm's SQL carries no `?` inside string literals). */
export function positional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * The parameters with NUL characters dropped from their strings: PostgreSQL's text cannot hold
 * them ("invalid byte sequence for encoding UTF8: 0x00"), and a step output, an event or a
 * shipped row from a tool that printed one must not fail its write (on a fleet's master, a write
 * that always fails would hold up every record after it). The array is copied only when needed.
 */
export function withoutNul(params: readonly unknown[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (typeof v === 'string' && v.includes('\u0000')) {
      out ??= [...params];
      out[i] = withoutNulChars(v);
    }
  }
  return out ?? (params as unknown[]);
}

/** `@name` placeholders → `$n` (one number per distinct name) and the values in that order. */
export function named(sql: string, values: Record<string, unknown>): { text: string; params: unknown[] } {
  const index = new Map<string, number>();
  const params: unknown[] = [];
  const text = sql.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    let i = index.get(name);
    if (i === undefined) {
      if (!(name in values)) throw new Error(`no value for @${name}`);
      params.push(values[name]);
      i = params.length;
      index.set(name, i);
    }
    return `$${i}`;
  });
  return { text, params };
}

/** SQLSTATE classes and socket codes that mean "the database is not there", not "the query is wrong". */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300']);

/** Whether `err` is a lost or refused connection (the server down, restarting or unreachable). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e?.code && (CONNECTION_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  return /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection closed/i.test(e?.message ?? '');
}

/**
 * Whether the server itself answered a statement with "terminating connection" at a point where
 * it checks for interrupts (an operator's fast shutdown or restart, `pg_terminate_backend`): the
 * backend then aborts the statement's transaction before it ends the session, so a statement
 * outside a transaction that gets this answer was not applied and can be sent again. An immediate
 * shutdown or a crash restart (`quickdie`, which can strike after a commit and before its answer)
 * and a socket cut off mid-statement (ECONNRESET, "Connection terminated") tell nothing of the kind.
 */
export function abortedByServer(err: unknown): boolean {
  const e = err as { code?: string; severity?: string; routine?: string };
  return e?.code === '57P01' && e.severity === 'FATAL' && e.routine === 'ProcessInterrupts';
}

/**
 * Whether a statement only reads: a SELECT or WITH without any data-modifying keyword (a row
 * lock, `FOR UPDATE`, changes nothing). A CTE that writes (`WITH s AS (UPDATE …) SELECT * FROM s`)
 * is a write, however it ends.
 */
export function isReadOnly(text: string): boolean {
  return /^\s*(SELECT|WITH)\b/i.test(text) && !/\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|COPY)\b/i.test(text.replace(/\bFOR\s+(NO\s+KEY\s+)?UPDATE\b/gi, ''));
}

export interface QueryResult {
  rows: Row[];
  rowCount: number;
}

/**
 * What a write outside a transaction tells the query layer about itself, so that a run's write
 * whose outcome is unknown (the connection was lost after the statement was sent: an immediate
 * shutdown or crash restart of the server, a socket cut off) can still be completed exactly once.
 */
export interface WriteOpts {
  /** Sending the statement twice has the effect of sending it once (an upsert, a plain SET): it is sent again. */
  idempotent?: boolean;
  /**
   * Reads whether the statement was applied: what it returned (read back) when it was, undefined
   * when it was not, and it is then sent again. Called only after the connection was lost with
   * the statement sent; it should first wait for the rows the statement locks (`FOR UPDATE`), so
   * that a statement the server is still finishing is not taken as never applied.
   */
  verify?: () => Promise<QueryResult | undefined>;
}

export interface PgDb {
  /** Runs one statement with `?` placeholders (inside the current transaction when there is one). */
  query(sql: string, params?: readonly unknown[], opts?: WriteOpts): Promise<QueryResult>;
  /** Runs one statement with `@name` placeholders. */
  queryNamed(sql: string, values: Record<string, unknown>, opts?: WriteOpts): Promise<QueryResult>;
  /** The first row, or undefined. */
  one(sql: string, params?: readonly unknown[]): Promise<Row | undefined>;
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * Streams `chunks` (rows in the COPY text format, ./copy-text.ts) into `COPY … FROM STDIN`;
   * answers the rows loaded. Only inside a transaction (a failed COPY leaves nothing behind).
   */
  copyFrom(sql: string, chunks: Iterable<string>): Promise<number>;
  /** Runs `fn` in a transaction on one pool client; joins the current one when already inside. */
  tx<T>(fn: () => Promise<T>, opts?: { readOnlySnapshot?: boolean }): Promise<T>;
  /** Whether the current async context is inside a transaction. */
  inTx(): boolean;
  /** Runs `fn` outside any transaction of the current async context (work it starts, timers included, stays outside). */
  outsideTx<T>(fn: () => T): T;
  close(): Promise<void>;
}

/** The query layer over `pool`; `where` (host:port) names the server in unavailability errors. */
/** Distinct statement texts prepared per pool (dynamic texts beyond it run unprepared). */
const MAX_PREPARED = 500;
/** Texts seen once, remembered until a second sighting prepares them (forgotten in bulk past this). */
const MAX_SEEN = 2000;

export function pgDb(pool: PgPool, where: string, opts: { retryMs?: number; prepare?: boolean } = {}): PgDb {
  const current = new AsyncLocalStorage<PgClient>();

  const fail = (err: unknown): never => {
    if (err instanceof OsmError) throw err;
    if (isConnectionError(err)) throw errors.unavailable(`PostgreSQL at ${where} is unavailable: ${describePgError(err)}`);
    throw err;
  };

  /**
   * Retries `attempt` while the database is unreachable and the work is known not to have been
   * applied (`safe` says so for the failure at hand), waiting 100 ms doubling to 2 s, for at most
   * `opts.retryMs` (0: no retry). A database that blinks (restart, failover) is waited for; one
   * that stays away ends in `errors.unavailable` (503).
   */
  const retrying = async <T>(attempt: () => Promise<T>, safe: (err: unknown) => boolean, verify?: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + Math.max(currentPatience(), opts.retryMs ?? 0);
    for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
      try {
        return await attempt();
      } catch (err) {
        const lost = isConnectionError(err) || (err instanceof OsmError && err.code === 'OSM_ERR_UNAVAILABLE');
        const known = safe(err);
        if (!lost || !(known || verify) || Date.now() + wait > deadline) throw err;
        await new Promise((r) => setTimeout(r, wait));
        if (known) continue;
        // Sent, outcome unknown: read whether it was applied (the reads wait for the database
        // within the same window); when it was not, it is sent again.
        let applied: T | undefined;
        try {
          applied = await verify!();
        } catch {
          throw err;
        }
        if (applied !== undefined) return applied;
      }
    }
  };

  // Statements the server keeps parsed and planned per connection (named prepared statements):
  // a text seen a second time gets a name, up to MAX_PREPARED texts; the rest go unnamed, and so
  // do one-off texts (an ad-hoc read-only query is not kept on every connection). Measured on
  // 200 runs × 5 steps: the server's CPU fell by a quarter. OSM_PG_PREPARE=0 turns it off (a
  // pooler in transaction mode that does not carry prepared statements, e.g. pgbouncer < 1.21).
  const prepare = opts.prepare ?? process.env.OSM_PG_PREPARE !== '0';
  const names = new Map<string, string>();
  const seenOnce = new Set<string>();
  let prepared = 0;
  const config = (text: string, params: readonly unknown[]) => {
    let name = names.get(text);
    if (name === undefined && prepare && names.size < MAX_PREPARED) {
      if (seenOnce.delete(text)) {
        name = `osm_${++prepared}`;
        names.set(text, name);
      } else {
        if (seenOnce.size >= MAX_SEEN) seenOnce.clear();
        seenOnce.add(text);
      }
    }
    return { text, values: withoutNul(params), ...(name ? { name } : {}) };
  };
  /**
   * A prepared `SELECT *` whose table gained or lost columns since (a newer osm migrated the
   * database) fails once per connection with "cached plan must not change result type": the text
   * gets a new name, so every connection prepares it again.
   */
  const stalePlan = (err: unknown, text: string): boolean => {
    const e = err as { code?: string; message?: string };
    if (e?.code !== '0A000' || !/cached plan must not change result type/.test(e.message ?? '') || !names.has(text)) return false;
    names.set(text, `osm_${++prepared}`);
    return true;
  };
  const query = async (conn: PgClient, text: string, params: readonly unknown[]) => {
    try {
      return await conn.query<Row>(config(text, params));
    } catch (err) {
      // Inside a transaction the failed statement has aborted it: the caller's retry decides.
      if (!stalePlan(err, text) || current.getStore()) throw err;
      return conn.query<Row>(config(text, params));
    }
  };

  const run = async (text: string, params: readonly unknown[], writeOpts: WriteOpts = {}): Promise<QueryResult> => {
    const client = current.getStore();
    try {
      if (client) {
        const r = await query(client, text, params);
        return { rows: r.rows, rowCount: r.rowCount ?? 0 };
      }
      // Outside a transaction: a failed connect never ran the statement, a read can always be
      // repeated, and a write the server aborted while shutting down was not applied; a write
      // whose connection was cut off mid-way may have been applied, so it is repeated only when
      // that changes nothing (idempotent) or after `verify` found it was not applied.
      const reading = isReadOnly(text);
      return await retrying(async () => {
        let conn: Awaited<ReturnType<typeof checkout>>;
        try {
          conn = await checkout(pool);
        } catch (err) {
          throw Object.assign(err as object, { osmNotSent: true });
        }
        let broken: unknown;
        try {
          const r = await query(conn.client, text, params);
          return { rows: r.rows, rowCount: r.rowCount ?? 0 };
        } catch (err) {
          if (isConnectionError(err)) broken = err;
          throw err;
        } finally {
          conn.release(broken);
        }
      }, (err) => reading || writeOpts.idempotent === true || (err as { osmNotSent?: boolean }).osmNotSent === true || abortedByServer(err), writeOpts.verify);
    } catch (err) {
      return fail(err);
    }
  };

  /** One transaction on one pool client. */
  const once = async <T>(fn: () => Promise<T>, txOpts: { readOnlySnapshot?: boolean }): Promise<T> => {
    const { client, release } = await checkout(pool);
    let broken: unknown;
    let commitSent = false;
    try {
      await client.query(txOpts.readOnlySnapshot ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN');
      const result = await current.run(client, fn);
      commitSent = true;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (!commitSent) await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
      else if (isConnectionError(err)) broken = err;
      // A statement of `fn` that lost the connection was already mapped to 'unavailable'.
      if (!commitSent && err instanceof OsmError && err.code === 'OSM_ERR_UNAVAILABLE') broken = err;
      if (commitSent && err && typeof err === 'object') Object.assign(err, { osmCommitSent: true });
      throw err;
    } finally {
      // A client whose connection failed is destroyed rather than handed to the next caller.
      release(broken);
    }
  };

  const db: PgDb = {
    query: (sql, params = [], writeOpts) => run(positional(sql), params, writeOpts),
    queryNamed: (sql, values, writeOpts) => {
      const { text, params } = named(sql, values);
      return run(text, params, writeOpts);
    },
    one: async (sql, params = []) => (await run(positional(sql), params)).rows[0],
    all: async (sql, params = []) => (await run(positional(sql), params)).rows,
    inTx: () => current.getStore() !== undefined,
    outsideTx: (fn) => current.exit(fn),
    async copyFrom(sql, chunks) {
      const client = current.getStore();
      if (!client) throw new Error('copyFrom runs inside a transaction');
      try {
        const stream = client.query(copyFromStdin(sql));
        await pipeline(Readable.from(chunks), stream);
        return stream.rowCount;
      } catch (err) {
        return fail(err);
      }
    },
    async tx<T>(fn: () => Promise<T>, txOpts: { readOnlySnapshot?: boolean } = {}): Promise<T> {
      if (current.getStore()) return fn();
      try {
        // A transaction cut off before its COMMIT was sent was rolled back by the server: it is
        // run again from the start. One cut off during COMMIT may have committed: not repeated.
        return await retrying(() => once(fn, txOpts), (err) => (err as { osmCommitSent?: boolean }).osmCommitSent !== true);
      } catch (err) {
        return fail(err);
      }
    },
    close: () => pool.end(),
  };
  return db;
}
