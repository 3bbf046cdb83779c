/**
 * masscan JSON (`-oJ`) → assets. masscan prints a JSON array one element per line — older
 * versions with a trailing comma before `]`, which is not valid JSON — so the file is read line
 * by line. Each element `{ip, timestamp, ports: [{port, proto, status, reason, ttl, service?}]}`
 * gives a host asset and `port` assets (banner grabs: service.name and service.banner).
 */
import type { ToolImporter } from './tool-import.js';
import { portScanRows, type PortInfo } from './ports.js';
import { jsonLines } from './readers.js';
import { asObject, str } from './records.js';

export const masscanImporter: ToolImporter = {
  name: 'masscan',
  input: 'JSON (masscan -oJ scan.json)',
  maps: 'ip → ip asset with open_ports; open port → port asset ip:port (banner service when grabbed)',
  reader: jsonLines({ arrayTolerant: true }),
  rows(record, _raw, opts) {
    if (record.finished !== undefined && record.ip === undefined) return [];
    const ip = str(record.ip);
    const ports: PortInfo[] = [];
    for (const p of Array.isArray(record.ports) ? record.ports : []) {
      const o = asObject(p) ?? {};
      if (o.status !== undefined && str(o.status) !== 'open') continue;
      const svc = asObject(o.service);
      ports.push({ port: Number(o.port), protocol: str(o.proto) || 'tcp', service: str(svc?.name) || undefined, banner: str(svc?.banner) || undefined });
    }
    return portScanRows({ value: ip, ip }, ports, opts.source);
  },
};
