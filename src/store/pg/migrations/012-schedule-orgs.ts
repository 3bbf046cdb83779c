/** PostgreSQL twin of src/store/migrations/012-schedule-orgs.ts (same tables, columns and indexes; see ../README in migrations/index.ts). */
export const sql = /* sql */ `
ALTER TABLE schedules ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001';
CREATE INDEX idx_schedules_org ON schedules (org_uuid, created_at);
`;
