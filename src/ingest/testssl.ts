/**
 * testssl.sh JSON (`testssl.sh --jsonfile out.json`, the flat format: an array of
 * `{id, ip: "host/ip", port, severity, finding, cve?, cwe?}`) → vulnerabilities: every check rated
 * LOW, MEDIUM, HIGH or CRITICAL is a finding on host:port (id testssl-<id>, the check's own
 * finding as evidence); OK, INFO and DEBUG checks and scanner notices (WARN, FATAL) are skipped.
 * The document is streamed, so testssl's multi-line formatting is no obstacle.
 */
import type { ToolImporter } from './tool-import.js';
import { jsonPaths } from './readers.js';
import { accept, reject, str } from './records.js';
import { hostPort } from './ports.js';

const SEVERITY: Record<string, string> = { LOW: 'low', MEDIUM: 'medium', HIGH: 'high', CRITICAL: 'critical' };

const TITLES: Record<string, string> = {
  SSLv2: 'SSLv2 offered', SSLv3: 'SSLv3 offered', TLS1: 'TLS 1.0 offered', TLS1_1: 'TLS 1.1 offered',
  cert_expirationStatus: 'Certificate expired', cert_chain_of_trust: 'Certificate chain of trust broken',
  cert_trust: 'Certificate does not match the host name', cert_signatureAlgorithm: 'Weak certificate signature algorithm',
  cert_keySize: 'Weak certificate key size', heartbleed: 'Heartbleed (CVE-2014-0160)', CCS: 'CCS injection (CVE-2014-0224)',
  ticketbleed: 'Ticketbleed (CVE-2016-9244)', ROBOT: 'ROBOT', secure_renego: 'Insecure renegotiation',
  secure_client_renego: 'Client-initiated renegotiation', CRIME_TLS: 'CRIME (TLS compression)', BREACH: 'BREACH (HTTP compression)',
  POODLE_SSL: 'POODLE (SSLv3)', fallback_SCSV: 'No TLS_FALLBACK_SCSV', SWEET32: 'SWEET32 (64-bit block ciphers)',
  FREAK: 'FREAK', DROWN: 'DROWN', LOGJAM: 'LOGJAM', BEAST: 'BEAST', LUCKY13: 'LUCKY13', RC4: 'RC4 ciphers offered',
  cipherlist_NULL: 'NULL ciphers offered', cipherlist_aNULL: 'Anonymous ciphers offered', cipherlist_EXPORT: 'Export ciphers offered',
  cipherlist_LOW: 'Low-strength ciphers offered', cipherlist_3DES_IDEA: '3DES/IDEA ciphers offered', HSTS: 'HSTS missing or weak',
};

export const testsslImporter: ToolImporter = {
  name: 'testssl',
  input: 'JSON (testssl.sh --jsonfile out.json)',
  maps: 'LOW/MEDIUM/HIGH/CRITICAL check → finding testssl-<id> on host:port (evidence = the finding text)',
  reader: jsonPaths(['$.*']),
  rows(record, raw) {
    const id = str(record.id);
    const severity = SEVERITY[str(record.severity).toUpperCase()];
    if (!severity) return [];
    if (id === '') return [{ kind: 'vuln', row: reject('id: required') }];
    const [name, ip] = str(record.ip).split('/');
    const host = (name || ip || '').trim();
    const port = Number(str(record.port));
    if (host === '' || !Number.isInteger(port) || port <= 0) return [{ kind: 'vuln', row: reject('ip and port: required') }];
    const finding = str(record.finding);
    const cve = str(record.cve).split(/\s+/).filter(Boolean);
    return [
      {
        kind: 'vuln',
        row: accept({
          vuln_info: `testssl-${id}`,
          template_id: `testssl-${id}`,
          vuln_title: TITLES[id] ?? `testssl: ${id}`,
          vuln_desc: [finding, str(record.hint)].filter(Boolean).join(' — '),
          vuln_poc: `${id}: ${finding}`,
          severity,
          confidence: 'Firm',
          asset_type: 'port',
          asset_value: hostPort(host, port),
          tags: ['tls', 'testssl', ...cve, ...(str(record.cwe) ? [str(record.cwe)] : [])],
          raw_vuln_json: raw,
        }),
      },
    ];
  },
};
