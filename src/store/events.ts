/** The `event_logs` table: every event the engine, scheduler or API recorded. */
import { randomUUID } from 'node:crypto';
import { bit, listPage, nowIso, Where, type Db, type Row, type StatementCache } from './sql.js';
import type { ListResult, Page } from './types.js';
import { inWorkspacesOf, type OrgFilter } from './org-constants.js';

export interface EventRecord {
  id: number;
  topic: string;
  event_id: string;
  name: string;
  source: string;
  source_type: string;
  data_type: string;
  /** JSON text (the spec exposes it as a string). */
  data: string;
  workspace: string;
  run_id: string;
  workflow_name: string;
  processed: boolean;
  processed_at: string | null;
  error: string;
  created_at: string;
}

export interface EventInput {
  topic: string;
  name?: string;
  source?: string;
  source_type?: string;
  data_type?: string;
  /** Strings are stored as given; anything else is JSON-stringified. */
  data?: unknown;
  workspace?: string;
  run_id?: string;
  workflow_name?: string;
  processed?: boolean;
  error?: string;
}

/** An event recorded elsewhere (a distributed worker), imported with its own id and time. */
export interface EventImport {
  topic: string;
  event_id: string;
  name: string;
  source: string;
  source_type: string;
  data_type: string;
  data: string;
  workspace: string;
  workflow_name: string;
  processed: boolean;
  error: string;
  created_at: string;
}

export interface EventListFilter {
  topic?: string;
  name?: string;
  source?: string;
  workspace?: string;
  run_id?: string;
  workflow_name?: string;
  processed?: boolean;
  /** created_at bounds (ISO timestamps, inclusive). */
  from?: string;
  to?: string;
  /** Only events of workspaces of these orgs (events without a workspace are left out). */
  org_uuid?: OrgFilter;
}

export interface EventsRepo {
  /** Records an event with a fresh event_id. */
  insert(input: EventInput): EventRecord;
  /** Records events with fresh event_ids, in order, in as few statements as the engine allows (bulk imports); answers how many. */
  insertMany(inputs: EventInput[]): number;
  get(id: number): EventRecord | undefined;
  /** Filtered page, newest first (id DESC). */
  list(filter: EventListFilter, page: Page): ListResult<EventRecord>;
  /** Marks an event processed now, keeping the delivery error if any. */
  markProcessed(id: number, error?: string): void;
  /** Oldest unprocessed events first, for replay at start-up. */
  listUnprocessed(limit: number): EventRecord[];
  /** Events with id > afterId, oldest first (the scheduler's tail of the log; primary-key range scan). */
  listAfter(afterId: number, limit: number): EventRecord[];
  /** The highest event id (0 when empty). */
  maxId(): number;
  /** Imports a run's events recorded elsewhere, skipping event_ids already stored for that run (idempotent). */
  importForRun(runUuid: string, events: EventImport[]): number;
}

/** Maps an event_logs row to its record. */
export function mapEvent(row: Row): EventRecord {
  return { ...(row as unknown as EventRecord), processed: row.processed === 1 };
}

const EVENT_FIELDS = ['topic', 'event_id', 'name', 'source', 'source_type', 'data_type', 'data', 'workspace', 'run_id', 'workflow_name', 'processed', 'processed_at', 'error', 'created_at'] as const;
/** The parameters of `inputs` for eventInsertManySql. */
export function eventInsertManyParams(inputs: EventInput[]): unknown[] {
  return inputs.flatMap((e) => {
    const v = eventInsertValues(e);
    return EVENT_FIELDS.map((f) => v[f]);
  });
}
/** The columns an event INSERT writes, and their named values (eventInsertValues); shared with the PostgreSQL run writes. */
export const EVENT_COLUMNS = EVENT_FIELDS.join(', ');
export const EVENT_VALUES = EVENT_FIELDS.map((f) => `@${f}`).join(', ');

/** The INSERT of `insert` (named parameters from eventInsertValues); dialect-neutral. */
export const EVENT_INSERT_SQL = `INSERT INTO event_logs (${EVENT_COLUMNS}) VALUES (${EVENT_VALUES}) RETURNING *`;
/** The multi-row INSERT of `insertMany` for `n` events (`?` parameters: EVENT_FIELDS of eventInsertValues, event by event). */
export function eventInsertManySql(n: number): string {
  const tuple = `(${EVENT_FIELDS.map(() => '?').join(', ')})`;
  return `INSERT INTO event_logs (${EVENT_FIELDS.join(', ')}) VALUES ${Array.from({ length: n }, () => tuple).join(', ')}`;
}
/** The INSERT of `importForRun` (named parameters from eventImportValues) and of SQLite's `insertMany` (eventInsertValues). */
export const EVENT_IMPORT_SQL = `INSERT INTO event_logs (${EVENT_COLUMNS}) VALUES (${EVENT_VALUES})`;

/** The column values of a new event. */
export function eventInsertValues(input: EventInput): Record<string, unknown> {
  const now = nowIso();
  const data = input.data === undefined ? '{}' : typeof input.data === 'string' ? input.data : JSON.stringify(input.data);
  return {
    topic: input.topic,
    event_id: randomUUID(),
    name: input.name ?? '',
    source: input.source ?? '',
    source_type: input.source_type ?? '',
    data_type: input.data_type ?? '',
    data: data ?? 'null',
    workspace: input.workspace ?? '',
    run_id: input.run_id ?? '',
    workflow_name: input.workflow_name ?? '',
    processed: bit(input.processed),
    processed_at: input.processed ? now : null,
    error: input.error ?? '',
    created_at: now,
  };
}

/** The column values of an event imported for run `runUuid`. */
export function eventImportValues(runUuid: string, e: EventImport): Record<string, unknown> {
  return {
    topic: e.topic,
    event_id: e.event_id,
    name: e.name,
    source: e.source,
    source_type: e.source_type,
    data_type: e.data_type,
    data: e.data,
    workspace: e.workspace,
    run_id: runUuid,
    workflow_name: e.workflow_name,
    processed: bit(e.processed),
    processed_at: e.processed ? nowIso() : null,
    error: e.error,
    created_at: e.created_at || nowIso(),
  };
}

/** The filters of `list` (dialect-neutral). */
export function eventListWhere(filter: EventListFilter): Where {
  const where = new Where()
    .eq('topic', filter.topic)
    .eq('name', filter.name)
    .eq('source', filter.source)
    .eq('workspace', filter.workspace)
    .eq('run_id', filter.run_id)
    .eq('workflow_name', filter.workflow_name);
  if (filter.processed !== undefined) where.add('processed = ?', bit(filter.processed));
  if (filter.from) where.add('created_at >= ?', filter.from);
  if (filter.to) where.add('created_at <= ?', filter.to);
  if (filter.org_uuid !== undefined) inWorkspacesOf(where, 'workspace', filter.org_uuid);
  return where;
}

/** Creates the event log repository on one connection. */
export function createEventsRepo(db: Db, q: StatementCache): EventsRepo {
  return {
    insert(input) {
      return mapEvent(q(EVENT_INSERT_SQL).get(eventInsertValues(input)) as Row);
    },

    insertMany(inputs) {
      const st = q(EVENT_IMPORT_SQL);
      for (const e of inputs) st.run(eventInsertValues(e));
      return inputs.length;
    },

    get(id) {
      const row = q('SELECT * FROM event_logs WHERE id = ?').get(id) as Row | undefined;
      return row ? mapEvent(row) : undefined;
    },

    list(filter, page) {
      const where = eventListWhere(filter);
      return listPage(db, q, { table: 'event_logs', where, orderBy: 'id DESC', map: mapEvent }, page);
    },

    markProcessed(id, error) {
      q('UPDATE event_logs SET processed = 1, processed_at = ?, error = ? WHERE id = ?').run(nowIso(), error ?? '', id);
    },

    listUnprocessed(limit) {
      return (q('SELECT * FROM event_logs WHERE processed = 0 ORDER BY id ASC LIMIT ?').all(Math.max(0, Math.trunc(limit))) as Row[]).map(
        mapEvent,
      );
    },

    listAfter(afterId, limit) {
      return (q('SELECT * FROM event_logs WHERE id > ? ORDER BY id ASC LIMIT ?').all(Math.trunc(afterId), Math.max(0, Math.trunc(limit))) as Row[]).map(mapEvent);
    },

    importForRun(runUuid, events) {
      return db
        .transaction(() => {
          const known = new Set((q('SELECT event_id FROM event_logs WHERE run_id = ?').all(runUuid) as { event_id: string }[]).map((r) => r.event_id));
          let inserted = 0;
          for (const e of events) {
            if (!e.event_id || known.has(e.event_id)) continue;
            known.add(e.event_id);
            q(EVENT_IMPORT_SQL).run(eventImportValues(runUuid, e));
            inserted++;
          }
          return inserted;
        })
        .immediate();
    },

    maxId() {
      return Number((q('SELECT MAX(id) AS m FROM event_logs').get() as { m: number | null }).m ?? 0);
    },
  };
}
