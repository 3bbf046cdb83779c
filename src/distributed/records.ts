/**
 * Durable attempt records (issue 15). A worker writes one `start` record when it begins an
 * attempt and one `end` record when it finishes it, into a Redis stream the master alone trims:
 * the master applies each record to its database (idempotently, keyed by run + attempt) and only
 * then deletes it. So nothing the master learns depends on BullMQ keeping a finished job
 * (`removeOnComplete` trims them), and a master that is down only delays the records.
 *
 * Fencing: the attempt number comes from an INCR on `<prefix>:attempt:<run_uuid>` done in the same
 * script that checks the worker still holds the BullMQ lock of the job; an `end` record is written
 * only while the lock is still this worker's and no newer attempt was started. A worker that lost
 * its lease therefore cannot record a late result (and the master refuses any end record older
 * than the latest attempt it knows, a second line of defence).
 */
import { z } from 'zod';
import type { RedisClient } from 'bullmq';
import { cancelKey, QUEUE_NAME } from './keys.js';
import { PROTOCOL_VERSION, taskResultSchema } from './protocol.js';
import { isSafeName } from '../util/fs-safe.js';

/** The stream of start/end records (entries removed by the master once applied). */
export function recordsKey(prefix: string): string {
  return `${prefix}:records`;
}

/** The attempt counter of one run (the fencing token). */
export function attemptKey(prefix: string, runUuid: string): string {
  return `${prefix}:attempt:${runUuid}`;
}

/** BullMQ's lock key of a job (value = the token of the worker holding it). */
export function lockKey(prefix: string, jobId: string): string {
  return `${prefix}:${QUEUE_NAME}:${jobId}:lock`;
}

/** Rows per `rows` record. */
export const ROWS_PER_RECORD = 500;
/** Rows of one table an attempt ships at most (the rest stay in the worker's database; the end record says so). */
export const MAX_SHIPPED_ROWS = 100_000;

/** How long attempt counters live after their last use (a run is not re-attempted after a month). */
const ATTEMPT_KEY_TTL_S = 30 * 24 * 3600;

export const startRecordSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  kind: z.literal('start'),
  run_uuid: z.string().uuid(),
  worker_id: z.string().max(128),
  at: z.string(),
  /** BullMQ's counters when the attempt began (hints for the cause). */
  attempts_made: z.number().int().min(0),
  stalled: z.number().int().min(0),
});

export const endRecordSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  kind: z.literal('end'),
  run_uuid: z.string().uuid(),
  worker_id: z.string().max(128),
  at: z.string(),
  /**
   * `result`: the run ended on the worker (completed, failed or cancelled workflow) and `result`
   * says how; `error`: the task failed; `handed back`: the worker stopped and gave the task back;
   * `stalled`: the worker stopped the attempt when its lease could not be confirmed in time, and
   * gave the task back.
   */
  outcome: z.enum(['result', 'error', 'handed back', 'stalled']),
  error: z.string().max(65_536).default(''),
  /** For `error`: no attempt follows (attempts exhausted, or not retryable). */
  final: z.boolean().default(false),
  result: taskResultSchema.optional(),
});

/** Data rows the attempt produced on the worker (assets, vulnerabilities), shipped in chunks before its end record. */
export const rowsRecordSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  kind: z.literal('rows'),
  run_uuid: z.string().uuid(),
  worker_id: z.string().max(128),
  at: z.string(),
  /** Order of this chunk within the attempt (0, 1, …): the master keys it by run, attempt and seq. */
  seq: z.number().int().min(0),
  table: z.enum(['assets', 'vulnerabilities']),
  workspace: z.string().min(1).max(255),
  rows: z.array(z.record(z.string(), z.unknown())).max(ROWS_PER_RECORD),
});

/** Bytes of a file per `file` record at most. */
export const FILE_CHUNK_BYTES = 256 * 1024;
/** Path components of a shipped file at most. */
const MAX_FILE_DEPTH = 32;

/**
 * True for a path a worker may ship and a master may write below a run's workspace folder:
 * relative, already normalized (no `.`/`..`/empty components, no leading or doubled slash),
 * every component a safe name (src/util/fs-safe.ts), at most 32 components and 1024 characters.
 */
export function isShippablePath(rel: string): boolean {
  if (typeof rel !== 'string' || rel.length === 0 || rel.length > 1024) return false;
  const parts = rel.split('/');
  return parts.length <= MAX_FILE_DEPTH && parts.every((p) => isSafeName(p));
}

/**
 * A chunk of a file the attempt produced on the worker (the run's log folder, its artifacts),
 * written by the master at the same path below ITS workspace folder. Keyed by run, attempt, path
 * and offset: a replayed chunk writes the same bytes at the same place.
 */
export const fileRecordSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  kind: z.literal('file'),
  run_uuid: z.string().uuid(),
  worker_id: z.string().max(128),
  at: z.string(),
  workspace: z.string().min(1).max(255),
  /** Relative to the workspace folder (see isShippablePath). */
  path: z.string().refine(isShippablePath, 'not a relative, normalized path of safe names'),
  offset: z.number().int().min(0),
  /** The bytes, base64 (at most FILE_CHUNK_BYTES decoded). */
  data: z
    .string()
    .max(Math.ceil(FILE_CHUNK_BYTES / 3) * 4)
    // Canonical base64: whole quads, padding only at the end, nothing else. Checked by decoding
    // and encoding again (native, linear): what Node's lenient decoder skips or rounds shows up
    // as a difference. A pattern over the text cost milliseconds per record on the master.
    .refine((d) => d.length % 4 === 0 && Buffer.from(d, 'base64').toString('base64') === d, 'not base64')
    .refine((d) => (d.length / 4) * 3 - (d.endsWith('==') ? 2 : d.endsWith('=') ? 1 : 0) <= FILE_CHUNK_BYTES, 'chunk larger than FILE_CHUNK_BYTES'),
  /** Last chunk of the file: the master cuts the file at offset + length. */
  eof: z.boolean(),
  /**
   * A reference, no bytes (`data` empty): the file is in object storage at
   * `<storage prefix>workspaces/<workspace>/<path>`; the master drops a stale copy of its own at
   * that path so its downloads serve the stored one.
   */
  stored: z.boolean().optional(),
});

export type StartRecord = z.infer<typeof startRecordSchema>;
export type FileRecord = z.infer<typeof fileRecordSchema>;
export type RowsRecord = z.infer<typeof rowsRecordSchema>;
export type EndRecord = z.infer<typeof endRecordSchema>;
export type AttemptRecordMsg = (StartRecord | EndRecord | RowsRecord | FileRecord) & { attempt: number };

const recordSchema = z.discriminatedUnion('kind', [startRecordSchema, endRecordSchema, rowsRecordSchema, fileRecordSchema]);

/**
 * KEYS: lock, attempt counter, stream, cancellation flag. ARGV: token, record JSON, ttl.
 * → { attempt number (0 without the lock), the lock's time to live, 1 when the run is flagged cancelled }.
 */
const START_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return { 0, 0, 0 } end
local n = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('XADD', KEYS[3], '*', 'attempt', n, 'rec', ARGV[2])
local flagged = 0
if redis.call('EXISTS', KEYS[4]) == 1 then flagged = 1 end
return { n, redis.call('PTTL', KEYS[1]), flagged }
`;

/** KEYS: lock, attempt counter, stream. ARGV: token, attempt, record JSON. → 1 written, 0 refused (lease lost or superseded). */
const END_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('XADD', KEYS[3], '*', 'attempt', ARGV[2], 'rec', ARGV[3])
return 1
`;

/** KEYS: lock, attempt counter, stream. ARGV: token, attempt, record JSON… → 1 all written, 0 none (lease lost or superseded). */
const MANY_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
for i = 3, #ARGV do redis.call('XADD', KEYS[3], '*', 'attempt', ARGV[2], 'rec', ARGV[i]) end
return 1
`;

/** KEYS: stream. ARGV: count. */
const READ_SCRIPT = `return redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', ARGV[1])`;
/** KEYS: stream. ARGV: ids. */
const DEL_SCRIPT = `return redis.call('XDEL', KEYS[1], unpack(ARGV))`;
/** KEYS: lock. → { holder or false, remaining ms (-2 gone, -1 no expiry) }, read atomically. */
const LOCK_SCRIPT = `return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }`;

const defined = new WeakSet<object>();

/** BullMQ's client abstraction runs Lua through named commands: define ours once per client. */
function withCommands(client: RedisClient): RedisClient {
  if (defined.has(client)) return client;
  client.defineCommand('osmAttemptStart', { numberOfKeys: 4, lua: START_SCRIPT });
  client.defineCommand('osmAttemptEnd', { numberOfKeys: 3, lua: END_SCRIPT });
  client.defineCommand('osmAttemptMany', { numberOfKeys: 3, lua: MANY_SCRIPT });
  client.defineCommand('osmRecordsRead', { numberOfKeys: 1, lua: READ_SCRIPT, readOnly: true });
  client.defineCommand('osmRecordsDel', { numberOfKeys: 1, lua: DEL_SCRIPT });
  client.defineCommand('osmLockRead', { numberOfKeys: 1, lua: LOCK_SCRIPT, readOnly: true });
  defined.add(client);
  return client;
}

/**
 * Starts an attempt: its number (0 when this worker does not hold the job's lock), the lock's
 * remaining time to live when the attempt was taken (ms; the lease's first confirmation) and
 * whether the run was cancelled on the master already (its flag, read in the same call).
 */
export async function recordStart(client: RedisClient, prefix: string, token: string, rec: StartRecord): Promise<{ attempt: number; lockTtlMs: number; cancelled: boolean }> {
  const [n, ttl, flagged] = (await withCommands(client).runCommand('osmAttemptStart', [lockKey(prefix, rec.run_uuid), attemptKey(prefix, rec.run_uuid), recordsKey(prefix), cancelKey(prefix, rec.run_uuid), token, JSON.stringify(rec), String(ATTEMPT_KEY_TTL_S)])) as [number, number, number];
  return { attempt: Number(n), lockTtlMs: Number(ttl), cancelled: Number(flagged) === 1 };
}

/** Ends an attempt (or ships a chunk of its rows or files): false when refused (the lease was lost or a newer attempt started). */
export async function recordEnd(client: RedisClient, prefix: string, token: string, attempt: number, rec: EndRecord | RowsRecord | FileRecord): Promise<boolean> {
  const ok = await withCommands(client).runCommand('osmAttemptEnd', [lockKey(prefix, rec.run_uuid), attemptKey(prefix, rec.run_uuid), recordsKey(prefix), token, String(attempt), JSON.stringify(rec)]);
  return Number(ok) === 1;
}

/**
 * Several records of one attempt (chunks of its files or rows, and its end last) in one round
 * trip, fenced like recordEnd and written all or none, in order. False when refused.
 */
export async function recordMany(client: RedisClient, prefix: string, token: string, attempt: number, recs: (RowsRecord | FileRecord | EndRecord)[]): Promise<boolean> {
  if (recs.length === 0) return true;
  const runUuid = recs[0]!.run_uuid;
  if (recs.some((r) => r.run_uuid !== runUuid)) throw new Error('recordMany: records of one run only');
  const ok = await withCommands(client).runCommand('osmAttemptMany', [lockKey(prefix, runUuid), attemptKey(prefix, runUuid), recordsKey(prefix), token, String(attempt), ...recs.map((r) => JSON.stringify(r))]);
  return Number(ok) === 1;
}

/** Up to `count` pending records, oldest first, with their stream ids; unreadable ones are returned as `invalid`. */
export async function readRecords(
  client: RedisClient,
  prefix: string,
  count: number,
): Promise<{ id: string; record?: AttemptRecordMsg; invalid?: string }[]> {
  const entries = (await withCommands(client).runCommand('osmRecordsRead', [recordsKey(prefix), String(count)])) as [string, string[]][];
  return entries.map(([id, fields]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    try {
      const parsed = recordSchema.safeParse(JSON.parse(f.rec ?? ''));
      const attempt = Number(f.attempt);
      if (!parsed.success || !Number.isInteger(attempt) || attempt < 1) return { id, invalid: parsed.success ? 'bad attempt number' : parsed.error.message };
      return { id, record: { ...parsed.data, attempt } };
    } catch (err) {
      return { id, invalid: (err as Error).message };
    }
  });
}

/** Removes applied records. */
export async function ackRecords(client: RedisClient, prefix: string, ids: string[]): Promise<void> {
  if (ids.length > 0) await withCommands(client).runCommand('osmRecordsDel', [recordsKey(prefix), ...ids]);
}

/** A job lock's holder (token) and its remaining time to live in ms (≤ 0 when gone or without expiry). */
export async function readLock(client: RedisClient, prefix: string, runUuid: string): Promise<{ holder: string | null; ttlMs: number }> {
  const [holder, ttl] = (await withCommands(client).runCommand('osmLockRead', [lockKey(prefix, runUuid)])) as [string | null | false, number];
  return { holder: typeof holder === 'string' ? holder : null, ttlMs: Number(ttl) };
}
