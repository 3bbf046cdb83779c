/** Small SQL fragments shared by the PostgreSQL migrations. */

/** The current time as osm stores it: ISO 8601 UTC text with milliseconds (`2026-01-15T10:30:00.123Z`). */
export const PG_NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A row trigger: a PL/pgSQL function `name()` running `body`, fired AFTER `event` (`INSERT`,
 * `DELETE`, `UPDATE OF a, b`) on `table`, optionally only `when` the condition holds. The trigger
 * and its function share SQLite's trigger name, so the two schemas name the same things.
 */
export function pgTrigger(name: string, table: string, event: string, body: string, when?: string): string {
  return `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  ${body}
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ${name} AFTER ${event} ON ${table} FOR EACH ROW${when ? ` WHEN (${when})` : ''} EXECUTE FUNCTION ${name}();`;
}
