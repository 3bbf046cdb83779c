/**
 * Port JSONL (the output of the `nmap_to_jsonl` function, reference `db_import_port_assets`):
 * `{asset_value, host_ip, open_ports: ["80/tcp"], ports: {"80": {protocol, state, service,
 * product, version, service_info}}}` per host → the host asset (with port_json_data = the ports
 * object, as the reference stores it) and a `port` asset per open port.
 */
import type { ToolImporter, ToolRow } from './tool-import.js';
import { portScanRows, type PortInfo } from './ports.js';
import { jsonLines } from './readers.js';
import { asObject, str } from './records.js';

export const portJsonlImporter: ToolImporter = {
  name: 'ports',
  input: 'JSON lines of nmap_to_jsonl (one host per line with open_ports and ports)',
  maps: 'host → asset with open_ports and port_json_data; open port → port asset host:port',
  reader: jsonLines(),
  rows(record, _raw, opts) {
    const value = str(record.asset_value) || str(record.host_ip) || str(record.ip);
    const details = asObject(record.ports) ?? {};
    const open = new Set((Array.isArray(record.open_ports) ? record.open_ports : []).map(str).filter(Boolean));
    const ports: PortInfo[] = [];
    for (const label of open) {
      const [id, proto] = label.split('/');
      const d = asObject(details[id ?? '']) ?? {};
      ports.push({
        port: Number(id),
        protocol: proto || str(d.protocol) || 'tcp',
        service: str(d.service) || undefined,
        product: str(d.product) || undefined,
        version: str(d.version) || undefined,
        extrainfo: str(d.service_info) || undefined,
      });
    }
    const rows: ToolRow[] = portScanRows({ value, ip: str(record.host_ip) }, ports, opts.source === 'ports' ? 'portscan' : opts.source);
    const host = rows[0];
    if (host?.kind === 'asset' && host.row.ok && Object.keys(details).length > 0) host.row.value.port_json_data = JSON.stringify(details);
    return rows;
  },
};
