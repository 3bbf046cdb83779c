/**
 * Bulk import (assets, vulnerabilities) on PostgreSQL with the SQLite repositories' merge
 * semantics, in few round trips: the batch's candidate rows are read in one query, the batch is
 * merged in memory in input order (a row repeated within the batch merges into its first copy,
 * as the row-by-row SQLite import does), then new rows go in with one COPY (their ids drawn from
 * the table's identity sequence beforehand, so nothing has to be read back), changed rows as
 * multi-row UPDATEs, merely seen rows as one UPDATE, and field changes as multi-row INSERTs into
 * the history table. Imports of one workspace serialise on an advisory lock (the merge is a
 * read-modify-write).
 */
import type { FieldChange } from '../field-history.js';
import type { Row } from '../sql.js';
import type { UpsertResult } from '../types.js';
import { copyText } from './copy-text.js';
import type { PgDb } from './db.js';

/** Arbitrary constant: with the workspace's hash, the advisory lock of a workspace's imports. */
const IMPORT_LOCK = 0x6f736d03;
/** Rows per multi-row statement (PostgreSQL allows 65535 bind parameters per statement). */
const CHUNK = 1000;
/** Characters of COPY data handed to the connection at a time. */
const COPY_CHUNK = 256 * 1024;

export interface BulkSpec<V, R extends { id: number; updated_at: string }> {
  table: 'assets' | 'vulnerabilities';
  history: 'asset_history' | 'vuln_history';
  /** Inserted columns, named like the keys of `params` (created_at, updated_at, last_seen_at, org_uuid are added). */
  columns: readonly string[];
  /** Columns a merge rewrites on an existing row. */
  updateColumns: readonly string[];
  /**
   * Column values of a row as bound parameters: arrays as JSON text, booleans as 0/1, the rest
   * as they are — the encoding the COPY of new rows applies to the values directly (copyCell).
   */
  params(v: V): Record<string, unknown>;
  /** The values a new row is inserted with (defaults filled); identity when absent. */
  initial?(v: V): V;
  /** A new row's values as the record a later copy in the batch merges into. */
  pending(v: V): R;
  map(row: Row): R;
  merge(existing: R, incoming: V): { merged: V; changes: FieldChange[]; volatileChanged: boolean };
  /** The exact match key of an incoming row and of a stored one. */
  key(v: V): string;
  rowKey(r: R): string;
  /** The fallback match of an incoming row without an exact match (the oldest row with this key), if any. */
  fallbackKey?(v: V): string | undefined;
  rowFallbackKey?(r: R): string;
  /** The stored rows an incoming batch may match (exact and fallback candidates). */
  candidates(db: PgDb, workspace: string, values: V[]): Promise<Row[]>;
}

interface Slot<V, R> {
  /** The stored row, or undefined for a row new in this batch. */
  stored?: R;
  /** The row as merged so far; made from `values` only when a later copy merges into a new row (stateOf). */
  state?: R;
  values: V;
  changed: boolean;
  dirty: boolean;
  id?: number;
}

/** Inserts or merges `values` (already normalised and validated) into `spec.table` for `workspace`. */
export async function bulkUpsert<V, R extends { id: number; updated_at: string }>(db: PgDb, spec: BulkSpec<V, R>, workspace: string, values: V[], now: string): Promise<UpsertResult> {
  return db.tx(async () => {
    await db.query('SELECT pg_advisory_xact_lock(?, hashtext(?))', [IMPORT_LOCK, workspace]);
    const byKey = new Map<string, Slot<V, R>>();
    const byFallback = new Map<string, Slot<V, R>>();
    const rows = (await spec.candidates(db, workspace, values)).map(spec.map).sort((a, b) => a.id - b.id);
    for (const r of rows) {
      const slot: Slot<V, R> = { stored: r, state: r, values: undefined as V, changed: false, dirty: false, id: r.id };
      byKey.set(spec.rowKey(r), slot);
      const fb = spec.rowFallbackKey?.(r);
      if (fb !== undefined && !byFallback.has(fb)) byFallback.set(fb, slot);
    }
    const order: Slot<V, R>[] = [];
    const fresh: Slot<V, R>[] = [];
    const outcome: ('new' | 'updated' | 'unchanged')[] = [];
    const seen = new Set<Slot<V, R>>();
    // Field changes in the order the row-by-row import records them.
    const log: { slot: Slot<V, R>; changes: FieldChange[] }[] = [];
    for (const v of values) {
      const fb = spec.fallbackKey?.(v);
      const key = spec.key(v);
      const slot = byKey.get(key) ?? (fb !== undefined ? byFallback.get(fb) : undefined);
      if (!slot) {
        const init = spec.initial ? spec.initial(v) : v;
        const s: Slot<V, R> = { values: init, changed: false, dirty: false };
        byKey.set(key, s);
        if (fb !== undefined && !byFallback.has(fb)) byFallback.set(fb, s);
        fresh.push(s);
        seen.add(s);
        order.push(s);
        outcome.push('new');
        continue;
      }
      const state = (slot.state ??= spec.pending(slot.values));
      const { merged, changes, volatileChanged } = spec.merge(state, v);
      const changed = changes.length > 0;
      if (changed || volatileChanged) {
        slot.values = merged;
        slot.state = { ...spec.pending(merged), id: state.id, updated_at: changed ? now : state.updated_at };
        if (changes.length > 0) log.push({ slot, changes });
        slot.dirty = true;
        if (changed) slot.changed = true;
      }
      order.push(slot);
      if (changed && !seen.has(slot)) {
        seen.add(slot);
        outcome.push('updated');
      } else {
        outcome.push('unchanged');
      }
    }

    await insertFresh(db, spec, workspace, fresh, now);
    const seenOnly: number[] = [];
    const dirty: { id: number; values: Record<string, unknown>; updated_at: string }[] = [];
    for (const slot of new Set(order)) {
      if (!slot.stored) continue;
      if (slot.dirty) dirty.push({ id: slot.id!, values: spec.params(slot.values), updated_at: slot.changed ? now : slot.stored.updated_at });
      else seenOnly.push(slot.id!);
    }
    await updateMerged(db, spec, dirty, now);
    if (seenOnly.length > 0) await db.query(`UPDATE ${spec.table} SET last_seen_at = ? WHERE id = ANY(?::bigint[])`, [now, seenOnly]);
    await insertHistory(db, spec.history, workspace, log.map((h) => ({ id: h.slot.id!, changes: h.changes })), now);

    const result: UpsertResult = { new: 0, updated: 0, unchanged: 0, ids: [], newIds: [], updatedIds: [] };
    order.forEach((slot, i) => {
      const o = outcome[i]!;
      result[o]++;
      result.ids.push(slot.id!);
      if (o === 'new') result.newIds.push(slot.id!);
      if (o === 'updated') result.updatedIds.push(slot.id!);
    });
    return result;
  });
}

/**
 * One COPY of the batch's new rows (their final merged values); sets each slot's id. The ids are
 * drawn from the table's identity sequence first (in input order, as a multi-row INSERT would
 * number the rows) together with the workspace's org (migration 007), in one round trip, so the
 * COPY needs no answer but its row count. The statement triggers of migration 018 fire for COPY
 * as for INSERT.
 */
async function insertFresh<V, R extends { id: number; updated_at: string }>(db: PgDb, spec: BulkSpec<V, R>, workspace: string, fresh: Slot<V, R>[], now: string): Promise<void> {
  if (fresh.length === 0) return;
  const head = await db.one(
    `SELECT COALESCE((SELECT org_uuid FROM workspaces WHERE name = ?), '00000000-0000-0000-0000-000000000001') AS org,
       ARRAY(SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?::int)) AS ids`,
    [workspace, spec.table, fresh.length],
  );
  const ids = head!.ids as (string | number)[];
  fresh.forEach((slot, i) => (slot.id = Number(ids[i])));
  const tail = `\t${copyText(now)}\t${copyText(now)}\t${copyText(now)}\t${copyText(String(head!.org))}\n`;
  const cols = spec.columns;
  function* chunks(): Generator<string> {
    let buf = '';
    for (const slot of fresh) {
      const v = slot.values as Record<string, unknown>;
      let line = '';
      for (let c = 0; c < cols.length; c++) line += copyCell(v[cols[c]!]) + '\t';
      buf += line + slot.id + tail;
      if (buf.length >= COPY_CHUNK) {
        yield buf;
        buf = '';
      }
    }
    if (buf) yield buf;
  }
  const loaded = await db.copyFrom(`COPY ${spec.table} (${cols.join(', ')}, id, created_at, updated_at, last_seen_at, org_uuid) FROM STDIN`, chunks());
  if (loaded !== fresh.length) throw new Error(`COPY into ${spec.table} loaded ${loaded} rows of ${fresh.length}`);
}

/** A column value in the COPY text format, encoded as BulkSpec.params would bind it (arrays as JSON, booleans 0/1). */
function copyCell(x: unknown): string {
  if (typeof x === 'string') return copyText(x);
  if (typeof x === 'number') return String(x);
  if (typeof x === 'boolean') return x ? '1' : '0';
  if (x === null || x === undefined) return '\\N';
  return copyText(JSON.stringify(x));
}

/**
 * Multi-row UPDATEs of merged rows: `UPDATE … FROM (VALUES …)`, each value cast to its column's
 * type (bigint for the numbers and 0/1 flags, text for the rest), since VALUES gives untyped
 * parameters no type of their own.
 */
async function updateMerged<V, R extends { id: number; updated_at: string }>(
  db: PgDb,
  spec: BulkSpec<V, R>,
  rows: { id: number; values: Record<string, unknown>; updated_at: string }[],
  now: string,
): Promise<void> {
  if (rows.length === 0) return;
  const cols = spec.updateColumns;
  const cast = cols.map((c) => (typeof rows[0]!.values[c] === 'number' ? 'bigint' : 'text'));
  const per = Math.floor(CHUNK / 2);
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const params: unknown[] = [];
    const tuples = chunk.map((r) => {
      params.push(r.id, ...cols.map((c) => r.values[c]), r.updated_at);
      return `(?::bigint, ${cast.map((t) => `?::${t}`).join(', ')}, ?::text)`;
    });
    await db.query(
      `UPDATE ${spec.table} AS t SET ${cols.map((c) => `${c} = v.${c}`).join(', ')}, updated_at = v.updated_at, last_seen_at = ?
       FROM (VALUES ${tuples.join(', ')}) AS v(id, ${cols.join(', ')}, updated_at) WHERE t.id = v.id`,
      [now, ...params],
    );
  }
}

/** Multi-row INSERTs of field changes into asset_history / vuln_history. */
async function insertHistory(db: PgDb, table: 'asset_history' | 'vuln_history', workspace: string, list: { id: number; changes: FieldChange[] }[], now: string): Promise<void> {
  const flat = list.flatMap((h) => h.changes.map((c) => [h.id, workspace, c.field, JSON.stringify(c.old_value ?? null), JSON.stringify(c.new_value ?? null), now]));
  const idColumn = table === 'asset_history' ? 'asset_id' : 'vuln_id';
  for (let i = 0; i < flat.length; i += CHUNK) {
    const chunk = flat.slice(i, i + CHUNK);
    await db.query(`INSERT INTO ${table} (${idColumn}, workspace, field, old_value, new_value, changed_at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`, chunk.flat());
  }
}
