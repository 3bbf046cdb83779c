/**
 * Twin of src/store/pg/migrations/018-statement-triggers.ts, which moves PostgreSQL's counters to
 * statement triggers. SQLite keeps its row triggers (each update is cheap there: no row versions),
 * so this version changes nothing on SQLite; it exists so both engines count the same versions.
 */
export const sql = /* sql */ `SELECT 1;`;
