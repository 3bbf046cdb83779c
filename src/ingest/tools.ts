/**
 * The one table of tool importers: `osm import <tool>`, the `db_import_*` workflow functions and
 * docs/importers.md all read it. Adding a tool = one file with a ToolImporter + one line here.
 */
import type { ToolImporter } from './tool-import.js';
import { jsonLines } from './readers.js';
import { httpxToAsset } from './httpx.js';
import { nucleiToVuln } from './nuclei.js';
import { nmapImporter } from './nmap.js';
import { masscanImporter } from './masscan.js';
import { naabuImporter } from './naabu.js';
import { portJsonlImporter } from './port-jsonl.js';
import { ffufImporter } from './ffuf.js';
import { gobusterImporter } from './gobuster.js';
import { whatwebImporter } from './whatweb.js';
import { katanaImporter } from './katana.js';
import { subfinderImporter } from './subfinder.js';
import { dnsxImporter } from './dnsx.js';
import { dnsZoneImporter } from './dns-zone.js';
import { testsslImporter } from './testssl.js';
import { sslscanImporter } from './sslscan.js';
import { sarifImporter } from './sarif.js';

const httpxImporter: ToolImporter = {
  name: 'httpx',
  input: 'JSON lines (httpx -json -o http.jsonl)',
  maps: 'probe → asset of the host (url, status, title, tech, TLS, CDN flags; reference §3.5 mapping)',
  reader: jsonLines(),
  rows: (record, raw, opts) => [{ kind: 'asset', row: httpxToAsset(record, raw, { source: opts.source === 'httpx' ? 'web' : opts.source }) }],
};

const nucleiImporter: ToolImporter = {
  name: 'nuclei',
  input: 'JSON lines (nuclei -jsonl -o findings.jsonl)',
  maps: 'match → finding <template-id> on the host (severity, tags, matched-at as evidence)',
  reader: jsonLines(),
  rows: (record, raw) => [{ kind: 'vuln', row: nucleiToVuln(record, raw) }],
};

/** Every importer by name, in the order `osm import --help` lists them. */
export const TOOL_IMPORTERS: readonly ToolImporter[] = [
  nmapImporter, masscanImporter, naabuImporter, portJsonlImporter, subfinderImporter, dnsxImporter, dnsZoneImporter,
  httpxImporter, whatwebImporter, ffufImporter, gobusterImporter, katanaImporter, nucleiImporter, testsslImporter,
  sslscanImporter, sarifImporter,
];

/** The importer of `name` (case-insensitive; `testssl.sh` is testssl), or undefined. */
export function toolImporter(name: string): ToolImporter | undefined {
  const n = name.trim().toLowerCase().replace(/\.sh$/, '');
  return TOOL_IMPORTERS.find((t) => t.name === n);
}

/** The supported names, for error messages. */
export function toolNames(): string[] {
  return TOOL_IMPORTERS.map((t) => t.name);
}
