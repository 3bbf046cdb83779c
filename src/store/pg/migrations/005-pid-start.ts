/** PostgreSQL twin of src/store/migrations/005-pid-start.ts (same tables, columns and indexes; see ../README in migrations/index.ts). */
export const sql = /* sql */ `
ALTER TABLE runs ADD COLUMN current_pid_start TEXT NOT NULL DEFAULT '';
`;
