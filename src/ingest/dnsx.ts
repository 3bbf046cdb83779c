/**
 * dnsx JSON lines (`dnsx -json -o dns.jsonl`) → assets: each resolved `{host, a, aaaa, cname,
 * mx, ns, txt, status_code}` is a domain asset whose `a` list holds the A records then `TYPE:value`
 * entries (the reference's dns_records), host_ip the first address. Names that did not resolve
 * (status_code other than NOERROR, or no record at all) are skipped.
 */
import type { ToolImporter } from './tool-import.js';
import { jsonLines } from './readers.js';
import { accept, reject, str } from './records.js';
import { classifyAsset } from './classify.js';

const TYPED = ['aaaa', 'cname', 'mx', 'ns', 'txt', 'ptr', 'srv', 'caa', 'soa'] as const;

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x.trim() : typeof x === 'object' && x !== null ? JSON.stringify(x) : str(x))).filter(Boolean) : [];
}

export const dnsxImporter: ToolImporter = {
  name: 'dnsx',
  input: 'JSON lines (dnsx -json -o dns.jsonl)',
  maps: 'host → domain asset (A records, then TYPE:value records; host_ip = first address)',
  reader: jsonLines(),
  rows(record, _raw, opts) {
    const host = str(record.host).toLowerCase().replace(/\.$/, '');
    if (host === '') return [{ kind: 'asset', row: reject('host: required') }];
    const status = str(record.status_code);
    if (status !== '' && status !== 'NOERROR') return [];
    const a = list(record.a);
    const records = [...a, ...TYPED.flatMap((t) => list(record[t]).map((v) => `${t.toUpperCase()}:${v}`))];
    if (records.length === 0) return [];
    const hostIp = a[0] ?? list(record.aaaa)[0] ?? '';
    const type = classifyAsset(host) === 'domain' ? 'domain' : classifyAsset(host);
    return [{ kind: 'asset', row: accept({ asset_value: host, asset_type: type, a: records, host_ip: hostIp, source: opts.source }) }];
  },
};
