/** What a record mapper answers: the row to upsert, or why the record was rejected. */
export type Mapped<T> = { ok: true; value: T } | { ok: false; message: string; skip?: boolean };

/** A mapped row. */
export function accept<T>(value: T): Mapped<T> {
  return { ok: true, value };
}

/** A rejected record with its reason. */
export function reject<T>(message: string): Mapped<T> {
  return { ok: false, message };
}

/** A record deliberately not imported (e.g. another record type of an envelope stream); not an error. */
export function skip<T>(message: string): Mapped<T> {
  return { ok: false, message, skip: true };
}

/** A plain JSON object (not null, not an array), or undefined. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A trimmed string field ('' for anything that is not a string or number). */
export function str(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/** Parses one JSONL line into an object, or the reason it is not one. */
export function parseJsonLine(text: string): Mapped<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return reject(`invalid JSON: ${(err as Error).message}`);
  }
  const obj = asObject(value);
  return obj ? accept(obj) : reject('not a JSON object');
}
