/**
 * Rows of a port scan shared by nmap, masscan, naabu and port JSONL: one host asset (asset_type
 * `ip`, or `domain` for a name) listing its open ports, and one `port` asset per open port named
 * `host:port`, carrying the service details as port_json_data (and product/version as tech).
 */
import type { AssetInput } from '../store/index.js';
import { classifyAsset, isIpLiteral } from './classify.js';
import { accept, reject } from './records.js';
import type { ToolRow } from './tool-import.js';

export interface PortInfo {
  port: number;
  protocol: string;
  service?: string;
  product?: string;
  version?: string;
  extrainfo?: string;
  /** `ssl` when the service runs over TLS (nmap's tunnel attribute, naabu's tls flag). */
  tunnel?: string;
  banner?: string;
  cpe?: string[];
}

/** `host:port`, with brackets around IPv6 literals. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

function compact(p: PortInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out;
}

/** Host and per-port rows of one scanned host; `ports` are the OPEN ports only. */
export function portScanRows(host: { value: string; ip: string }, ports: PortInfo[], source: string, extra: Partial<AssetInput> = {}): ToolRow[] {
  if (host.value === '') return [{ kind: 'asset', row: reject('host: required (ip or host)') }];
  const valid = ports.filter((p) => Number.isInteger(p.port) && p.port > 0 && p.port < 65536);
  if (valid.length < ports.length) return [{ kind: 'asset', row: reject('port: must be an integer in 1-65535') }];
  if (valid.length === 0) return [];
  const ip = host.ip || (isIpLiteral(host.value) ? host.value : '');
  const label = (p: PortInfo) => `${p.port}/${p.protocol || 'tcp'}`;
  const rows: ToolRow[] = [
    {
      kind: 'asset',
      row: accept({ asset_value: host.value, asset_type: isIpLiteral(host.value) ? 'ip' : classifyAsset(host.value), host_ip: ip, open_ports: valid.map(label), source, ...extra }),
    },
  ];
  for (const p of valid) {
    const service = p.service ? (p.tunnel === 'ssl' && !p.service.startsWith('ssl') ? `ssl/${p.service}` : p.service) : '';
    const product = [p.product, p.version].filter(Boolean).join(' ');
    rows.push({
      kind: 'asset',
      row: accept({
        asset_value: hostPort(host.value, p.port),
        asset_type: 'port',
        host_ip: ip,
        open_ports: [label(p)],
        port_json_data: JSON.stringify(compact(p)),
        remarks: service,
        tech: product ? [product] : [],
        source,
      }),
    });
  }
  return rows;
}
