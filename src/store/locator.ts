/**
 * Where a process finds the database: the SQLite file by path, or the PostgreSQL server by URL.
 * It is what crosses a process or thread boundary (script evaluators, bridge threads) so the
 * other side opens its own connection to the same store.
 */
export type DbLocator = { engine: 'sqlite'; path: string } | { engine: 'postgresql'; url: string };

/** The SQLite locator of `path`. */
export const sqliteLocator = (path: string): DbLocator => ({ engine: 'sqlite', path });
