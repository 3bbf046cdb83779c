/**
 * Writes that belong together in one PostgreSQL statement: data-modifying CTEs (`WITH a AS
 * (UPDATE …), b AS (INSERT …) SELECT …`) run every part in one statement, so a step's or run's
 * change and its event cost one round trip and need no BEGIN/COMMIT (a statement is atomic).
 * The parts are the engines' shared statements with their named parameters prefixed apart.
 */
import { EVENT_COLUMNS, eventInsertValues, EVENT_VALUES, type EventInput } from '../events.js';
import type { PgDb, QueryResult } from './db.js';

export interface Part {
  sql: string;
  values: Record<string, unknown>;
}

/** `part` with every `@name` renamed `@<prefix>name`, so parts can share one statement. */
export function prefixed(part: Part, prefix: string): Part {
  return {
    sql: part.sql.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, `@${prefix}$1`),
    values: Object.fromEntries(Object.entries(part.values).map(([k, v]) => [`${prefix}${k}`, v])),
  };
}

/** Column types of event_logs other than TEXT (parameters in a SELECT list need their type spelled out). */
const NOT_TEXT: Record<string, string> = { processed: 'BIGINT' };

/**
 * The INSERT of an event as a CTE part (parameters prefixed `e_`). With `from` (another part's
 * name), one event per row of it — none when it returned nothing; `data` then replaces the data
 * value by an SQL expression (which may read `from`'s columns and `values`, prefixed like the rest).
 */
export function eventPart(input: EventInput, from?: { name: string; data?: string; values?: Record<string, unknown> }): Part {
  const values = { ...eventInsertValues(input), ...from?.values };
  if (!from) return prefixed({ sql: `INSERT INTO event_logs (${EVENT_COLUMNS}) VALUES (${EVENT_VALUES})`, values }, 'e_');
  const columns = EVENT_COLUMNS.split(',').map((c) => c.trim());
  const select = columns.map((c) => (c === 'data' && from.data ? from.data : `CAST(@${c} AS ${NOT_TEXT[c] ?? 'TEXT'})`));
  return prefixed({ sql: `INSERT INTO event_logs (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${from.name}`, values }, 'e_');
}

/** One statement of CTE `parts` (name → part) returning the rows of `result` (one of the names). */
export function withParts(parts: [string, Part | undefined][], result: string): Part {
  const used = parts.filter((p): p is [string, Part] => p[1] !== undefined);
  return {
    sql: `WITH ${used.map(([name, p]) => `${name} AS (${p.sql})`).join(',\n')}\nSELECT * FROM ${result}`,
    values: Object.assign({}, ...used.map(([, p]) => p.values)),
  };
}

/**
 * The `verify` of a statement of CTE parts that writes an event (its part prefixed `e_`, whose
 * event id is generated here): once the row the statement changes (`table`, `id`) is free — a
 * statement the server is still finishing holds it — the statement was applied exactly when its
 * event exists; `read` then reads back what it returned.
 */
export function appliedWithEvent(db: PgDb, q: Part, table: 'runs' | 'step_results', id: number, read: () => Promise<QueryResult>): () => Promise<QueryResult | undefined> {
  return async () => {
    await db.query(`SELECT 1 FROM ${table} WHERE id = ? FOR UPDATE`, [id]);
    const hit = await db.one('SELECT 1 FROM event_logs WHERE run_id = ? AND event_id = ?', [q.values.e_run_id, q.values.e_event_id]);
    return hit ? read() : undefined;
  };
}
