/**
 * The reference's port columns on assets (server-api §3.5): `open_ports`, a JSON list such as
 * `["80/tcp"]`, and `port_json_data`, the service details of a port-scan record. Port scanners
 * (nmap, masscan, naabu) and db_import_port_assets fill them.
 */
export const sql = /* sql */ `
ALTER TABLE assets ADD COLUMN open_ports TEXT NOT NULL DEFAULT '[]';
ALTER TABLE assets ADD COLUMN port_json_data TEXT NOT NULL DEFAULT '';
`;
