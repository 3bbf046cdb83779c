/**
 * Zone-style DNS lines (reference `db_import_dns_asset`): `name TYPE value` per line — also
 * dnsx's `-re` spelling `name [TYPE] [value]` — grouped per name into one domain asset (source
 * `dns`): `a` lists the A values then `TYPE:value` entries, host_ip is the first A value. Lines
 * of one name may be anywhere in the file; the groups are stored at the end of the import.
 */
import type { ToolImporter, ToolRow } from './tool-import.js';
import { textLines } from './readers.js';
import { accept, reject, str } from './records.js';
import { classifyAsset } from './classify.js';

const MAX_NAMES = 1_000_000;

export const dnsZoneImporter: ToolImporter = {
  name: 'dns',
  input: 'text lines "name TYPE value" (zone style, or dnsx -re output)',
  maps: 'name → domain asset (A values, then TYPE:value records; host_ip = first A)',
  reader: textLines(),
  rows: () => [],
  session() {
    const groups = new Map<string, { a: string[]; other: string[] }>();
    return {
      rows(record) {
        const line = str(record.line);
        if (line.startsWith(';') || line.startsWith('#')) return [];
        const parts = line.split(/\s+/).map((p) => p.replace(/^\[|\]$/g, ''));
        if (parts.length < 3) return [{ kind: 'asset', row: reject('expected "name TYPE value"') }];
        const name = parts[0]!.toLowerCase().replace(/\.$/, '');
        // Zone files may carry a TTL and class between the name and the type.
        const typeAt = parts.findIndex((p, i) => i > 0 && /^[A-Z]{1,10}$/.test(p) && p !== 'IN');
        if (typeAt < 0 || typeAt === parts.length - 1 || classifyAsset(name) !== 'domain') return [{ kind: 'asset', row: reject('expected "name TYPE value"') }];
        const type = parts[typeAt]!;
        const value = parts.slice(typeAt + 1).join(' ');
        let g = groups.get(name);
        if (!g) {
          if (groups.size >= MAX_NAMES) return [{ kind: 'asset', row: reject(`more than ${MAX_NAMES} names in one file`) }];
          groups.set(name, (g = { a: [], other: [] }));
        }
        if (type === 'A') {
          if (!g.a.includes(value)) g.a.push(value);
        } else if (!g.other.includes(`${type}:${value}`)) g.other.push(`${type}:${value}`);
        return [];
      },
      end(opts) {
        const rows: ToolRow[] = [];
        for (const [name, g] of groups) {
          rows.push({ kind: 'asset', row: accept({ asset_value: name, asset_type: 'domain', a: [...g.a, ...g.other], host_ip: g.a[0] ?? '', source: opts.source }) });
        }
        return rows;
      },
    };
  },
};
