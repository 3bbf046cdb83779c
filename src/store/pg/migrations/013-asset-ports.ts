/** PostgreSQL twin of src/store/migrations/013-asset-ports.ts (same tables, columns and indexes; see ../README in migrations/index.ts). */
export const sql = /* sql */ `
ALTER TABLE assets ADD COLUMN open_ports TEXT NOT NULL DEFAULT '[]';
ALTER TABLE assets ADD COLUMN port_json_data TEXT NOT NULL DEFAULT '';
`;
