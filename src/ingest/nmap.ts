/**
 * nmap XML (`-oX`, or the .xml of `-oA`) → assets: per `<host>` with open ports, a host asset
 * (its IPv4/IPv6 address; MAC addresses are ignored) listing open_ports, one `port` asset per open
 * port with the service nmap identified (name, product, version, extrainfo, tunnel, CPEs), and a
 * domain asset per dotted host name nmap reports (user-given or PTR) pointing at the address.
 */
import type { ToolImporter, ToolRow } from './tool-import.js';
import { portScanRows, type PortInfo } from './ports.js';
import { child, children, xmlElements, type XmlNode } from './readers.js';
import { accept, reject } from './records.js';
import { classifyAsset } from './classify.js';

function address(host: XmlNode): string {
  const addrs = children(host, 'address');
  const ip = addrs.find((a) => a.attrs.addrtype === 'ipv4') ?? addrs.find((a) => a.attrs.addrtype === 'ipv6');
  return (ip?.attrs.addr ?? '').trim();
}

function openPorts(host: XmlNode): PortInfo[] {
  const out: PortInfo[] = [];
  for (const p of children(child(host, 'ports'), 'port')) {
    if (child(p, 'state')?.attrs.state !== 'open') continue;
    const svc = child(p, 'service');
    out.push({
      port: Number(p.attrs.portid),
      protocol: p.attrs.protocol ?? 'tcp',
      service: svc?.attrs.name,
      product: svc?.attrs.product,
      version: svc?.attrs.version,
      extrainfo: svc?.attrs.extrainfo,
      tunnel: svc?.attrs.tunnel,
      cpe: children(svc, 'cpe').map((c) => c.text.trim()).filter(Boolean),
    });
  }
  return out;
}

export const nmapImporter: ToolImporter = {
  name: 'nmap',
  input: 'XML (nmap -oX scan.xml)',
  maps: 'host → ip asset with open_ports; open port → port asset host:port (service, product, version); host names → domain assets',
  reader: xmlElements('host'),
  rows(record, _raw, opts) {
    const host = record.node as XmlNode;
    if (child(host, 'status')?.attrs.state === 'down') return [];
    const ip = address(host);
    if (ip === '') return [{ kind: 'asset', row: reject('<host> without an IPv4/IPv6 <address>') }];
    const ports = openPorts(host);
    const rows: ToolRow[] = portScanRows({ value: ip, ip }, ports, opts.source);
    if (rows.length === 0) return rows;
    const names = new Set(children(child(host, 'hostnames'), 'hostname').map((h) => (h.attrs.name ?? '').trim().toLowerCase()));
    for (const name of names) {
      if (!name.includes('.') || classifyAsset(name) !== 'domain') continue;
      rows.push({ kind: 'asset', row: accept({ asset_value: name, asset_type: 'domain', host_ip: ip, a: [ip], source: opts.source }) });
    }
    return rows;
  },
};
