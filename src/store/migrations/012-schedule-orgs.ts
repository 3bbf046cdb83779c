/** Schedules belong to an org (team access): a credential bound to orgs sees and manages only its orgs' schedules, whose runs are created there. */
export const sql = /* sql */ `
ALTER TABLE schedules ADD COLUMN org_uuid TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001';
CREATE INDEX idx_schedules_org ON schedules (org_uuid, created_at);
`;
