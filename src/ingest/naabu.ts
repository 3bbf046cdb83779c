/**
 * naabu JSON lines (`naabu -json -o ports.jsonl`) → assets: `{host, ip, port, protocol, tls,
 * timestamp}` per open port gives the host asset (the IP; the host name too when it is one) and a
 * `port` asset ip:port. Older naabu versions print only host/ip/port.
 */
import type { ToolImporter, ToolRow } from './tool-import.js';
import { portScanRows } from './ports.js';
import { jsonLines } from './readers.js';
import { accept, str } from './records.js';
import { classifyAsset, isIpLiteral } from './classify.js';

export const naabuImporter: ToolImporter = {
  name: 'naabu',
  input: 'JSON lines (naabu -json -o ports.jsonl)',
  maps: 'ip → ip asset with open_ports; port → port asset ip:port; host name → domain asset',
  reader: jsonLines(),
  rows(record, _raw, opts) {
    const host = str(record.host).toLowerCase();
    const ip = str(record.ip) || (isIpLiteral(host) ? host : '');
    const value = ip || host;
    const rows: ToolRow[] = portScanRows(
      { value, ip },
      [{ port: Number(record.port), protocol: str(record.protocol) || 'tcp', tunnel: record.tls === true ? 'ssl' : undefined }],
      opts.source,
    );
    if (rows.length > 0 && ip && host && host !== ip && classifyAsset(host) === 'domain') {
      rows.push({ kind: 'asset', row: accept({ asset_value: host, asset_type: 'domain', host_ip: ip, a: [ip], source: opts.source }) });
    }
    return rows;
  },
};
